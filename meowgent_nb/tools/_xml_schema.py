"""JSON Schema <-> XML elements: the terse encoding behind `render_tools_xml`.

`encode` writes a schema keyword with a scalar value as an attribute, a sub-schema as a child
element and the description as the element's text; `decode` undoes it exactly. The conventions
(``type`` as an expression such as ``string[]`` or ``integer|null``, required unless a
``default`` is given, anything richer as compact JSON in a ``<schema>`` child) are chosen for what
a small model reads easily in few tokens (benchmarks/tool_tokens.py prints the counts); the round
trip is pinned by tests/tools/test_xml_properties.py.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any, cast

__all__ = ["decode", "encode", "example_json", "text"]

_RESERVED = frozenset(
    {"name", "type", "items", "values", "enum", "default", "required", "ref", "returns", "schema"}
)
_ATTRIBUTE_NAME = re.compile(r"(?![Xx][Mm][Ll])[A-Za-z_][A-Za-z0-9_.-]*")  # "xml..." names are XML's
_INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# What XML cannot carry and json.dumps leaves raw (it escapes the control characters itself).
_RAW_IN_JSON = re.compile("[\ud800-\udfff\ufffe\uffff]")
_REF_PREFIX = "#/$defs/"
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_TYPE_NAME = re.compile(r"[a-z]+")


def text(value: str) -> str:
    """Text XML 1.0 can carry: newlines made plain, control characters it cannot hold U+FFFD."""
    return _INVALID_XML_CHARS.sub("\ufffd", value.replace("\r\n", "\n").replace("\r", "\n"))


def example_json(example: Any) -> str:
    """A tool example (an arguments dict) as compact JSON that XML carries unchanged.

    What XML 1.0 cannot hold (lone surrogates, U+FFFE, U+FFFF) is written as a ``\\u`` escape,
    so the JSON still reads back exactly; ElementTree escapes ``&``, ``<`` and ``>``.

    Raises:
        ValueError: A float that JSON cannot carry (nan, inf).
    """
    text = json.dumps(example, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


# --- encoding ---------------------------------------------------------------------------------


def encode(schema: dict[str, Any], element: ET.Element, description: str = "", top: bool = False) -> None:
    """Write ``schema`` onto ``element``: scalars as attributes, sub-schemas as children.

    ``description`` is the element's text; below the top, the schema's own description is.
    """
    rest = dict(schema)
    if not top and isinstance(rest.get("description"), str) and rest["description"]:
        description = rest.pop("description")
    extras: dict[str, Any] = {}
    children: list[ET.Element] = []

    nullable = not top and _take_nullable(rest)
    kind = None if top else _take_type(rest)
    if not top:
        element.set("type", "")  # holds the place right after the name; set by _set_type
    if "enum" in rest:
        encoded = _enum_text(rest["enum"])
        if encoded is not None:
            element.set("enum", encoded)
            del rest["enum"]
    if "default" in rest:
        element.set("default", _value(rest.pop("default")))
    ref = rest.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX) and not top:
        element.set("ref", ref[len(_REF_PREFIX) :])
        del rest["$ref"]
    for key, tag in (("items", "items"), ("additionalProperties", "values")):
        value = rest.get(key)
        if isinstance(value, dict) and not (top and key == "additionalProperties"):
            del rest[key]
            simple = _simple_type(value)
            if simple is not None and "|" not in simple:
                element.set(tag, simple)
            else:
                children.append(_child(tag, value))
    children.extend(_properties(rest, top))
    for key in _COMBINATORS:
        options = rest.get(key)
        if isinstance(options, list) and options and all(isinstance(o, dict) for o in options):
            del rest[key]
            children.append(_group(key, "option", [(None, o) for o in options]))
    defs = rest.get("$defs")
    if isinstance(defs, dict) and defs and all(isinstance(d, dict) for d in defs.values()):
        del rest["$defs"]
        children.append(_group("defs", "def", list(defs.items())))
    for key, value in rest.items():
        scalar = value is None or isinstance(value, (str, int, float, bool))
        if scalar and key not in _RESERVED and _ATTRIBUTE_NAME.fullmatch(key):
            element.set(key, _value(value))
        else:
            extras[key] = value
    if extras:
        extra = ET.Element("schema")
        extra.text = text(json.dumps(extras, ensure_ascii=False, separators=(",", ":")))
        extra.tail = "\n"
        children.append(extra)

    if not top:
        combined = any(c.tag in _COMBINATORS for c in children)
        _set_type(element, kind, nullable, combined, any(c.tag == "param" for c in children))
    body = text(description)
    if children:
        element.text = body + "\n"
        element.extend(children)
    elif body:
        element.text = body


def _take_nullable(rest: dict[str, Any]) -> bool:
    """Fold ``anyOf: [node, {"type": "null"}]`` into ``rest`` itself; True when it did."""
    options = rest.get("anyOf")
    if "type" in rest or set(rest) - {"anyOf", "description", "default"}:
        return False
    if not (isinstance(options, list) and len(options) == 2 and options[1] == {"type": "null"}):
        return False
    inner = options[0]
    if not isinstance(inner, dict) or not isinstance(inner.get("type"), str):
        return False
    if {"description", "default"} & set(inner) or _simple_type(inner) is not None:
        return False  # the outer keys would be ambiguous; a plain type is a simple union
    del rest["anyOf"]
    rest.update(inner)
    return True


def _take_type(rest: dict[str, Any]) -> str | None:
    """Remove what the type expression says from ``rest`` and return the expression."""
    kind = rest.get("type")
    if isinstance(kind, list) and kind and all(isinstance(k, str) and _TYPE_NAME.fullmatch(k) for k in kind):
        del rest["type"]
        return ",".join(kind) + ("," if len(kind) == 1 else "")
    if isinstance(kind, str) and _TYPE_NAME.fullmatch(kind) and kind != "any":
        del rest["type"]
        items = rest.get("items")
        item_type = _simple_type(items) if kind == "array" and isinstance(items, dict) else None
        if item_type is not None and "|" not in item_type:
            del rest["items"]
            return item_type + "[]"
        return kind
    options = rest.get("anyOf")
    outer_only = not set(rest) - {"anyOf", "description", "default"}
    if kind is None and isinstance(options, list) and len(options) > 1 and outer_only:
        types = [_simple_type(o) if isinstance(o, dict) else None for o in options]
        if all(t is not None and "|" not in t for t in types):
            del rest["anyOf"]
            return "|".join(cast("list[str]", types))  # none is None, as checked
    return None


def _simple_type(schema: dict[str, Any]) -> str | None:
    """``{"type": "x"}`` -> ``x``, ``{"type": "array", "items": {"type": "x"}}`` -> ``x[]``."""
    kind = schema.get("type")
    if not isinstance(kind, str) or not _TYPE_NAME.fullmatch(kind) or kind == "any":
        return None
    if set(schema) == {"type"}:
        return kind
    if set(schema) == {"type", "items"} and kind == "array" and isinstance(schema["items"], dict):
        inner = _simple_type(schema["items"])
        return None if inner is None or "|" in inner else inner + "[]"
    return None


def _set_type(element: ET.Element, kind: str | None, nullable: bool, combined: bool, params: bool) -> None:
    """Set the type expression, leaving out what a reader infers (see `_implied_type`)."""
    if nullable:
        kind = f"{kind}|null"
    implied = _implied_type("ref" in element.attrib, combined, params)
    if kind is None and implied is not None:
        kind = "any"
    if kind != implied:  # so not None: a None kind is "any" where something is implied
        element.set("type", cast(str, kind))
    else:
        del element.attrib["type"]


def _implied_type(ref: bool, combined: bool, params: bool) -> str | None:
    """The type of a node without a ``type`` attribute: none for a ref or a combination, an
    object when it has parameters, else a string."""
    if ref or combined:
        return None
    return "object" if params else "string"


def _properties(rest: dict[str, Any], top: bool) -> list[ET.Element]:
    properties, required = rest.get("properties"), rest.get("required")
    if not isinstance(properties, dict) or not (properties or top):
        return []
    if required is not None and not (
        isinstance(required, list) and required and set(required) <= set(properties)
    ):
        return []  # kept as it is in <schema>
    if required is not None and [name for name in properties if name in required] != required:
        return []
    del rest["properties"]
    rest.pop("required", None)
    marked = required or []
    children = []
    for name, value in properties.items():
        child = _child("param", value, name)
        has_default = isinstance(value, dict) and "default" in value
        if name in marked and (has_default or _nullable(child)):
            child.set("required", "true")
        elif name not in marked and not has_default:
            child.set("required", "false")
        elif name not in marked and _nullable(child) and child.get("default") == "null":
            del child.attrib["default"]  # implied: a nullable, optional parameter defaults to null
        children.append(child)
    return children


def _nullable(element: ET.Element) -> bool:
    """Whether the element's type expression is a union with null (``integer|null``)."""
    return "null" in element.get("type", "").split("|")[1:]


def _group(tag: str, child_tag: str, members: list[tuple[str | None, dict[str, Any]]]) -> ET.Element:
    group = ET.Element(tag)
    group.text = "\n"
    group.extend(_child(child_tag, value, name) for name, value in members)
    group.tail = "\n"
    return group


def _child(tag: str, schema: Any, name: str | None = None) -> ET.Element:
    element = ET.Element(tag, {} if name is None else {"name": name})
    if isinstance(schema, dict):
        encode(schema, element)
    else:  # a boolean schema: true or false
        element.set("schema", _value(schema))
    element.tail = "\n"
    return element


def _enum_text(values: Any) -> str | None:
    if not isinstance(values, list) or not values:
        return None
    if all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
        encoded = [_value(v) for v in values]
        if not any("|" in e or e.startswith("[") for e in encoded):
            return "|".join(encoded)
    return text(json.dumps(values, ensure_ascii=False, separators=(",", ":")))


def _value(value: Any) -> str:
    """A JSON value as attribute text: plain strings as they are, anything else as JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return _INVALID_XML_CHARS.sub("\ufffd", value)  # attributes keep \r (as &#13;)
    return _INVALID_XML_CHARS.sub("\ufffd", json.dumps(value, ensure_ascii=False, separators=(",", ":")))


# --- decoding ---------------------------------------------------------------------------------


def decode(element: ET.Element, top: bool = False) -> dict[str, Any]:
    """The JSON Schema an element encodes; at the top (a ``<tool>``) the text is the tool's own."""
    attributes = {k: v for k, v in element.attrib.items() if k not in ("name", "required", "returns")}
    if "schema" in attributes:  # a boolean schema
        return _unvalue(attributes["schema"])
    children = list(element)
    kind = attributes.pop("type", None)
    default = attributes.pop("default", None)
    schema: dict[str, Any] = {}
    if "enum" in attributes:
        raw = attributes.pop("enum")
        schema["enum"] = json.loads(raw) if raw.startswith("[") else [_unvalue(v) for v in raw.split("|")]
    if "ref" in attributes:
        schema["$ref"] = _REF_PREFIX + attributes.pop("ref")
    for key, attribute in (("items", "items"), ("additionalProperties", "values")):
        if attribute in attributes:
            schema[key] = _parse_simple(attributes.pop(attribute))
    schema.update((key, _unvalue(value)) for key, value in attributes.items())
    properties, required = {}, []
    for child in children:
        if child.tag == "param":
            name = child.get("name")
            properties[name] = decode(child)
            flag = child.get("required")
            if flag is None and _nullable(child) and "default" not in child.attrib:
                properties[name]["default"] = None
            has_default = isinstance(properties[name], dict) and "default" in properties[name]
            if flag == "true" or (flag is None and not has_default):
                required.append(name)
        elif child.tag in ("items", "values"):
            schema["items" if child.tag == "items" else "additionalProperties"] = decode(child)
        elif child.tag in _COMBINATORS:
            schema[child.tag] = [decode(option) for option in child]
        elif child.tag == "defs":
            schema["$defs"] = {d.get("name"): decode(d) for d in child}
        elif child.tag == "schema":
            schema.update(json.loads(child.text or "{}"))
    if properties or (top and "properties" not in schema):
        schema["properties"] = properties
    if required:
        schema["required"] = required
    if not top:
        combined = any(c.tag in _COMBINATORS for c in children)
        if kind is None:
            kind = _implied_type("ref" in element.attrib, combined, bool(properties))
        outer = {"description": schema.pop("description")} if "description" in schema else {}
        if kind is not None and kind != "any":
            schema = _with_type(kind, schema)
        schema.update(outer)  # a description always belongs to the node, never to a union member
        body = element.text or ""
        body = body[:-1] if children and body.endswith("\n") else body
        if body:
            schema["description"] = body
    if default is not None:
        schema["default"] = _unvalue(default)
    return schema


def _with_type(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    if "," in kind:
        return {"type": [k for k in kind.split(",") if k], **schema}
    parts = kind.split("|")
    if len(parts) == 1:
        return {**_parse_simple(kind), **schema}
    if schema and len(parts) == 2 and parts[1] == "null":  # a detailed node made nullable
        return {"anyOf": [{**_parse_simple(parts[0]), **schema}, {"type": "null"}]}
    return {"anyOf": [_parse_simple(part) for part in parts], **schema}


def _parse_simple(kind: str) -> dict[str, Any]:
    if kind.endswith("[]"):
        return {"type": "array", "items": _parse_simple(kind[:-2])}
    return {"type": kind}


def _unvalue(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value
