"""The ``decide`` protocol: the model's own ``<tool_call>`` decides, a list writes every call.

The ``xml`` protocol's prompt and first tokens decide whether to call at all: the model answers
in text, or opens ``<tool_call>`` (the token its chat template was trained to call with). Once it
has, the request's `call_format` is the ``list`` protocol's schema (`list.list_schema`) and its
`call_tag` is ``<tool_call>``: a backend that can (the embedded `LlamaCppModel`) writes what
follows the tag as one JSON list of calls under the list's grammar, so a small model that would
stop after one call writes every call the request needs, and closes the tag itself. Backends that
cannot constrain part of an answer send nothing extra and read the calls as ``xml`` does;
`ToolCallParser` reads a list inside the tag as its calls. Results come back as ``xml`` sends them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tools.core import Tool
from .base import RequestParts
from .list import list_schema
from .parsing import CALL_OPEN
from .prompt import TOOL_RULES, system_prompt
from .xml import XmlProtocol

__all__ = ["DecideProtocol"]


class DecideProtocol(XmlProtocol):
    """``xml``'s prompt and decision; once the model opens ``<tool_call>``, a list of calls."""

    name = "decide"

    def request(self, offered: Sequence[Tool], last: bool) -> RequestParts:
        if not offered or last:
            return RequestParts()
        return RequestParts(call_format=list_schema(offered), call_tag=CALL_OPEN)


# `prompt.TOOL_RULES` with the call turn as one list inside the tag.
LISTED_TOOL_RULES = TOOL_RULES.replace(
    """For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>""",
    """To call functions, return one JSON list of all the calls the query needs within \
<tool_call></tool_call> XML tags:
<tool_call>
[{"name": <function-name>, "arguments": <args-json-object>}, {"name": <function-name>, "arguments": <args-json-object>}]
</tool_call>""",
)


class DecideListedProtocol(DecideProtocol):
    """`DecideProtocol` whose rules show the call turn as a list inside the tag (a measured variant)."""

    name = "decide-listed"

    def system_prompt(self, tools: Sequence[Tool], system: str | None) -> str:
        return system_prompt(tools, system, rules=LISTED_TOOL_RULES, render=self.tools_block)
