"""Tools -> the forms a model reads: compact XML, JSON Schema, and a one-line text.

`render_tools_xml` carries everything the JSON Schema carries, in fewer tokens than either JSON
form (benchmarks/tool_tokens.py prints the counts); `parse_tools_xml` reads it back into the same
JSON Schema, which is how the tests show nothing is lost. An example::

    <tools>
    <tool name="get_weather" returns="str: A one-line weather report.">Get the weather.
    <param name="city">City name, e.g. Paris</param>
    <param name="days" type="integer" default="1"/>
    <example>{"city":"Paris","days":2}</example>
    </tool>
    </tools>

The encoding's conventions are in `meowgent_nb.tools._xml_schema`. The output is byte-stable (the
same tools give the same bytes in every process) so a server's prompt cache stays valid.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from typing import Any, Literal, Protocol

from ._xml_schema import decode, encode, example_json, text
from .inert import inert, inert_descriptions

__all__ = [
    "ToolSpec",
    "parse_tools_xml",
    "render_tools_text",
    "render_tools_xml",
    "schema_type_name",
    "tool_json_schema",
    "tool_string",
    "tool_xml",
    "tools_json_schema",
]


class ToolSpec(Protocol):
    """What the renderings read of a tool; a `Tool` is one (this module imports no tool class)."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The JSON Schema of the arguments."""
    returns: str | None
    output_type: str | None
    approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any]
    timeout: float | None

    @property
    def examples(self) -> tuple[dict[str, Any], ...]:
        """Example arguments (a renderer reads a missing attribute as none)."""
        ...


def render_tools_xml(tools: Iterable[ToolSpec]) -> str:
    """The ``<tools>`` block of a system prompt: one ``<tool>`` element per tool, in order."""
    root = ET.Element("tools")
    root.text = "\n"
    for item in tools:
        root.append(_tool_element(item))
    return _serialize(root)


def tool_xml(tool: ToolSpec) -> str:
    """One tool's ``<tool>`` element, as text."""
    return _serialize(_tool_element(tool)).rstrip("\n")


def _serialize(element: ET.Element) -> str:
    # ElementTree writes empty elements as "<x />"; the space costs a token per parameter. The
    # sequence " />" cannot occur elsewhere: ">" is escaped in text and attribute values.
    # ElementTree escapes every "<" of a text; `inert` adds the special tokens in brackets
    # ([INST], [TOOL_CALLS]) as character references, which an XML parser reads back as they were.
    return inert(ET.tostring(element, encoding="unicode").replace(" />", "/>"))


def tool_json_schema(tool: ToolSpec) -> dict[str, Any]:
    """The ``{"type": "function", "function": {...}}`` form Ollama's ``tools=`` takes.

    A tool's examples are the parameters schema's ``examples`` keyword (JSON Schema's own): a
    chat template given this dict (the embedded model's) shows them; the ``ollama`` client keeps
    only a few schema keywords and drops it. Descriptions are `inert` (a server's tool is text from
    outside, and the backend's template pastes this JSON into the prompt as it is).
    """
    parameters = inert_descriptions(tool.parameters)
    examples = _examples(tool)
    if examples:
        parameters = {**parameters, "examples": list(examples)}
    return {
        "type": "function",
        "function": {"name": tool.name, "description": inert(tool.description), "parameters": parameters},
    }


def _examples(tool: ToolSpec) -> tuple[dict[str, Any], ...]:
    return tuple(getattr(tool, "examples", ()) or ())


def tools_json_schema(tools: Iterable[ToolSpec]) -> list[dict[str, Any]]:
    """`tool_json_schema` of each tool, in order."""
    return [tool_json_schema(item) for item in tools]


def tool_string(tool: ToolSpec) -> str:
    """``Tool Name: add, Description: Add two integers., Arguments: a: int, b: int, Outputs: int``."""
    properties = tool.parameters.get("properties", {})
    arguments = ", ".join(_argument_text(name, schema) for name, schema in properties.items())
    description = " ".join(tool.description.split())
    line = (
        f"Tool Name: {tool.name}, Description: {description}, "
        f"Arguments: {arguments or 'none'}, Outputs: {tool.output_type or 'any'}"
    )
    examples = _examples(tool)
    if examples:
        line += ", Examples: " + "; ".join(example_json(example) for example in examples)
    return line


def render_tools_text(tools: Iterable[ToolSpec]) -> str:
    """`tool_string` of each tool, one per line."""
    return "\n".join(tool_string(item) for item in tools)


_PY_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _argument_text(name: str, schema: Any) -> str:
    text = f"{name}: {schema_type_name(schema)}"
    if isinstance(schema, dict) and "default" in schema:
        text += f" = {schema['default']!r}"
    return text


def schema_type_name(schema: Any) -> str:
    """A JSON Schema as a Python-style type: ``int``, ``list[str]``, ``Literal['a', 'b']``."""
    if not isinstance(schema, dict):
        return "Any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return f"Literal[{', '.join(map(repr, schema['enum']))}]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(schema_type_name(option) for option in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(schema_type_name({**schema, "type": k}) for k in kind)
    if kind == "array":
        return f"list[{schema_type_name(schema['items'])}]" if "items" in schema else "list"
    if kind == "object":
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            return "{" + ", ".join(_argument_text(k, v) for k, v in properties.items()) + "}"
        values = schema.get("additionalProperties")
        return f"dict[str, {schema_type_name(values)}]" if isinstance(values, dict) else "dict"
    return _PY_TYPES.get(kind, "Any") if isinstance(kind, str) else "Any"


# --- XML -------------------------------------------------------------------------------------


def _tool_element(tool: ToolSpec) -> ET.Element:
    cached = getattr(tool, "_xml_element", None)
    if cached is not None:
        return cached
    element = ET.Element("tool", {"name": tool.name})
    if tool.returns and tool.returns != tool.output_type:  # a bare type tells the model little
        element.set("returns", text(tool.returns))
    parameters = dict(tool.parameters)
    if parameters.get("type") == "object":
        del parameters["type"]
    if parameters.get("additionalProperties") is False:
        del parameters["additionalProperties"]
    encode(parameters, element, text(tool.description), top=True)
    examples = _examples(tool)
    if examples and not len(element):
        element.text = (element.text or "") + "\n"  # as before child elements
    for example in examples:
        child = ET.SubElement(element, "example")
        child.text = example_json(example)  # XML-safe already; ElementTree escapes & < >
        child.tail = "\n"
    element.tail = "\n"
    # A cache kept on the tool object itself, which a ToolSpec need not declare.
    tool._xml_element = element  # pyright: ignore[reportAttributeAccessIssue]
    return element


# --- XML -> JSON Schema ----------------------------------------------------------------------


def parse_tools_xml(block: str) -> list[dict[str, Any]]:
    """Read a `render_tools_xml` block back into ``{"name", "description", "parameters", "returns",
    "examples"}``.

    ``parameters`` equals the tool's JSON Schema: this is the check that the XML loses nothing.
    ``returns`` is what the model was told of the output, or None; ``examples`` the tool's
    examples, in order (a list, empty when it has none).
    """
    tools = []
    for element in ET.fromstring(block).iter("tool"):
        body = element.text or ""
        description = body[:-1] if len(element) and body.endswith("\n") else body
        parameters = {"type": "object", **decode(element, top=True)}
        parameters.setdefault("additionalProperties", False)
        tools.append(
            {
                "name": element.get("name"),
                "description": description,
                "parameters": parameters,
                "returns": element.get("returns"),
                "examples": [json.loads(child.text or "") for child in element.findall("example")],
            }
        )
    return tools
