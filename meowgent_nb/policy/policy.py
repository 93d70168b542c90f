"""`Policy`: what a site's policy files say together, each value with the file it came from.

Files are combined by the strictest limit, so a file added later can only tighten: the loosest
approval allowed is the strictest any file sets, the backends allowed those every file allows, the
largest tool time limit the smallest, and a permission any file withholds is withheld. Defaults
(and ``[local] shared``) come from the most site-wide file that sets them, and never pass a limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from ..errors import SettingsError
from .levels import APPROVALS, BACKENDS, looser

__all__ = ["Policy", "PolicyError", "Secret", "Sourced", "combine"]

T = TypeVar("T")


class PolicyError(SettingsError):
    """A policy file cannot be used, or a setting passes the site's policy; the message names the
    policy file and its key, and says what is allowed."""


class Secret:
    """A server's key: its repr and str are ``***``; `reveal` gives it to the client that sends it."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        """The key itself."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A policy value and where it was set."""

    value: T
    file: str
    """The policy file's path."""
    key: str
    """The key as written in the file: ``[limits] approve``."""

    @property
    def where(self) -> str:
        """``the policy /etc/jupyter/meowgent_nb/policy.toml ([limits] approve = "ask")``."""
        shown = "***" if isinstance(self.value, Secret) else _toml_value(self.value)
        return f"the policy {self.file} ({self.key} = {shown})"


@dataclass(frozen=True, kw_only=True)
class Policy:
    """The policy a process follows; every field None when no file sets it.

    Build it with `load_policy` (or `current_policy`, read once per process).
    """

    files: tuple[str, ...] = ()
    """The policy files that apply, most site-wide first."""
    looked: tuple[str, ...] = ()
    """Where policy files were looked for, most site-wide first."""
    model: Sourced[str] | None = None
    """``[defaults] model``: the model spec a kernel starts with."""
    server_url: Sourced[str] | None = None
    """``[defaults] server_url``: the OpenAI-compatible server ``openai:NAME`` models use."""
    ollama_host: Sourced[str] | None = None
    """``[defaults] ollama_host``: the Ollama server Ollama models use."""
    api_key: Sourced[Secret] | None = None
    """``[defaults] api_key``: the key for `server_url` (never shown)."""
    api_key_env: Sourced[str] | None = None
    """``[defaults] api_key_env``: the environment variable holding the key for `server_url`."""
    approve: Sourced[str] | None = None
    """``[defaults] approve``: the approval setting a kernel starts with."""
    tool_timeout: Sourced[float] | None = None
    """``[defaults] tool_timeout``: seconds a call may take unless its tool sets its own."""
    max_turns: Sourced[int] | None = None
    """``[defaults] max_turns``: model requests per cell."""
    approve_limit: Sourced[str] | None = None
    """``[limits] approve``: the loosest approval setting allowed."""
    backends: Sourced[tuple[str, ...]] | None = None
    """``[limits] backends``: the backends allowed."""
    max_tool_timeout: Sourced[float] | None = None
    """``[limits] tool_timeout``: the largest tool time limit allowed (and no None)."""
    always_tool_rules: Sourced[bool] | None = None
    """``[limits] allow_rules_on_always_tools``: False: no allow rule decides a call of an
    ``approval="always"`` tool; a person is asked instead."""
    trust_rules_files: Sourced[bool] | None = None
    """``[limits] trust_rules_files``: False: no folder's rules file is trusted."""
    shared_local: Sourced[bool] | None = None
    """``[local] shared``: the kernels of one machine share one embedded model process."""

    @property
    def applies(self) -> bool:
        """Whether any policy file applies."""
        return bool(self.files)

    def server_key(self) -> Secret | None:
        """The key for `server_url`: the environment variable `api_key_env` names, else `api_key`."""
        if self.api_key_env is not None and os.environ.get(self.api_key_env.value):
            return Secret(os.environ[self.api_key_env.value])
        return self.api_key.value if self.api_key is not None else None

    def approval_refusal(self, mode: str, setting: str) -> str | None:
        """Why the approval setting ``mode`` (written as ``setting``, e.g. ``MEOWGENT_APPROVE=allow``)
        passes the policy, in one line; None when it does not."""
        limit = self.approve_limit
        if limit is None or mode not in APPROVALS or not looser(mode, limit.value):
            return None
        allowed = ", ".join(APPROVALS[APPROVALS.index(limit.value) :])
        return (
            f"{setting} is refused by {limit.where}: approval may not be looser than {limit.value!r};"
            f" use one of {allowed}."
        )

    def timeout_refusal(self, seconds: float | None, setting: str) -> str | None:
        """Why the tool time limit ``seconds`` passes the policy, in one line; None when it does not."""
        limit = self.max_tool_timeout
        if limit is None or (seconds is not None and seconds <= limit.value):
            return None
        return f"{setting} is refused by {limit.where}: give a tool time limit of at most {limit.value:g} s."

    def backend_refusal(self, backend: str, spec: str) -> str | None:
        """Why the model ``spec`` (of ``backend``: ollama, openai or local) is not allowed, in one
        line; None when it is."""
        allowed = self.backends
        if allowed is None or backend in allowed.value:
            return None
        names = {
            "ollama": "an Ollama server",
            "openai": "an OpenAI-compatible server",
            "local": "the embedded model",
        }
        uses = ", ".join(names[b] for b in allowed.value) or "no backend"
        return (
            f"The model {spec!r} ({names[backend]}) is refused by {allowed.where}: this site allows {uses}."
        )

    def check(self, refusal: str | None) -> None:
        """Raise a refusal from the methods above.

        Raises:
            PolicyError: ``refusal`` is not None.
        """
        if refusal is not None:
            raise PolicyError(refusal)

    def __repr__(self) -> str:
        return f"Policy(files={list(self.files)!r})" if self.applies else "Policy(no file applies)"


_FIELDS = {  # (table, key) -> Policy field; how files combine is `combine`'s
    ("defaults", "model"): "model",
    ("defaults", "server_url"): "server_url",
    ("defaults", "ollama_host"): "ollama_host",
    ("defaults", "api_key"): "api_key",
    ("defaults", "api_key_env"): "api_key_env",
    ("defaults", "approve"): "approve",
    ("defaults", "tool_timeout"): "tool_timeout",
    ("defaults", "max_turns"): "max_turns",
    ("limits", "approve"): "approve_limit",
    ("limits", "backends"): "backends",
    ("limits", "tool_timeout"): "max_tool_timeout",
    ("limits", "allow_rules_on_always_tools"): "always_tool_rules",
    ("limits", "trust_rules_files"): "trust_rules_files",
    ("local", "shared"): "shared_local",
}


def combine(files: list[tuple[str, dict[str, dict[str, Any]]]], looked: tuple[str, ...] = ()) -> Policy:
    """One `Policy` from valid files' tables, most site-wide first (see the module's docstring).

    Args:
        files: Each file's path and its tables (``{"limits": {"approve": "ask"}, ...}``), keys unset
            left out; ``api_key`` as a `Secret`.
        looked: Where files were looked for.
    """
    values: dict[str, Sourced[Any]] = {}
    for path, tables in files:
        for (table, key), name in _FIELDS.items():
            if tables.get(table, {}).get(key) is None:
                continue
            value = tables[table][key]
            new = Sourced(tuple(value) if isinstance(value, list) else value, path, f"[{table}] {key}")
            old = values.get(name)
            values[name] = new if old is None else _stricter(name, old, new)
    policy = Policy(files=tuple(path for path, _ in files), looked=looked, **values)
    return _within_limits(policy)


def _stricter(name: str, old: Sourced[Any], new: Sourced[Any]) -> Sourced[Any]:
    if name == "approve_limit":
        return new if looser(old.value, new.value) else old
    if name == "backends":
        kept = tuple(b for b in BACKENDS if b in old.value and b in new.value)
        return old if kept == old.value else Sourced(kept, new.file, new.key)
    if name == "max_tool_timeout":
        return new if new.value < old.value else old
    if name in ("always_tool_rules", "trust_rules_files"):
        return new if old.value and not new.value else old
    return old  # a default: the most site-wide file's


def _within_limits(policy: Policy) -> Policy:
    """Defaults that pass a limit become the limit (a person may not start looser than allowed)."""
    approve, limit = policy.approve, policy.approve_limit
    if limit is not None and (approve is None or looser(approve.value, limit.value)):
        # Without a default, a kernel starts at its own default ("ask"), or at the limit if stricter.
        if approve is not None or looser("ask", limit.value):
            policy = replace(policy, approve=limit)
    timeout, largest = policy.tool_timeout, policy.max_tool_timeout
    if largest is not None and (timeout is None or timeout.value > largest.value):
        if timeout is not None or largest.value < 30.0:  # 30 s: Agent's own default
            policy = replace(policy, tool_timeout=largest)
    return policy


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)
