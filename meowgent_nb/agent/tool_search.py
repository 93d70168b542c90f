"""Many tools: show the model a ``search_tools`` tool and describe only the tools it finds.

A small model picks worse among many described tools, and every described tool costs prompt
tokens on every request (`benchmarks/tool_tokens.py`, `benchmarks/many_tools.py`). With
`Agent(tool_search=...)` on, the model is shown ``search_tools`` (and the tools pinned with
``always_show``) and one line saying how many tools there are. ``search_tools(query)`` returns
the best matches (`meowgent_nb.tools.search.ToolIndex`) as the same compact XML the system prompt
uses, so the model reads them in the form it reads every tool.

The system prompt never changes: the found tools' descriptions arrive in the tool result, so a
model server's prompt cache stays valid. From then on the found tools are in the turn's offered
list (the call grammar of a backend that constrains arguments, the names a fenced call may
name; for ``native``, the ``tools=`` list, which the backend's chat template renders near the
start of the prompt: each search that finds a new tool makes that backend read the whole prompt
again once). The found tools are read back from the conversation (the ``search_tools`` results
in it), so a conversation carried into a new `Agent`, as ``%%agent`` does per cell, keeps them.

Every offered tool can be called, found or not: search decides what is *described*, not what is
allowed (the person offered all of them; approval and validation apply as to any call). A model
that names an existing tool it has not searched for (the person named it, or it was found in an
earlier conversation) gets it run, or a validation error that says what the arguments should be;
a made-up name stays ``unknown_tool``, with a hint to search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from ..tools.calls import ToolResultsMessage
from ..tools.core import Tool
from ..tools.render import render_tools_xml
from ..tools.search import SEARCH_TOOL, ToolIndex

__all__ = ["AUTO_THRESHOLD", "SEARCH_RESULTS", "SEARCH_TOOL", "ToolSearch", "search_wanted"]

AUTO_THRESHOLD = 20
"""``tool_search="auto"`` turns search on when more tools than this are offered. A default, not a
measurement: `benchmarks/many_tools.py` on the embedded 0.5B model (3 tool cases) did not show
where accuracy falls; 100 described tools (8.4k tokens) no longer fit its default context."""
SEARCH_RESULTS = 5
"""The most tools one search describes."""
_NAMES_LISTED = 10  # tool names a search that found nothing lists
_QUERY_SHOWN = 80  # characters of the query repeated in the result

# A search_tools result: the name attribute of each <tool> in it (names are [A-Za-z0-9_.-]).
_FOUND_NAME = re.compile(r'<tool name="([A-Za-z0-9_.-]+)"')
_XML_RESULT = re.compile(r'<tool_response name="search_tools">\n(.*?)\n</tool_response>', re.DOTALL)


def search_wanted(setting: bool | str | None, count: int) -> bool:
    """Whether ``tool_search=setting`` turns search on for ``count`` offered tools."""
    if setting is None or setting == "auto":
        return count > AUTO_THRESHOLD
    return bool(setting)


class ToolSearch:
    """The ``search_tools`` tool over ``tools``, and which tools a conversation has found.

    Args:
        tools: Every tool the model may call (those offered this run).
        pinned: Names of tools always described in the system prompt, in this order.
        limit: The most tools one search describes.
        max_chars: The most characters a result may have (the agent cuts longer tool output);
            the descriptions that fit are kept whole, and the result says how many were left out.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        pinned: Iterable[str] = (),
        limit: int = SEARCH_RESULTS,
        max_chars: int | None = None,
    ):
        self.tools = list(tools)
        pinned = set(pinned)
        self.pinned = [t for t in self.tools if t.name in pinned]
        self.limit = limit
        self.max_chars = max_chars
        self._by_name = {t.name: t for t in self.tools}
        self._index = ToolIndex(self.tools)
        self.tool = _search_tool(self)

    def notice(self) -> str:
        """The line of the system prompt that says how many tools there are and how to find them."""
        others = len(self.tools) - len(self.pinned)
        shown = f" besides {', '.join(t.name for t in self.pinned)}" if self.pinned else ""
        return (
            f"There are {others} more tools{shown} that are not described here. To use one, first call"
            f" {SEARCH_TOOL} with a few words about what it should do; it describes the best matches,"
            " which you can then call."
        )

    def shown(self) -> list[Tool]:
        """The tools the system prompt describes: ``search_tools`` and the pinned ones."""
        return [self.tool, *self.pinned]

    def offered(self, messages: Iterable[dict[str, Any]]) -> list[Tool]:
        """This turn's offered tools: `shown` and then those the searches in ``messages`` found."""
        found = [self._by_name[name] for name in found_names(messages) if name in self._by_name]
        pinned = {t.name for t in self.pinned}
        return [*self.shown(), *(t for t in found if t.name not in pinned)]

    def search(self, query: str) -> str:
        """What ``search_tools(query)`` returns: the matches' XML, or what to try instead."""
        if not query.strip():
            raise ValueError("the query is empty; give a few words about what the tool should do.")
        shown = query if len(query) <= _QUERY_SHOWN else query[:_QUERY_SHOWN] + "..."
        matches = [t for t in self._index.search(query, self.limit) if t not in self.pinned]
        if not matches:
            names = ", ".join(t.name for t in self.tools[:_NAMES_LISTED])
            more = f" (of {len(self.tools)})" if len(self.tools) > _NAMES_LISTED else ""
            return (
                f"No tool matches {shown!r}. Some of the tools{more}: {names}. Search again with other words."
            )
        kept = list(matches)
        while True:
            head = f"Tools matching {shown!r}:"
            tail = "Call one of them if it fits, or search again with other words."
            if len(kept) < len(matches):
                tail = f"{len(matches) - len(kept)} more matched but did not fit; search with more precise words."
            text = f"{head}\n{render_tools_xml(kept).rstrip()}\n{tail}"
            if self.max_chars is None or len(text) <= self.max_chars or len(kept) == 1:
                return text
            kept.pop()


def found_names(messages: Iterable[dict[str, Any]]) -> list[str]:
    """The tool names in the ``search_tools`` results of ``messages``, first found first.

    Results are read as the protocols record them: a ``tool`` message named ``search_tools``
    (``native``), or ``<tool_response name="search_tools">`` blocks (``xml``, ``json``) in a
    `ToolResultsMessage`; the same text in the person's prompt (or a server's) finds nothing.
    """
    names: dict[str, None] = {}
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            continue
        if message.get("role") == "tool":
            parts = [content] if message.get("tool_name") == SEARCH_TOOL else []
        elif isinstance(message, ToolResultsMessage):
            parts = _XML_RESULT.findall(content)
        else:
            continue
        for part in parts:
            names.update(dict.fromkeys(_FOUND_NAME.findall(part)))
    return list(names)


def _search_tool(search: ToolSearch) -> Tool:
    def search_tools(
        query: Annotated[str, "A few words about what the tool should do, e.g. 'convert units'"],
    ) -> str:
        return search.search(query)

    description = (
        "Find tools by what they do. Returns the descriptions of the best-matching tools, which you"
        " can then call."
    )
    return Tool(search_tools, name=SEARCH_TOOL, description=description)
