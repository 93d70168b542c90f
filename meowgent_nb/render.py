"""Tools -> the forms a model reads: compact XML, JSON Schema, and a one-line text.

The XML carries everything the JSON Schema carries, tersely: a schema keyword with a scalar value
becomes an attribute, a sub-schema becomes a child element, the description is the element's
text. `parse_tools_xml` reads it back into the same JSON Schema, which is how the tests show that
nothing is lost. An example::

    <tools>
    <tool name="get_weather">Get the current weather for a city.
    <param name="city" type="string" required="true">City name, e.g. Paris</param>
    <param name="unit" type="string" enum="celsius|fahrenheit" default="celsius" />
    <returns>str: A one-line weather report</returns>
    </tool>
    </tools>

Conventions (what the model reads, and what `parse_tools_xml` undoes):

- ``type="a|b"`` is ``anyOf`` of plain types; on a node with more detail, ``type="array|null"``
  is that node made nullable (``anyOf: [node, {"type": "null"}]``).
- ``enum`` and ``default`` hold values as text; a value that would read as JSON (``10``,
  ``null``) but is a string is written as a JSON string (``"10"``). An enum is ``a|b``, or a
  JSON array when a value contains ``|``.
- ``items="string"`` and ``values="integer"`` (``additionalProperties``) name plain item types;
  richer ones are ``<items>`` and ``<values>`` children. ``additionalProperties: false`` is the
  rule for a tool's arguments and is not written there.
- Anything else that is not a plain value goes, as compact JSON, into a ``<schema>`` child.

The output is byte-stable: the same tools give the same bytes, in every process.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tools import Tool

__all__ = [
    "parse_tools_xml",
    "render_tools_text",
    "render_tools_xml",
    "schema_type_name",
    "tool_json_schema",
    "tool_string",
    "tool_xml",
    "tools_json_schema",
]

_RESERVED = frozenset({"name", "type", "items", "values", "enum", "default", "required", "ref"})
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_REF_PREFIX = "#/$defs/"
_COMBINATORS = ("anyOf", "oneOf", "allOf")


def render_tools_xml(tools: Iterable[Tool]) -> str:
    """The ``<tools>`` block of a system prompt: one ``<tool>`` element per tool, in order."""
    root = ET.Element("tools")
    root.text = "\n"
    for item in tools:
        root.append(_tool_element(item))
    return ET.tostring(root, encoding="unicode")


def tool_xml(tool: Tool) -> str:
    """One tool's ``<tool>`` element, as text."""
    return ET.tostring(_tool_element(tool), encoding="unicode").rstrip("\n")


def tool_json_schema(tool: Tool) -> dict[str, Any]:
    """The ``{"type": "function", "function": {...}}`` form Ollama's ``tools=`` takes."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def tools_json_schema(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """`tool_json_schema` of each tool, in order."""
    return [tool_json_schema(item) for item in tools]


def tool_string(tool: Tool) -> str:
    """``Tool Name: add, Description: Add two integers., Arguments: a: int, b: int, Outputs: int``."""
    properties = tool.parameters.get("properties", {})
    arguments = ", ".join(_argument_text(name, schema) for name, schema in properties.items())
    description = " ".join(tool.description.split())
    return (
        f"Tool Name: {tool.name}, Description: {description}, "
        f"Arguments: {arguments or 'none'}, Outputs: {tool.output_type or 'any'}"
    )


def render_tools_text(tools: Iterable[Tool]) -> str:
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
    for key in _COMBINATORS[:2]:
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


def _tool_element(tool: Tool) -> ET.Element:
    cached = getattr(tool, "_xml_element", None)
    if cached is not None:
        return cached
    element = ET.Element("tool", {"name": tool.name})
    parameters = dict(tool.parameters)
    if parameters.get("type") == "object":
        del parameters["type"]
    if parameters.get("additionalProperties") is False:
        del parameters["additionalProperties"]
    _encode(parameters, element, _text(tool.description), top=True)
    if tool.returns:
        if len(element) == 0:
            element.text = (element.text or "") + "\n"
        returns = ET.SubElement(element, "returns")
        returns.text = _text(tool.returns)
        returns.tail = "\n"
    element.tail = "\n"
    tool._xml_element = element
    return element


def _encode(schema: dict[str, Any], element: ET.Element, description: str = "", top: bool = False) -> None:
    """Write ``schema`` onto ``element``: scalars as attributes, sub-schemas as children.

    ``description`` is the element's text; below the top, the schema's own description is.
    """
    rest = dict(schema)
    extras: dict[str, Any] = {}
    if not top and isinstance(rest.get("description"), str) and rest["description"]:
        description = rest.pop("description")
    children: list[ET.Element] = []

    _encode_type(rest, element)
    if "enum" in rest:
        encoded = _encode_enum(rest.pop("enum"))
        if encoded is None:
            extras["enum"] = schema["enum"]
        else:
            element.set("enum", encoded)
    if "default" in rest:
        element.set("default", _value(rest.pop("default")))
    ref = rest.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        element.set("ref", ref[len(_REF_PREFIX) :])
    elif ref is not None:
        extras["$ref"] = ref
    for key, tag, attribute in (("items", "items", "items"), ("additionalProperties", "values", "values")):
        value = rest.get(key)
        if isinstance(value, dict):
            del rest[key]
            if set(value) == {"type"} and isinstance(value["type"], str):
                element.set(attribute, value["type"])
            else:
                children.append(_child(tag, value))
    properties = rest.pop("properties", None)
    required = rest.pop("required", None)
    if isinstance(properties, dict) and (properties or top):
        names = list(properties)
        marked = required if isinstance(required, list) else []
        if [name for name in names if name in marked] != marked:
            extras["required"], marked = required, []
        elif required is not None and not marked:
            extras["required"] = required
        for name, value in properties.items():
            child = _child("param", value, name)
            if name in marked:
                child.set("required", "true")
            children.append(child)
    else:
        if properties is not None:
            extras["properties"] = properties
        if required is not None:
            extras["required"] = required
    for key in _COMBINATORS:
        options = rest.pop(key, None)
        if isinstance(options, list) and options and all(isinstance(o, dict) for o in options):
            group = ET.Element(key)
            group.text = "\n"
            for option in options:
                group.append(_child("option", option))
            group.tail = "\n"
            children.append(group)
        elif options is not None:
            extras[key] = options
    defs = rest.pop("$defs", None)
    if isinstance(defs, dict) and all(isinstance(d, dict) for d in defs.values()):
        group = ET.Element("defs")
        group.text = "\n"
        for name, value in defs.items():
            group.append(_child("def", value, name))
        group.tail = "\n"
        children.append(group)
    elif defs is not None:
        extras["$defs"] = defs
    for key, value in rest.items():
        scalar = value is None or isinstance(value, (str, int, float, bool))
        if scalar and key not in _RESERVED and _ATTRIBUTE_NAME.fullmatch(key):
            element.set(key, _value(value))
        else:
            extras[key] = value
    if extras:
        extra = ET.Element("schema")
        extra.text = json.dumps(extras, ensure_ascii=False, separators=(",", ":"))
        extra.tail = "\n"
        children.append(extra)

    text = _text(description)
    if children:
        element.text = text + "\n"
        element.extend(children)
    elif text:
        element.text = text


def _encode_type(rest: dict[str, Any], element: ET.Element) -> None:
    kind = rest.get("type")
    if isinstance(kind, str):
        element.set("type", rest.pop("type"))
    elif isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        element.set("type", ",".join(rest.pop("type")) + ("," if len(kind) == 1 else ""))
    if kind is not None or "anyOf" not in rest:
        return
    options = rest["anyOf"]
    outer = set(rest) - {"anyOf", "description", "default"}
    if outer or not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
        return
    if options and all(set(o) == {"type"} and isinstance(o["type"], str) for o in options):
        element.set("type", "|".join(o["type"] for o in rest.pop("anyOf")))
        return
    if len(options) == 2 and options[1] == {"type": "null"}:
        inner = options[0]
        if isinstance(inner.get("type"), str) and len(inner) > 1 and not {"description", "default"} & set(inner):
            del rest["anyOf"]
            rest.update(inner)
            rest["type"] = inner["type"] + "|null"
            element.set("type", rest.pop("type"))


def _encode_enum(values: Any) -> str | None:
    if not isinstance(values, list) or not values:
        return None
    if all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
        encoded = [_value(v) for v in values]
        if not any("|" in e or e.startswith("[") for e in encoded):
            return "|".join(encoded)
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def _child(tag: str, schema: Any, name: str | None = None) -> ET.Element:
    element = ET.Element(tag, {} if name is None else {"name": name})
    if isinstance(schema, dict):
        _encode(schema, element)
    else:  # a boolean schema (true / false)
        element.set("schema", _value(schema))
    element.tail = "\n"
    return element


def _value(value: Any) -> str:
    """A JSON value as attribute text: plain strings as they are, anything else as JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return _text(value)
    return _text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _text(text: str) -> str:
    """Text XML 1.0 can carry: control characters it cannot hold become U+FFFD."""
    return _INVALID_XML_CHARS.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))


# --- XML -> JSON Schema ----------------------------------------------------------------------


def parse_tools_xml(text: str) -> list[dict[str, Any]]:
    """Read a `render_tools_xml` block back into ``{"name", "description", "parameters", "returns"}``.

    ``parameters`` equals the tool's JSON Schema: this is the check that the XML loses nothing.
    """
    tools = []
    for element in ET.fromstring(text).iter("tool"):
        children = list(element)
        returns = next((c.text or "" for c in children if c.tag == "returns"), None)
        text = element.text or ""
        description = text[:-1] if children and text.endswith("\n") else text
        parameters = {"type": "object", **_decode(element, top=True)}
        parameters.setdefault("additionalProperties", False)
        tools.append(
            {"name": element.get("name"), "description": description, "parameters": parameters, "returns": returns}
        )
    return tools


def _decode(element: ET.Element, top: bool = False) -> dict[str, Any]:
    """The JSON Schema an element encodes; at the top (a ``<tool>``) the text is the tool's own."""
    schema: dict[str, Any] = {}
    children = [c for c in element if c.tag != "returns"]
    attributes = {k: v for k, v in element.attrib.items() if k not in ("name", "required")}
    if "schema" in attributes:  # a boolean schema: the whole node is true or false
        return _unvalue(attributes["schema"])
    kind = attributes.pop("type", None)
    if "enum" in attributes:
        raw = attributes.pop("enum")
        schema["enum"] = json.loads(raw) if raw.startswith("[") else [_unvalue(v) for v in raw.split("|")]
    default = attributes.pop("default", None)
    if "ref" in attributes:
        schema["$ref"] = _REF_PREFIX + attributes.pop("ref")
    for key, attribute in (("items", "items"), ("additionalProperties", "values")):
        if attribute in attributes:
            schema[key] = {"type": attributes.pop(attribute)}
    schema.update((key, _unvalue(value)) for key, value in attributes.items())
    properties, required = {}, []
    for child in children:
        if child.tag == "param":
            properties[child.get("name")] = _decode(child)
            if child.get("required") == "true":
                required.append(child.get("name"))
        elif child.tag in ("items", "values"):
            schema["items" if child.tag == "items" else "additionalProperties"] = _decode(child)
        elif child.tag in _COMBINATORS:
            schema[child.tag] = [_decode(option) for option in child]
        elif child.tag == "defs":
            schema["$defs"] = {d.get("name"): _decode(d) for d in child}
        elif child.tag == "schema":
            schema.update(json.loads(child.text or "{}"))
    if properties or top:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    if kind is not None:
        schema = _decode_type(kind, schema)
    if not top:
        text = element.text or ""
        text = text[:-1] if children and text.endswith("\n") else text
        if text:
            schema["description"] = text
    if default is not None:
        schema["default"] = _unvalue(default)
    return schema


def _decode_type(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    if "," in kind:
        return {"type": [k for k in kind.split(",") if k], **schema}
    parts = kind.split("|")
    if len(parts) == 1:
        return {"type": kind, **schema}
    if schema and len(parts) == 2 and parts[1] == "null":  # a detailed node made nullable
        return {"anyOf": [{"type": parts[0], **schema}, {"type": "null"}]}
    return {"anyOf": [{"type": part} for part in parts], **schema}


def _unvalue(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
