"""The system prompt: the rules of tool calling and the tools block; byte-stable across turns.

A model server keeps the prompt prefix it has already read in its cache; the system prompt is the
same bytes on every turn of a conversation as long as the tools do not change, so the cache stays
valid. What changes per turn (the last-turn notice, tool results) goes in later messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape as xml_escape

from ..tools.core import Tool, ToolResult
from ..tools.inert import inert
from ..tools.render import render_tools_xml

__all__ = [
    "DEFAULT_SYSTEM",
    "JSON_TOOL_RULES",
    "LAST_TURN_NOTICE",
    "RESULTS_NOTICE",
    "TOOL_RULES",
    "context_block",
    "inert",
    "inert_attribute",
    "system_prompt",
    "tool_responses",
]

DEFAULT_SYSTEM = "You are a helpful assistant."

# The wording follows the tool section of Qwen2.5's own chat template, which small models were
# trained on: measured with benchmarks/toolcall_accuracy.py on the default local model, it doubled
# the right tool choices (30 % -> 60 % of tool cases) against the earlier, shorter rules.
TOOL_RULES = """\
# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags. A parameter without a \
type is a string; a parameter without a default is required, unless its type allows null:
{tools}

For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call>"""

JSON_TOOL_RULES = """\
You can call the tools described in the <tools> block below. A parameter without a type is a \
string; a parameter without a default is required, unless its type allows null.
Always answer with one JSON object and nothing else. To call a tool, write:
{"tool": "tool_name", "arguments": {"argument": "value"}}
Call one tool at a time. Its result comes back in a <tool_response> block. When you have what you \
need, or when no tool is needed, give your answer to the user as:
{"answer": "your answer"}

{tools}"""

LAST_TURN_NOTICE = (
    "You have reached the limit of tool calls for this request. Answer now with what you have,"
    " without calling any tool."
)

RESULTS_NOTICE = "Use these results to answer the user's question in plain text."
"""Follows the results of a turn's calls (``xml``). Without it the default local model called the
same tool again and again instead of answering (4 of 4 conversations in a probe, against 0 of 4
with it); a wording that also mentions calling another tool brought the loop back."""

REQUIRED_NOTICE = "You must call one of the tools to answer this request. Call a tool now."


def system_prompt(
    tools: Sequence[Tool],
    system: str | None = None,
    *,
    rules: str = TOOL_RULES,
    render: Callable[[Sequence[Tool]], str] = render_tools_xml,
) -> str:
    """The system message: ``system`` (or a default), then the tool rules and tools, if any.

    Args:
        tools: The tools described in the prompt; none (the ``native`` protocol, which passes
            them to the backend) leaves the rules out too.
        system: The person's own instructions; `DEFAULT_SYSTEM` when None.
        rules: How to call the tools: `TOOL_RULES` (``xml``) or `JSON_TOOL_RULES` (``json``);
            ``{tools}`` in it stands for the tools block.
        render: Writes the tools block (`render_tools_xml`, or a variant's own form).
    """
    text = DEFAULT_SYSTEM if system is None else system
    if tools:
        text = f"{text}\n\n{rules.replace('{tools}', render(tools))}"
    return text


def tool_responses(results: Sequence[ToolResult], notice: str | None = RESULTS_NOTICE) -> str:
    """The results of one turn's calls, in call order, then ``notice`` (if any), as one message.

    Each result is one ``<tool_response name="...">`` block, closed once, whatever the tool
    returned and whatever name the model wrote: see `inert` (the one escaping of text pasted into
    a prompt, kept in `tools.inert` so a backend can add its model's own tokens to it).
    """
    blocks = [
        f'<tool_response name="{inert_attribute(result.call.name)}">\n{inert(result.output)}\n</tool_response>'
        for result in results
    ]
    return "\n".join([*blocks, notice] if notice else blocks)


def inert_attribute(name: str) -> str:
    """A name (the model wrote, or a server), as an XML attribute value: it cannot end the tag or the block."""
    return inert(xml_escape(name, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}))


def context_block(attribute: str, value: str, text: str) -> str:
    """``text`` as a ``<context attribute="value">`` block of the prompt (an MCP resource's
    ``source``, a notebook variable's ``variable``): neither the value nor the text can end the
    block or forge another (`inert_attribute`, `inert`)."""
    return f'<context {attribute}="{inert_attribute(value)}">\n{inert(text)}\n</context>'
