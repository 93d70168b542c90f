"""Deciding without asking, and what every notebook approver shares.

`PolicyApprover` applies ``allow`` or ``deny`` and shows each decision; `headless_policy` is the
one ``MEOWGENT_APPROVE`` names, followed by the interactive approvers when `is_headless`.
`shows_widgets` tells whether the frontend can show buttons; `AsksForServers` is what all
approvers do when an MCP server asks during a call; the request's text and HTML are here too.
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import warnings
from collections.abc import Sequence
from typing import Literal

from ..._visible import visible, visible_html
from ...agent.approvals import (
    ApprovalRequest,
    Approved,
    DecidedBy,
    Decision,
    Denied,
    needs_person,
    policy_denial,
)
from ...agent.running_call import RunningCall
from ...errors import SettingsError
from ...mcp.client.asking import ElicitAnswer, ElicitRequest, SamplingReview
from ...mcp.client.progress import Progress
from ...mcp.client.tool import McpTool
from ...policy import current_policy
from .._kernel import is_headless, running_kernel, running_shell
from .._setting_words import OLD_APPROVALS, approval_word
from .._shown_run import SHOWN_RUN
from ..mcp import server_asks

__all__ = ["HEADLESS_DENIAL", "PolicyApprover", "headless_policy", "is_headless", "shows_widgets"]

HEADLESS_DENIAL = "no person to approve (headless run)"
"""What the model is told (after "Denied: ") when a headless run denies a call."""

POLICIES = ("allow", "deny")
"""The approval settings under which no one is asked: what would ask runs, or is denied."""
_ENV = "MEOWGENT_APPROVE"
_VALUE_LIMIT = 60  # characters of one argument's repr in the one-line form of a call


def shows_widgets() -> bool:
    """Whether the frontend of the running cell can show widgets (buttons, a Stop button).

    True when the execute request carries a ``cellId`` (JupyterLab, Notebook 7, VS Code; terminal
    frontends send none); ``MEOWGENT_WIDGETS=1`` or ``0`` overrides. False outside a kernel and
    in headless runs.
    """
    kernel = running_kernel()
    if kernel is None or is_headless() or importlib.util.find_spec("ipywidgets") is None:
        return False
    forced = os.environ.get("MEOWGENT_WIDGETS", "").strip().lower()
    if forced in ("1", "yes", "true", "0", "no", "false"):
        return forced in ("1", "yes", "true")
    parent = kernel.get_parent("shell") or {}
    return bool(parent.get("metadata", {}).get("cellId"))


def nobody_to_ask() -> str | None:
    """Why no person can answer a server's form here, or None when one can click in this cell."""
    if is_headless():
        return "no person to answer (headless run)"
    if not shows_widgets():
        return "this frontend shows no widgets, so no one can be asked here"
    return None


class AsksForServers:
    """What a notebook approver does when an MCP server asks during a call (`notebook.mcp.server_asks`).

    It shows the form or sampling request where a person can click and declines where no one can.
    """

    timeout: float = 600.0

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        return await server_asks.elicit(request, self.timeout, nobody_to_ask())

    async def review_sampling(self, review: SamplingReview) -> tuple[bool, str]:
        return await server_asks.review_sampling(review, self.timeout, nobody_to_ask())

    def tell(self, running: RunningCall, text: str) -> None:
        server_asks.tell(running, text)

    def progress(self, running: RunningCall, progress: Progress) -> None:
        server_asks.progress(running, progress)


class PolicyApprover(AsksForServers):
    """Decides without asking, and shows each call with the decision and why.

    The policy is about tool calls: an MCP server's form or sampling request is still shown to a
    person who can click.

    Args:
        mode: ``"allow"`` approves every call but those of an ``approval="always"`` tool (only a
            person or a rule runs those); ``"deny"`` denies every call (old spellings warn).
        reason: Why this policy applies, shown with the decision (e.g. "MEOWGENT_APPROVE=deny").

    Raises:
        SettingsError: Another mode.
    """

    def __init__(self, mode: Literal["allow", "deny"], reason: str, denial: str = HEADLESS_DENIAL):
        chosen: str = OLD_APPROVALS.get(mode, mode)
        if chosen != mode:
            message = f"PolicyApprover({mode!r}) is deprecated; write PolicyApprover({chosen!r})"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
        if chosen not in POLICIES:
            raise SettingsError(f"PolicyApprover mode must be 'allow' or 'deny', got {mode!r}")
        self.mode = chosen
        """``"allow"`` or ``"deny"``."""
        self.reason = reason
        self.denial = denial
        """What the model is told when a call is denied ("Denied: {denial}")."""

    @property
    def _by(self) -> DecidedBy:
        return DecidedBy("policy", f"policy: {self.reason}")

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        decisions = [self._decision(request) for request in requests]
        if SHOWN_RUN.get() is not None:  # a %%agent cell: each call's card says what was decided
            return decisions
        outcomes = [self._outcome(decision) for decision in decisions]
        rows = "".join(row_html(r, html.escape(o)) for r, o in zip(requests, outcomes))
        text = requests_text(requests, outcomes)
        show({"text/html": f"<div>{header_html(len(requests))}{rows}</div>", "text/plain": text})
        return decisions

    @property
    def decides_alone(self) -> str:
        """``"allow"`` or ``"deny"``: it decides without asking anyone (a site's policy may refuse "allow")."""
        return self.mode

    def _decision(self, request: ApprovalRequest) -> Decision:
        """The policy's decision; a call of an ``approval="always"`` tool it never approves: it is
        denied as the agent would deny a policy's approval of it (`policy_denial`)."""
        if self.mode == "deny":
            return Denied(self.denial, f"by policy: {self.reason}", self._by)
        approved = Approved(f"approved by policy: {self.reason}", by=self._by)
        return policy_denial(request.tool, approved, self) if needs_person(request.tool) else approved

    def _outcome(self, decision: Decision) -> str:
        if isinstance(decision, Approved):
            return f"approved ({self.reason})"
        if self.mode == "deny":
            return f"denied ({self.reason})"
        return f"not approved ({self.reason}): {decision.message}"

    def __repr__(self) -> str:
        return f"PolicyApprover({self.mode!r}, {self.reason!r})"


def headless_policy() -> PolicyApprover:
    """The approver for calls no rule decided in a headless run, from ``MEOWGENT_APPROVE``.

    ``allow`` runs them; ``deny``, ``rules`` or unset deny them.

    Raises:
        SettingsError: ``MEOWGENT_APPROVE`` is another word.
        PolicyError: It is looser than the site's policy allows.
    """
    value = approval_word((os.environ.get(_ENV) or "deny").strip().lower(), f"{_ENV}={{}}")
    policy = current_policy()
    policy.check(policy.approval_refusal(value, f"{_ENV}={value}"))
    if value == "rules":  # only the rules run calls that ask: the rest are denied, as when it is unset
        return PolicyApprover("deny", f"{_ENV}=rules: no rule allows it")
    if value not in POLICIES:
        raise SettingsError(
            f"{_ENV}={os.environ[_ENV]!r} is not a policy for headless runs; set {_ENV}=allow"
            f" (run the calls), {_ENV}=deny (deny them; the default) or {_ENV}=rules (only the"
            " approval rules run calls that ask; the same as deny)."
        )
    return PolicyApprover(value, f"{_ENV}={value}")  # type: ignore[arg-type]


def show(bundle: dict[str, str]) -> None:
    if running_shell() is None:
        print(bundle["text/plain"])  # a plain script: display() would print the dict
        return
    from IPython.display import display

    display(bundle, raw=True)


def call_text(request: ApprovalRequest, limit: int | None = _VALUE_LIMIT) -> str:
    parts = []
    for name, value in request.arguments.items():
        text = repr(value)
        if limit is not None and len(text) > limit:
            text = text[: limit - 1] + "…"
        parts.append(f"{name}={text}")
    title = tool_title(request)
    shown = f"{request.tool.name}({', '.join(parts)})" + (f" ({title})" if title else "")
    return visible(shown)  # what a person approves: nothing hidden


def tool_title(request: ApprovalRequest) -> str | None:
    """The tool's title for people (an MCP server's ``title``), shown beside its name; or None."""
    title = request.tool.title if isinstance(request.tool, McpTool) else None
    return title if isinstance(title, str) and title else None


def requests_text(requests: Sequence[ApprovalRequest], outcomes: Sequence[str]) -> str:
    return "\n".join(f"Approval needed: {call_text(r)} -> {o}" for r, o in zip(requests, outcomes))


def header_html(count: int, note: str = "") -> str:
    calls = "1 call" if count == 1 else f"{count} calls"
    return f"<b>Approval needed</b> for {calls}.{html.escape(note)}"


def row_html(request: ApprovalRequest, outcome_html: str) -> str:
    arguments = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False, default=repr)
    decided = f"<div>&rarr; <b>{outcome_html}</b></div>" if outcome_html else ""
    title = tool_title(request)
    titled = f" {visible_html(title)}" if title else ""
    return (
        f"<div style='margin-top:0.5em'><code>{visible_html(request.tool.name)}</code>{titled}"
        f"<pre style='margin:0.2em 0'>{visible_html(arguments)}</pre>{decided}</div>"
    )
