"""``%tools mcp log NAME``: the last log messages of an MCP server, as a table (`LogView`).

Messages are a server's text: shown with their hidden characters visible, escaped, and cut. The
arrival time is in the HTML only, so the text/plain nbval compares is the same on every run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..._html import MUTED, escape
from ..._visible import visible, visible_html
from ...mcp.client.progress import LogEntry

__all__ = ["LogView"]

_SHOWN = 500  # characters of a message shown
_CELL = 'style="text-align: left; vertical-align: top"'


class LogView:
    """A server's log messages, shown in a notebook (``text/plain`` and ``text/html``).

    Args:
        server: The server's name.
        level: The least severe level the box keeps.
        entries: The messages, oldest first.
    """

    def __init__(self, server: str, level: str, entries: Sequence[LogEntry]):
        self.server, self.level, self.entries = server, level, tuple(entries)

    def _title(self) -> str:
        count = len(self.entries)
        what = f"{count} log message{'s' * (count != 1)}" if count else "no log messages yet"
        return f"{self.server}: {what} (level {self.level} and above; the last 200 are kept)"

    def to_text(self) -> str:
        lines = [self._title()]
        level_width = max((len(e.level) for e in self.entries), default=0)
        logger_width = max((len(visible(e.logger or "")) for e in self.entries), default=0)
        for entry in self.entries:
            text = visible(_shown(entry.text)).replace("\n", "\n    ")
            logger = visible(entry.logger or "")
            lines.append(f"  {entry.level:<{level_width}}  {logger:<{logger_width}}  {text}".rstrip())
        return "\n".join(lines)

    def to_html(self) -> str:
        title = f'<div class="meowgent-mcp-log-title" style="{MUTED}">{escape(self._title())}</div>'
        if not self.entries:
            return title
        head = "".join(f"<th {_CELL}>{name}</th>" for name in ("time", "level", "logger", "message"))
        rows = "".join(
            f"<tr><td {_CELL}>{time.strftime('%H:%M:%S', time.localtime(entry.time))}</td>"
            f"<td {_CELL}>{escape(entry.level)}</td>"
            f"<td {_CELL}><code>{visible_html(entry.logger or '')}</code></td>"
            f'<td {_CELL}><pre style="white-space: pre-wrap; margin: 0">{visible_html(_shown(entry.text))}</pre></td>'
            "</tr>"
            for entry in self.entries
        )
        table = f'<table class="meowgent-mcp-log"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        return title + table

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "\u2026"
