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

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        if not offered or last:
            return RequestParts()
        return RequestParts(call_format=list_schema(offered), call_tag=CALL_OPEN)
