"""The ``decide`` protocol: ``xml``'s prompt decides whether to call, a list writes every call.

The model reads the ``xml`` protocol's rules and tools block, so its first tokens decide as they
do under ``xml``: it answers in text, or opens a call (``<tool_call>``, or a call object at the
start of its answer). Once it has, the request's `call_format` is the ``list`` protocol's schema
(`list.list_schema`) and its `call_tag` is ``<tool_call>``: a backend that can (the embedded
`LlamaCppModel`) writes the rest as one JSON list of calls under the list's grammar (offered
names, each tool's arguments), so a small model that would stop after one call writes every call
the request needs; the product closes the tag or fence. Backends that cannot constrain part of an
answer send nothing extra and read the calls as ``xml`` does; `ToolCallParser` reads a list
inside the tag as its calls. Results come back as ``xml`` sends them.

A second look (``grounding``, on by default): a small model asked something no tool fits often
writes a call with values it made up. The request asks the backend to take back a list none of
whose calls has an argument value found in the person's messages (`tools.grounding`) and to
have the model answer in text instead (`ModelRequest.call_grounding`; the embedded model does,
other backends ignore it).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tools.core import Tool
from .base import RequestParts
from .list import list_schema
from .parsing import CALL_OPEN
from .xml import XmlProtocol

__all__ = ["DecideProtocol"]


class DecideProtocol(XmlProtocol):
    """``xml``'s prompt and decision; once the model opens a call, a list of calls."""

    name = "decide"

    def __init__(self, *, grounding: bool = True, thinking_first: bool = False) -> None:
        super().__init__(thinking_first=thinking_first)
        self.grounding = grounding
        """Ask for the second look (`ModelRequest.call_grounding`): a list of calls none of whose
        argument values is in the person's messages is written again as text."""

    def __repr__(self) -> str:
        shown = ["thinking_first=True"] if self.thinking_first else []
        shown += [] if self.grounding else ["grounding=False"]
        return f"{type(self).__name__}({', '.join(shown)})"

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        if not offered or last:
            return RequestParts()
        return RequestParts(
            call_format=list_schema(offered), call_tag=CALL_OPEN, call_grounding=self.grounding
        )
