"""Property tests of the tool XML: escaping, the XML -> JSON Schema round trip, byte stability.

`render_tools_xml` documents that `parse_tools_xml` reads its output back into exactly the
tool's JSON Schema, and that the output is byte-stable across processes. These tests generate
schemas and texts with hypothesis and check both promises with exact comparisons: values are
compared with their JSON types (``True`` is not ``1``, ``1.0`` is not ``1``) and properties
with their order, which is the order a model reads the arguments in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from meowgent_nb import Tool, render_tools_xml, tool
from meowgent_nb.tools.examples import MAX_EXAMPLE_CHARS, MAX_EXAMPLES, example_json
from meowgent_nb.tools.render import parse_tools_xml, tool_xml

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _handler(**kwargs: Any) -> dict[str, Any]:
    return kwargs


# --- exact comparison -------------------------------------------------------------------------

_SCHEMA_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_NODES = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)


def typed(value: Any) -> Any:
    """A JSON value with its JSON type made explicit, so `==` tells true from 1 and 1 from 1.0."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


def typed_schema(schema: Any) -> Any:
    """`typed`, and a schema's ``properties`` as an ordered list of (name, schema) pairs."""
    if not isinstance(schema, dict):
        return typed(schema)
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            result[key] = [(name, typed_schema(item)) for name, item in value.items()]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: typed_schema(item) for name, item in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            result[key] = [typed_schema(item) for item in value]
        elif key in _SCHEMA_NODES:
            result[key] = typed_schema(value)
        else:
            result[key] = typed(value)
    return result


def assert_same_schema(parsed: Any, expected: Any) -> None:
    assert parsed == expected
    assert typed_schema(parsed) == typed_schema(expected)


def round_trip(tool_: Tool) -> dict[str, Any]:
    """The tool rendered alone and read back; checks it is one well-formed ``<tool>``."""
    text = render_tools_xml([tool_])
    root = ET.fromstring(text)
    assert root.tag == "tools"
    assert [child.tag for child in root] == ["tool"]
    assert root[0].get("name") == tool_.name
    (parsed,) = parse_tools_xml(text)
    assert parsed["name"] == tool_.name
    return parsed


# --- strategies: text -------------------------------------------------------------------------

# What XML 1.0 can carry: no surrogates, no U+FFFE/U+FFFF, no control characters but \t and \n.
# \r is left out: the renderer writes it as \n (see test_carriage_returns_become_newlines).
XML_CHARS = st.characters(
    exclude_categories=("Cs", "Cc"), include_characters="\t\n", exclude_characters="\ufffe\uffff"
)
TRICKY = [
    "<",
    ">",
    "&",
    '"',
    "'",
    "</tool>",
    "</param>",
    '<tool name="x">',
    "]]>",
    "<![CDATA[",
    "&amp;",
    "&#10;",
    "&lt;",
    "<!--",
    "-->",
    "<?xml version='1.0'?>",
    "\n",
    "\t",
    " ",
    "\n\n",
    "|",
    "[",
    "{",
    ",",
    "é",
    "中文",
    "🐱",
    "\u2028",
    "\xa0",
    "\u200b",
    "10",
    "null",
    "a|b",
    "[x",
]
xml_text = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(XML_CHARS, max_size=8)), max_size=5).map(
    "".join
)
nonempty_text = xml_text.filter(bool)

# Strings that read as JSON, as an enum separator, or as the start of a JSON array.
AMBIGUOUS = [
    "10",
    "-3",
    "1.5",
    "1e5",
    " 10",
    "\t1",
    "null",
    "true",
    "false",
    "NaN",
    "Infinity",
    '"10"',
    '"',
    "[]",
    "[1]",
    "{}",
    '{"a":1}',
    "a|b",
    "|",
    "||",
    "[x",
    "[",
    "]",
    "",
    " ",
    "a b",
    " lead",
    "trail ",
    "a,b",
    "string",
    "<&>",
]
json_string = st.one_of(st.sampled_from(AMBIGUOUS), xml_text)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_scalar = st.one_of(st.none(), st.booleans(), numbers, json_string)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(json_string, inner, max_size=3)),
    max_leaves=6,
)

# --- strategies: JSON Schemas -----------------------------------------------------------------

SIMPLE_TYPES = ["string", "integer", "number", "boolean", "null"]
ALL_TYPES = [*SIMPLE_TYPES, "array", "object"]
KEYWORDS_2020_12 = frozenset(
    [
        "$id",
        "$schema",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "prefixItems",
        "items",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "type",
        "const",
        "enum",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "definitions",
        "dependencies",
        "$recursiveRef",
        "$recursiveAnchor",
    ]
)
# Names of unknown keywords (annotations): the renderer's own words, XML's reserved names, and
# names that cannot be XML attribute names.
ODD_KEYWORDS = [
    "schema",
    "xmlns",
    "xml-lang",
    "XmlThing",
    "name",
    "values",
    "ref",
    "option",
    "param",
    "tool",
    "tools",
    "returns",
    "defs",
    "x-order",
    "_private",
    "a.b",
    "camelCase",
    "nullable",
    "Type",
    "NAME",
    "xml",
    "XMLNS",
    "x:y",
    "1abc",
    "with space",
    "é",
    "$custom",
    "",
]
custom_keyword = st.one_of(
    st.sampled_from(ODD_KEYWORDS),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,10}", fullmatch=True),
).filter(lambda key: key not in KEYWORDS_2020_12)

extra_keywords = st.fixed_dictionaries(
    {},
    optional={
        "minimum": numbers,
        "maximum": numbers,
        "exclusiveMinimum": numbers,
        "multipleOf": st.one_of(st.integers(1, 100), st.floats(min_value=0.001, max_value=1e6)),
        "minLength": st.integers(0, 10**6),
        "maxLength": st.integers(0, 10**6),
        "minItems": st.integers(0, 100),
        "uniqueItems": st.booleans(),
        "format": json_string,
        "pattern": json_string.map(re.escape),
        "examples": st.lists(json_value, max_size=3),
        "const": json_value,
        "title": json_string,
        "deprecated": st.booleans(),
        "readOnly": st.booleans(),
        "$comment": json_string,
    },
)
custom_keywords = st.dictionaries(custom_keyword, json_value, max_size=2)


@st.composite
def decorated(draw: st.DrawFn, node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with, maybe, a description, a default and other keywords."""
    node = dict(node)
    node.update(draw(extra_keywords))
    node.update(draw(custom_keywords))
    if draw(st.booleans()):
        node["default"] = draw(json_value)
    description = draw(st.one_of(st.none(), st.just(""), xml_text))
    if description is not None:
        node["description"] = description
    return node


simple_type = st.sampled_from(SIMPLE_TYPES).map(lambda kind: {"type": kind})
enum_node = st.builds(
    lambda values, kind: {"enum": values} if kind is None else {"type": kind, "enum": values},
    st.lists(st.one_of(json_scalar, st.sampled_from(AMBIGUOUS)), min_size=1, max_size=5)
    | st.lists(json_value, min_size=1, max_size=3),
    st.none() | st.sampled_from(SIMPLE_TYPES),
)
any_of_simple = st.lists(simple_type, min_size=1, max_size=4).map(lambda options: {"anyOf": options})
type_list = st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=3, unique=True).map(
    lambda kinds: {"type": kinds}
)
leaf = st.one_of(simple_type, enum_node, any_of_simple, type_list, st.just({})).flatmap(decorated)


@st.composite
def object_node(draw: st.DrawFn, children: st.SearchStrategy[Any], top: bool = False) -> dict[str, Any]:
    """An object with properties, ``required`` a subset of them in property order."""
    names = draw(st.lists(json_string, unique=True, max_size=4 if top else 3))
    properties = {name: draw(children) for name in names}
    node: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in names if draw(st.booleans())]
    if required or (not top and draw(st.booleans())):
        node["required"] = required
    if not top:
        additional = draw(st.sampled_from(["absent", "false", "true", "schema"]))
        if additional == "schema":
            node["additionalProperties"] = draw(children)
        elif additional != "absent":
            node["additionalProperties"] = additional == "true"
    return node


def complex_nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    array = st.one_of(
        st.just({"type": "array"}),
        simple_type.map(lambda items: {"type": "array", "items": items}),
        children.map(lambda items: {"type": "array", "items": items}),
        st.booleans().map(lambda items: {"type": "array", "items": items}),
    )
    dict_like = st.one_of(simple_type, children).map(
        lambda values: {"type": "object", "additionalProperties": values}
    )
    combinator = st.builds(
        lambda key, options: {key: options},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(children | st.booleans(), min_size=1, max_size=3),
    )
    detailed = st.one_of(array, object_node(children), dict_like, enum_node, children)
    nullable = detailed.map(lambda node: {"anyOf": [node, {"type": "null"}]})
    return st.one_of(array, object_node(children), dict_like, combinator, nullable).flatmap(decorated)


schema_node = st.recursive(leaf, complex_nodes, max_leaves=8)
property_schema = st.one_of(schema_node, st.booleans())


@st.composite
def arguments_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON Schema of a tool's arguments, as MCP servers publish them."""
    schema = draw(object_node(property_schema, top=True))
    if draw(st.booleans()):
        top_keywords = {"description": xml_text, "title": json_string}
        schema.update(draw(st.fixed_dictionaries({}, optional=top_keywords)))
        schema.update(draw(custom_keywords))
    additional = draw(st.sampled_from(["absent", "false", "true", "schema"]))
    if additional != "absent":
        schema["additionalProperties"] = {"false": False, "true": True}.get(additional, {"type": "string"})
    if draw(st.integers(0, 3)) == 0:  # definitions, referred to by $ref
        def_name = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True)
        names = draw(st.lists(def_name, min_size=1, max_size=2, unique=True))
        schema["$defs"] = {name: draw(schema_node) for name in names}
        for name in names:
            schema["properties"].setdefault(f"ref_{name}", {"$ref": f"#/$defs/{name}"})
    return schema


tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", fullmatch=True)

# --- 1. escaping --------------------------------------------------------------------------------


@SETTINGS
@given(name=tool_names, description=xml_text)
def test_tool_description_survives_escaping(name: str, description: str) -> None:
    made = Tool.from_schema(name, description, {"type": "object"}, handler=_handler)
    assert made.description == description.strip()
    parsed = round_trip(made)
    assert parsed["description"] == description.strip()
    empty = {"type": "object", "properties": {}, "additionalProperties": False}
    assert_same_schema(parsed["parameters"], empty)
    assert parsed["returns"] is None


@st.composite
def text_heavy_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """Arbitrary text wherever a schema holds text: names, descriptions, enums, defaults."""
    names = draw(st.lists(json_string, unique=True, min_size=1, max_size=4))
    properties: dict[str, Any] = {}
    for name in names:
        node: dict[str, Any] = {"type": draw(st.sampled_from(["string", "array", "object"]))}
        if node["type"] == "array":
            node["items"] = {"type": "string", "enum": draw(st.lists(json_string, min_size=1, max_size=4))}
        elif node["type"] == "object":
            node["properties"] = {draw(json_string): {"type": "string", "description": draw(xml_text)}}
            node["additionalProperties"] = {"type": "string", "description": draw(nonempty_text)}
        else:
            node["enum"] = draw(st.lists(json_string, min_size=1, max_size=4))
        if draw(st.booleans()):
            node["default"] = draw(json_string)
        for key in ("title", "format", "$comment", "x-note"):
            if draw(st.booleans()):
                node[key] = draw(json_string)
        if draw(st.booleans()):
            node["examples"] = draw(st.lists(json_string, max_size=3))
        description = draw(st.none() | xml_text)
        if description is not None:
            node["description"] = description
        properties[name] = node
    required = [name for name in names if draw(st.booleans())]
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


@SETTINGS
@given(description=xml_text, schema=text_heavy_schemas())
def test_texts_survive_escaping(description: str, schema: dict[str, Any]) -> None:
    made = Tool.from_schema("t", description, schema, handler=_handler)
    parsed = round_trip(made)
    assert parsed["description"] == description.strip()
    assert_same_schema(parsed["parameters"], made.parameters)
    params = ET.fromstring(render_tools_xml([made]))[0].findall("param")
    assert [param.get("name") for param in params] == list(schema["properties"])


@SETTINGS
@given(descriptions=st.lists(xml_text, min_size=1, max_size=4))
def test_several_tools_keep_their_own_texts(descriptions: list[str]) -> None:
    tools = [
        Tool.from_schema(
            f"tool_{i}", text, {"properties": {text: {"type": "string", "description": text}}}, _handler
        )
        for i, text in enumerate(descriptions)
    ]
    parsed = parse_tools_xml(render_tools_xml(tools))
    assert [item["name"] for item in parsed] == [made.name for made in tools]
    assert [item["description"] for item in parsed] == [text.strip() for text in descriptions]
    for item, made in zip(parsed, tools):
        assert_same_schema(item["parameters"], made.parameters)


examples_lists = st.lists(
    st.dictionaries(json_string, json_value, max_size=3).filter(
        lambda example: len(example_json(example)) <= MAX_EXAMPLE_CHARS
    ),
    max_size=MAX_EXAMPLES,
    unique_by=example_json,
)


@SETTINGS
@given(description=xml_text, examples=examples_lists)
def test_examples_survive_escaping(description: str, examples: list[dict[str, Any]]) -> None:
    schema = {"type": "object", "additionalProperties": True}  # any arguments: any example fits
    made = Tool.from_schema("t", description, schema, handler=_handler, examples=examples)
    parsed = round_trip(made)
    assert typed(parsed["examples"]) == typed(examples)
    assert parsed["description"] == description.strip()
    assert_same_schema(parsed["parameters"], made.parameters)
    tags = [child.tag for child in ET.fromstring(render_tools_xml([made]))[0]]
    assert tags == ["example"] * len(examples)
    assert typed(made.to_json_schema()["function"]["parameters"].get("examples", [])) == typed(examples)


def test_carriage_returns_become_newlines() -> None:
    made = Tool.from_schema(
        "t", "a\r\nb", {"properties": {"x": {"type": "string", "description": "c\r\nd\re"}}}, _handler
    )
    assert made.description == "a\nb"
    text = render_tools_xml([made])
    assert "\r" not in text
    (parsed,) = parse_tools_xml(text)
    assert parsed["description"] == "a\nb"
    assert parsed["parameters"]["properties"]["x"] == {"type": "string", "description": "c\nd\ne"}


def test_escaping_example() -> None:
    """One fixed case: markup in texts stays text (the format itself is not pinned here)."""
    made = Tool.from_schema(
        "t",
        'Use <b> & "q" </tool>',
        {
            "properties": {
                "a<b": {
                    "type": "string",
                    "enum": ["x&y", "</tool>", "10"],
                    "default": "]]>",
                    "description": "1 < 2\n\tok",
                }
            },
            "required": ["a<b"],
        },
        _handler,
    )
    text = render_tools_xml([made])
    assert text.count("<tool ") == 1 and text.count("</tool>") == 1
    assert "<b>" not in text and "]]>" not in text
    tool_element = ET.fromstring(text)[0]
    assert tool_element.text == 'Use <b> & "q" </tool>\n'
    (param,) = tool_element.findall("param")
    assert param.get("name") == "a<b"
    assert param.text == "1 < 2\n\tok"
    (parsed,) = parse_tools_xml(text)
    assert parsed["description"] == 'Use <b> & "q" </tool>'
    assert_same_schema(parsed["parameters"], made.parameters)
    assert parsed["parameters"]["properties"]["a<b"]["enum"] == ["x&y", "</tool>", "10"]
    assert parsed["parameters"]["properties"]["a<b"]["default"] == "]]>"


# --- 2. XML -> JSON Schema round trip -----------------------------------------------------------


@settings(SETTINGS, max_examples=120)
@given(description=xml_text, schema=arguments_schemas())
def test_schema_round_trip(description: str, schema: dict[str, Any]) -> None:
    made = Tool.from_schema("t", description, schema, handler=lambda **kw: kw)
    parsed = round_trip(made)
    assert parsed["description"] == made.description
    assert_same_schema(parsed["parameters"], made.parameters)


@pytest.mark.parametrize(
    "node",
    [
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": "d"},
        {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "description": "d"},
        {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}], "default": "x"},
        {"anyOf": [{"type": "string", "description": "inner"}, {"type": "null"}]},
        {"anyOf": [{"type": "string", "default": "inner"}, {"type": "null"}]},
        {
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"type": "null"},
            ]
        },
        {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]},
        {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 1}]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": ""},
        {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}], "description": ""},
        {"type": ["string"]},
        {"type": ["string", "null"], "description": ""},
        {"type": "string", "description": ""},
        {
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
            "required": ["a", "b"],
        },
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "zzz"]},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": []},
        {"type": "object", "properties": {}, "required": ["a"]},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        {"type": "array", "items": True},
        {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
        {"enum": []},
        {"enum": [[1, "a|b"], {"k": None}]},
        {"enum": ["a|b", "c"]},
        {"enum": ["", ""]},
        {"enum": [1, 1.0, True, "1", None, "null"]},
        {"const": "10", "default": "null", "examples": ["[x", 1]},
        {"$ref": "#/$defs/X"},
        {"$ref": "other.json#/x"},
        {"name": "n", "values": 3, "ref": "r", "option": [1], "returns": {"a": "<b>"}},
        {"allOf": [True, {"type": "string"}]},
        {"not": {"type": "string"}},
        {"description": "\n"},
        {},
        {"default": 1},
        {"enum": [1, "a"]},
        {"type": "string", "default": "x"},
        {"type": "array", "items": {"type": "array", "items": {"type": "string"}}, "default": [["a"]]},
        {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "integer"}]},
        {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        {"anyOf": [{"type": "array", "items": {"type": "string"}, "minItems": 1}, {"type": "null"}]},
        {"anyOf": [{"type": "array", "items": {"type": "string", "minLength": 1}}, {"type": "null"}]},
        {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"default": 1}}},
        {"description": "a\n\n", "type": "object", "properties": {"b": {"type": "string"}}},
    ],
)
def test_schema_round_trip_examples(node: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"p": node}, "$defs": {"X": {"type": "string"}}}
    made = Tool.from_schema("t", "d", schema, handler=_handler)
    assert_same_schema(round_trip(made)["parameters"], made.parameters)


def test_top_level_keywords_round_trip() -> None:
    schema = {
        "type": "object",
        "description": "args",
        "x-label": "10",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": True,
        "minProperties": 1,
        "$custom": "<c>",
    }
    made = Tool.from_schema("t", "d", schema, handler=_handler)
    assert_same_schema(round_trip(made)["parameters"], made.parameters)


def test_required_out_of_property_order_round_trips() -> None:
    schema = {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b", "a"]}
    made = Tool.from_schema("t", "d", schema, handler=_handler)
    assert_same_schema(round_trip(made)["parameters"], made.parameters)


def _parameters_of(node: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    made = Tool.from_schema("t", "d", {"type": "object", "properties": {"p": node}}, handler=_handler)
    return round_trip(made)["parameters"], made.parameters


@pytest.mark.parametrize(
    "node",
    [
        {"anyOf": [{"type": "string"}]},
        {"anyOf": [{"type": "integer"}]},
        {"anyOf": [{"type": "array", "items": {"type": "string"}}]},
        {"anyOf": [{"type": "null"}], "description": "d"},
    ],
)
def test_any_of_with_one_plain_type(node: dict[str, Any]) -> None:
    """Regression: one option was written as that plain type and read back without ``anyOf``."""
    parsed, expected = _parameters_of(node)
    assert_same_schema(parsed, expected)


@pytest.mark.parametrize(
    "inner",
    [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "integer", "minimum": 0}],
    ids=["plain", "array", "detailed"],
)
@pytest.mark.parametrize("default", [None, "absent"])
def test_empty_description_on_nullable_node(inner: dict[str, Any], default: Any) -> None:
    """Regression: ``description: ""`` on ``anyOf: [X, null]`` was read back inside X."""
    node = {"anyOf": [inner, {"type": "null"}], "description": ""}
    if default != "absent":
        node["default"] = default
    parsed, expected = _parameters_of(node)
    assert_same_schema(parsed, expected)


@pytest.mark.parametrize(
    "node",
    [
        {"type": "string", "schema": "x"},  # the attribute that marks a boolean schema
        {"type": "string", "schema": True},
        {"type": "string", "xmlns": "urn:x"},  # would declare a namespace
        {"type": "object", "properties": {"a": {"type": "string", "xmlns": ""}}},
        {"type": "string", "xml-lang": "en", "XMLfoo": 1},
        {"type": "string", "returns": "r", "name": "n"},
    ],
)
def test_keywords_that_collide_with_xml(node: dict[str, Any]) -> None:
    parsed, expected = _parameters_of(node)
    assert_same_schema(parsed, expected)


# --- 2b. foreign schemas: what tells a model nothing is left out, the rest kept ------------------

_NOISE = ("$schema", "$comment")
_NAMED_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")


def schema_nodes(node: Any, name: str | None = None, top: bool = True) -> Any:
    """Every (node, its name or None, whether it is the top) in a schema position."""
    if not isinstance(node, dict):
        return
    yield node, name, top
    for key, value in node.items():
        if key in _NAMED_MAPS and isinstance(value, dict):
            for each, sub in value.items():
                yield from schema_nodes(sub, each, False)
        elif key == "patternProperties" and isinstance(value, dict):
            for sub in value.values():
                yield from schema_nodes(sub, None, False)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for sub in value:
                yield from schema_nodes(sub, None, False)
        elif key in _SCHEMA_NODES:
            yield from schema_nodes(value, None, False)


def without_annotations(node: Any) -> Any:
    """The schema with every title, ``$schema`` and ``$comment`` keyword removed (not names)."""
    if not isinstance(node, dict):
        return node
    result = {}
    for key, value in node.items():
        if key in (*_NOISE, "title"):
            continue
        if key in (*_NAMED_MAPS, "patternProperties") and isinstance(value, dict):
            value = {each: without_annotations(sub) for each, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [without_annotations(sub) for sub in value]
        elif key in _SCHEMA_NODES:
            value = without_annotations(value)
        result[key] = value
    return result


def _letters(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


@st.composite
def foreign_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """`arguments_schemas` as generators write them: ``$schema``, titles that restate names (the
    way pydantic writes them), and properties literally named ``title``, ``$schema``, ``$comment``."""
    schema = draw(arguments_schemas())
    for node, name, top in list(schema_nodes(schema)):
        if name is not None and draw(st.booleans()):
            node["title"] = draw(st.sampled_from([name, name.title(), name.replace("_", " ").upper()]))
        if top and draw(st.booleans()):
            node["title"] = draw(json_string)
    for name in draw(st.lists(st.sampled_from(["title", "$schema", "$comment"]), unique=True)):
        schema["properties"][name] = draw(property_schema)
    if draw(st.booleans()):
        schema["$schema"] = draw(
            st.sampled_from(
                ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"]
            )
        )
    return schema


def _as_given(schema: dict[str, Any]) -> dict[str, Any]:
    """What `Tool.from_schema` adds to any schema, without its cleaning."""
    parameters = {"type": "object", **schema}
    parameters.setdefault("properties", {})
    parameters.setdefault("additionalProperties", False)
    if parameters.get("required") == []:
        del parameters["required"]
    return parameters


@settings(SETTINGS, max_examples=120)
@given(description=xml_text, schema=foreign_schemas(), data=st.data())
def test_foreign_schema_noise_is_left_out_and_nothing_else(
    description: str, schema: dict[str, Any], data: st.DataObject
) -> None:
    import jsonschema

    made = Tool.from_schema("t", description, schema, handler=_handler)
    for node, name, top in schema_nodes(made.parameters):
        assert not set(_NOISE) & set(node), node
        if "title" in node:
            assert not top and not node.get("description"), node
            assert name is None or _letters(node["title"]) != _letters(name), (name, node)
    # Names, values and every other keyword are as they were.
    assert_same_schema(without_annotations(made.parameters), without_annotations(_as_given(schema)))
    # A title that was the node's only explanation stays.
    for (cleaned, _, _), (given_node, name, top) in zip(
        schema_nodes(made.parameters), schema_nodes(_as_given(schema))
    ):
        title = given_node.get("title")
        restated = name is not None and isinstance(title, str) and _letters(title) == _letters(name)
        if isinstance(title, str) and not (top or restated or given_node.get("description")):
            assert cleaned["title"] == title
    # The XML still reads back into the schema the tool validates with, and cleaning is done once.
    assert_same_schema(round_trip(made)["parameters"], made.parameters)
    assert Tool.from_schema("t", description, made.parameters, handler=_handler).parameters == made.parameters
    # Validation is neither looser nor stricter.
    before = jsonschema.Draft202012Validator(_as_given(schema))
    names = [*schema["properties"], "other"]
    for _ in range(5):
        arguments = data.draw(st.dictionaries(st.sampled_from(names), json_value, max_size=4))
        assert made._schema_validator.is_valid(arguments) == before.is_valid(arguments)
    defaults = {
        name: prop["default"]
        for name, prop in schema["properties"].items()
        if isinstance(prop, dict) and "default" in prop
    }
    assert made._schema_validator.is_valid(defaults) == before.is_valid(defaults)


# --- 3. byte stability --------------------------------------------------------------------------


@settings(SETTINGS, max_examples=40)
@given(description=xml_text, schema=arguments_schemas())
def test_rendering_is_byte_stable(description: str, schema: dict[str, Any]) -> None:
    first = Tool.from_schema("t", description, schema, handler=_handler)
    second = Tool.from_schema("t", description, schema, handler=_handler)
    text = render_tools_xml([first])
    assert render_tools_xml([first]) == text
    assert render_tools_xml([second]) == text
    assert render_tools_xml([first, second]) == render_tools_xml([second, first])
    assert tool_xml(first) == tool_xml(second)
    assert text == "<tools>\n" + tool_xml(first) + "\n</tools>"


HELPER_MODULE = '''
import enum
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # typing.TypedDict needs Python 3.12 for pydantic

from meowgent_nb import Tool, render_tools_xml, tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Place(TypedDict):
    city: str
    country: Optional[str]


class Point(BaseModel):
    """A point on the map."""

    x: float = Field(description="East, in km")
    y: float = 0.0
    tags: frozenset[str] = frozenset({"north", "south", "east", "west", "up", "down"})


class Tree(BaseModel):
    label: str
    children: list["Tree"] = []


@tool
def plan(
    places: list[Place],
    colors: list[Color] = [Color.RED, Color.GREEN],
    words: frozenset[str] = frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}),
    scores: dict[str, int] = {"b": 2, "a": 1, "c": 3},
    mode: Literal["fast", "slow", "10", "a|b"] = "fast",
) -> str:
    """Plan a trip <over> "places" & more: é 🐱.

    Args:
        places: Where to go.
        colors: Colors of the pins.
    """
    return ""


@tool
async def locate(
    point: Optional[Point] = None, tree: Tree | None = None, title: Annotated[str, "The title"] = ""
) -> dict:
    """Locate things."""
    return {}


by_schema = Tool.from_schema(
    "by_schema",
    "From a schema.",
    {
        "type": "object",
        "properties": {
            "q": {"type": "string", "enum": ["10", "null", "a|b", "[x", "", "a b"], "default": "null"},
            "n": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": None},
            "m": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "number"}}},
        },
        "required": ["q"],
    },
    handler=lambda **kw: kw,
)

@tool
def paint(
    colors: set[Color] = {Color.RED, Color.GREEN, Color.BLUE},
    marks: set[int | str] = {1, "a", "b", "c", 2},
) -> None:
    """Set defaults whose items cannot be sorted: their order is the set's, which varies by process."""


TOOLS = [plan, locate, by_schema, paint]


class Style(BaseModel):
    colors: set[Color] = {Color.RED, Color.GREEN, Color.BLUE}


@tool
def style_it(style: Style) -> None:
    """A set default inside a model."""


@tool
def palette(palettes: dict[str, set[Color]] = {"p": {Color.RED, Color.GREEN, Color.BLUE}}) -> None:
    """A set inside a default value."""


NESTED_MODEL_SET_DEFAULT = [style_it]
NESTED_SET_IN_DEFAULT = [palette]
'''


def _import_helper(directory: Any) -> Any:
    path = directory / "xml_stability_helper.py"
    path.write_text(HELPER_MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("xml_stability_helper", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["xml_stability_helper"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["xml_stability_helper"]
    return module


HASH_SEEDS = ("0", "1", "4242")
TOOL_SETS = ("TOOLS", "NESTED_MODEL_SET_DEFAULT", "NESTED_SET_IN_DEFAULT")


@pytest.fixture(scope="module")
def bytes_per_hash_seed(tmp_path_factory: Any) -> dict[str, dict[str, bytes]]:
    """Each of the helper's `TOOL_SETS` rendered by fresh interpreters with different string
    hashing: one interpreter per seed renders them all (an interpreter per set and seed took 9)."""
    directory = tmp_path_factory.mktemp("xml-stability")
    (directory / "xml_stability_helper.py").write_text(HELPER_MODULE, encoding="utf-8")
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(directory)!r})\n"
        "import xml_stability_helper as helper\n"
        f"print(json.dumps({{name: helper.render_tools_xml(getattr(helper, name)) for name in {TOOL_SETS!r}}}))\n"
    )
    outputs = {}
    for seed in HASH_SEEDS:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, check=True, timeout=120
        )
        outputs[seed] = {name: text.encode("utf-8") for name, text in json.loads(done.stdout).items()}
    return outputs


def test_rendering_is_byte_stable_across_processes(tmp_path: Any, bytes_per_hash_seed) -> None:
    helper = _import_helper(tmp_path)
    expected = render_tools_xml(helper.TOOLS).encode("utf-8")
    # The helper's tools round trip too, so the bytes compared carry the whole schema.
    for made, parsed in zip(helper.TOOLS, parse_tools_xml(expected.decode("utf-8")), strict=True):
        assert_same_schema(parsed["parameters"], made.parameters)
    outputs = {seed: rendered["TOOLS"] for seed, rendered in bytes_per_hash_seed.items()}
    assert outputs == dict.fromkeys(HASH_SEEDS, expected)


@pytest.mark.parametrize("tools", ["NESTED_MODEL_SET_DEFAULT", "NESTED_SET_IN_DEFAULT"])
def test_nested_set_default_is_byte_stable_across_processes(bytes_per_hash_seed, tools: str) -> None:
    outputs = {seed: rendered[tools] for seed, rendered in bytes_per_hash_seed.items()}
    assert len(outputs) == len(HASH_SEEDS) and len(set(outputs.values())) == 1, outputs


# --- 4. decorated functions ---------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 10


class Point(BaseModel):
    """A point on the map."""

    x: float = Field(description="East, in km")
    y: float = 0.0
    label: str | None = None


class Route(BaseModel):
    start: Point
    stops: list[Point] = []
    via: Point | None = None


class Place(TypedDict):
    city: str
    country: str | None


@dataclasses.dataclass
class Window:
    start: int
    end: int = 10


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


def get_weather(
    city: str, unit: Literal["celsius", "fahrenheit"] = "celsius", days: int | None = None
) -> str:
    """Get the current weather for a city.

    Args:
        city: City name, e.g. Paris
        unit: The unit <C|F> & "more"
        days: How many days ahead.

    Returns:
        A one-line weather report
    """
    return ""


def unions(a: int | str, b: int | list[str] | None = None, c: float | bool = 1.5) -> None:
    """Unions of things."""


def literals(
    mode: Literal["10", "null", "a|b", "[x", "", "a b"] = "null", n: Literal[1, 2, True] = 1
) -> None:
    """Literals that read as JSON."""


def enums(color: Color, level: Level = Level.HIGH, colors: list[Color] = [Color.RED]) -> None:
    """Enums."""


def nested(route: Route, maybe: Route | None = None, points: dict[str, Point] = {}) -> Point:
    """Nested pydantic models."""
    return route.start


def typed_dicts(place: Place, places: list[Place] = [], window: Window | None = None) -> None:
    """A TypedDict and a dataclass."""


def defaults(
    text: str = "10",
    word: str = "null",
    items: list[int] = [1, 2],
    mapping: dict[str, float] = {"a": 1.0},
    flag: bool = False,
    ratio: float = 0.5,
    nothing: None = None,
    anything: Any = "x",
) -> None:
    """Defaults of every kind."""


def titled(
    title: str, name: Annotated[str, "The <name>"] = "", description: str = "", type: str = ""
) -> None:
    """Parameters named like schema keywords.

    Args:
        title: The title
    """


def constrained(
    count: Annotated[int, Field(ge=0, le=10)] = 3,
    code: Annotated[str, Field(pattern=r"^[a-z]+$", max_length=5)] = "ab",
    tags: Annotated[list[str], Field(min_length=1)] = ["x"],
    only: int = Field(2, description="By Field()"),
) -> None:
    """Constraints."""


def positional(a: int, /, b: str = "b") -> None:
    """Positional-only."""


def recursive(tree: Tree, forest: list[Tree] | None = None) -> None:
    """A recursive model."""


async def fetch(url: str, timeout: float | None = 10.0) -> bytes:
    """Fetch a URL."""
    await asyncio.sleep(0)
    return b""


def no_arguments() -> int:
    """Nothing to pass."""
    return 1


DECORATED = [
    get_weather,
    unions,
    literals,
    enums,
    nested,
    typed_dicts,
    defaults,
    titled,
    constrained,
    positional,
    recursive,
    fetch,
    no_arguments,
]


@pytest.mark.parametrize("function", DECORATED, ids=[f.__name__ for f in DECORATED])
def test_decorated_function_round_trip(function: Any) -> None:
    made = tool(function)
    parsed = round_trip(made)
    assert parsed["description"] == made.description
    # A bare type ("int") is not written: it tells the model little (see render._tool_element).
    assert parsed["returns"] == (None if made.returns == made.output_type else made.returns)
    assert_same_schema(parsed["parameters"], made.parameters)


def test_decorated_examples_are_what_they_say() -> None:
    """The cases above exercise what they are named for (guards against a silent no-op)."""
    assert tool(fetch).is_async
    assert "title" in tool(titled).parameters["properties"]
    assert "$defs" in tool(recursive).parameters
    assert tool(get_weather).returns == "str: A one-line weather report"
    assert tool(literals).parameters["properties"]["mode"]["enum"] == ["10", "null", "a|b", "[x", "", "a b"]
