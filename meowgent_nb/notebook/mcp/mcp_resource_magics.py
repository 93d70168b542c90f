"""MCP servers' resources and prompts: ``%tools mcp resources|prompts|complete``, and `cell_turn`.

`cell_turn` resolves ``%%agent --attach`` / ``--prompt`` and servers' instructions into a cell's
request, reading everything before the cell changes anything, so a failure leaves the
conversation as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...mcp.client.resources import argument_list, context_block, context_text
from ...mcp.client.toolbox import McpServerError, McpToolbox
from ...protocols.prompt import DEFAULT_SYSTEM
from ...tools.core import Tool
from ...tools.output import counted

if TYPE_CHECKING:
    from ..magics.session import NotebookSession

__all__ = [
    "CellTurn",
    "cell_turn",
    "complete_listing",
    "prompts_listing",
    "resources_listing",
    "system_prompt",
]

_SHOWN_DESCRIPTION = 80


@dataclass(frozen=True)
class CellTurn:
    """What a ``%%agent`` cell sends besides the conversation so far."""

    prompt: str
    """The new user turn: attached resources' blocks, then the prompt's last user message and
    the cell's text."""
    before: list[dict[str, str]] = field(default_factory=list)
    """A server prompt's earlier messages, added to the conversation before the turn."""


def connected_boxes(session: NotebookSession) -> list[McpToolbox]:
    """Every open `McpToolbox` of the session: added with ``%tools mcp add``, or made in the notebook."""
    found: dict[int, McpToolbox] = {}
    candidates = [
        *session.mcp_servers.values(),
        *session.toolboxes,
        *session.shell.user_ns.values(),
    ]
    for box in candidates:
        if isinstance(box, McpToolbox) and box.connected:
            found.setdefault(id(box), box)
    return list(found.values())


def cell_turn(session: NotebookSession, args: Any, text: str) -> CellTurn:
    """The cell's turn with ``--attach`` and ``--prompt`` resolved; reads every resource first.

    Raises:
        UsageError: A URI no connected server has, a read that failed, an unknown prompt or
            server, a missing or unknown argument, or nothing to send.
    """
    before: list[dict[str, str]] = []
    turn = text
    if args.prompt:
        before, turn = _prompt_turn(session, args.prompt, text)
    blocks = [block for uri in _uris(args.attach) for block in _attached(session, uri)]
    if not turn.strip():
        raise UsageError("%%agent: the cell is empty; write the prompt below the %%agent line.")
    return CellTurn("\n\n".join([*blocks, turn]), before)


def system_prompt(session: NotebookSession, tools: Iterable[Tool]) -> str | None:
    """The system prompt with the instructions of servers that asked for them
    (``use_instructions``) and whose tools the cell offers; None when there are none."""
    offered = {id(t) for t in tools}
    blocks = [
        box.instructions_block()
        for box in connected_boxes(session)
        if box.use_instructions and box.instructions and any(id(t) in offered for t in box)
    ]
    return "\n\n".join([DEFAULT_SYSTEM, *blocks]) if blocks else None


def _uris(values: list[str] | None) -> list[str]:
    return [uri.strip() for value in values or [] for uri in value.split(",") if uri.strip()]


def _attached(session: NotebookSession, uri: str) -> list[str]:
    boxes = connected_boxes(session)
    if not boxes:
        raise UsageError(
            f"%%agent --attach {uri}: no MCP server is connected; add one with %tools mcp add NAME -- COMMAND ARGS..."
        )
    try:
        owner = next((box for box in boxes if box.owns(uri)), None)
        if owner is None:
            names = ", ".join(box.name for box in boxes)
            raise UsageError(
                f"%%agent --attach {uri}: no connected MCP server has this resource (connected: {names});"
                " %tools mcp resources lists theirs."
            )
        contents = owner.contents(uri)
    except McpServerError as error:
        raise UsageError(
            f"%%agent --attach {uri}: {error}; %tools mcp resources lists what the servers have."
        ) from None
    if not contents:
        raise UsageError(f"%%agent --attach {uri}: the MCP server {owner.name!r} gave no content for it.")
    limit = session.settings.attach_max_chars
    return [context_block(uri, context_text(content, limit)) for content in contents]


def _prompt_turn(session: NotebookSession, words: list[str], text: str) -> tuple[list[dict[str, str]], str]:
    reference, *pairs = words
    server, _, name = reference.partition("/")
    box = _box(session, server, f"%%agent --prompt {reference}")
    if not name:
        raise UsageError(
            f"%%agent --prompt {reference}: write SERVER/NAME, e.g. {server}/{_first_prompt(box)}."
        )
    arguments = {}
    for pair in pairs:
        key, equals, value = _unquoted(pair).partition("=")
        if not equals or not key:
            raise UsageError(
                f"%%agent --prompt {reference}: write the prompt's arguments as key=value, got {pair!r}."
            )
        arguments[key] = value
    try:
        messages = box.prompt(name, **arguments)
    except (ValueError, McpServerError) as error:
        raise UsageError(f"%%agent --prompt {reference}: {error}") from None
    if messages and messages[-1]["role"] == "user":
        last = messages.pop()["content"]
        return messages, "\n\n".join(part for part in (last, text) if part.strip())
    if not text.strip():
        ending = "ends with the assistant's message" if messages else "has no messages"
        raise UsageError(
            f"%%agent --prompt {reference}: the prompt {ending}; write your turn below the %%agent line."
        )
    return messages, text


def _unquoted(value: str) -> str:
    """``"style=bullet points"`` -> ``style=bullet points``: a magic's line is split like a shell
    line, but its quotes are kept (IPython's ``arg_split`` is not POSIX there)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _box(session: NotebookSession, server: str, what: str) -> McpToolbox:
    boxes = {box.name: box for box in connected_boxes(session)}
    if server not in boxes:
        known = ", ".join(boxes) or "none is connected (add one with %tools mcp add)"
        raise UsageError(f"{what}: no connected MCP server named {server!r}; the servers: {known}.")
    return boxes[server]


def _first_prompt(box: McpToolbox) -> str:
    prompts = box.prompts()
    return prompts[0].name if prompts else "NAME"


# --- %tools mcp resources | prompts | complete -------------------------------------------------


def resources_listing(session: NotebookSession, rest: list[str]) -> str:
    """``%tools mcp resources [NAME]``: each server's resources, then its templates."""
    blocks = []
    for box in _chosen(session, rest, "resources"):
        resources, templates = box.resources(), box.resource_templates()
        rows = [
            (str(r.uri), r.title or r.name, r.mime_type or "-", _one_line(r.description)) for r in resources
        ]
        rows += [
            (t.uri_template, t.title or t.name, t.mime_type or "-", _one_line(t.description))
            for t in templates
        ]
        head = f"{box.name}: {_count(len(resources), 'resource')}, {_count(len(templates), 'template')}"
        lines = _table(rows)
        if templates:
            lines.insert(len(resources), "  templates (read with box.read(TEMPLATE, name=value)):")
        blocks.append("\n".join([head, *lines]))
    return "\n".join(blocks)


def prompts_listing(session: NotebookSession, rest: list[str]) -> str:
    """``%tools mcp prompts [NAME]``: each server's prompts with their arguments."""
    blocks = []
    for box in _chosen(session, rest, "prompts"):
        prompts = box.prompts()
        rows = [
            (
                p.name,
                argument_list(list(p.arguments or [])),
                _one_line(": ".join(filter(None, [p.title, p.description]))),
            )
            for p in prompts
        ]
        head = f"{box.name}: {_count(len(prompts), 'prompt')}"
        if prompts:
            head += f" (start a cell with one: %%agent --prompt {box.name}/NAME key=value ...)"
        blocks.append("\n".join([head, *_table(rows)]))
    return "\n".join(blocks)


def complete_listing(session: NotebookSession, rest: list[str]) -> str:
    """``%tools mcp complete SERVER/PROMPT ARG [VALUE]`` (or ``SERVER/TEMPLATE``): the server's suggestions."""
    if len(rest) not in (2, 3) or "/" not in rest[0]:
        raise UsageError(
            "%tools mcp complete: use %tools mcp complete SERVER/PROMPT ARGUMENT [TYPED]"
            " (or SERVER/TEMPLATE, e.g. notes/notes://note/{name} name gr)."
        )
    server, _, reference = rest[0].partition("/")
    box = _box(session, server, f"%tools mcp complete {rest[0]}")
    where: dict[str, Any] = {"template": reference} if "{" in reference else {"prompt": reference}
    try:
        values = box.complete(rest[1], rest[2] if len(rest) == 3 else "", **where)
    except McpServerError as error:
        raise UsageError(f"%tools mcp complete {rest[0]}: {error}") from None
    return "\n".join(values) or "(no suggestions)"


def _chosen(session: NotebookSession, rest: list[str], what: str) -> list[McpToolbox]:
    if len(rest) > 1:
        raise UsageError(f"%tools mcp {what}: use %tools mcp {what} [NAME]")
    if rest:
        return [_box(session, rest[0], f"%tools mcp {what} {rest[0]}")]
    boxes = connected_boxes(session)
    if not boxes:
        raise UsageError(
            f"%tools mcp {what}: no MCP server is connected; add one with %tools mcp add NAME -- COMMAND ARGS..."
        )
    return boxes


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    """``rows`` as aligned columns (two spaces apart), indented, without trailing spaces."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def _one_line(text: str | None) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= _SHOWN_DESCRIPTION else text[: _SHOWN_DESCRIPTION - 1] + "…"


def _count(number: int, noun: str) -> str:
    return counted(number, noun) if number else f"no {noun}s"
