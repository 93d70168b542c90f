"""A JSON Schema from elsewhere (an MCP server, a config) without what tells a model nothing.

`object_schema` cleans, checks and normalizes the schema `Tool.from_schema` is given, so
validation, the XML the model reads and the native ``tools=`` form all see the same schema. Only
annotations go (``$schema``, ``$comment``, a ``title`` that restates a name or sits beside a
description), never a keyword that validates or that a ``$ref`` resolves by; keywords are told
from property names and values by their position. Each case is a test in tests/tools/.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["clean_schema", "object_schema"]

_NOISE = ("$schema", "$comment")
# Keywords whose value is a schema, a list of schemas, or a map of names to schemas (draft 2020-12,
# and the older spellings MCP servers still publish: definitions, dependencies, list-form items).
_ONE = frozenset(
    {
        "additionalProperties",
        "items",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_NAMED = frozenset({"properties", "$defs", "definitions", "dependentSchemas", "dependencies"})
_PATTERNS = "patternProperties"  # keyed by regular expressions, which are no names
_NOT_LETTERS = re.compile(r"[^0-9a-z]")


def clean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without ``$schema``, ``$comment`` and titles that add nothing (a new dict).

    Args:
        schema: A tool's arguments schema, as published; parts that are not valid JSON Schema
            are left as they are, for the schema check to report.
    """
    return _clean(schema, name=None, top=True)


def _clean(node: Any, name: str | None, top: bool = False) -> Any:
    if not isinstance(node, Mapping):
        return node  # a boolean schema, or something the schema check will refuse
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOISE or (key == "title" and _says_nothing(node, name, top)):
            continue
        if key in _ONE and isinstance(value, Mapping):
            value = _clean(value, None)
        elif key in _MANY and isinstance(value, list):
            value = [_clean(option, None) for option in value]
        elif key in _NAMED and isinstance(value, Mapping):
            value = {each: _clean(sub, each) for each, sub in value.items()}
        elif key == _PATTERNS and isinstance(value, Mapping):
            value = {pattern: _clean(sub, None) for pattern, sub in value.items()}
        cleaned[key] = value
    return cleaned


def _says_nothing(node: Mapping[str, Any], name: str | None, top: bool) -> bool:
    """Whether the node's title is redundant: at the top, beside a description, or its name."""
    title = node["title"]
    if top or not isinstance(title, str) or node.get("description"):
        return True
    return name is not None and _NOT_LETTERS.sub("", title.lower()) == _NOT_LETTERS.sub("", name.lower())


def object_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check a JSON Schema of arguments and give it the conventions every tool follows."""
    if not isinstance(schema, Mapping):
        return {}, [f"the schema must be a dict (a JSON Schema object), got {type(schema).__name__}"]
    import jsonschema

    parameters = clean_schema(schema)
    problems = []
    if parameters.setdefault("type", "object") != "object":
        problems.append(f'the schema must have "type": "object", got {parameters["type"]!r}')
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as exc:
        problems.append(f"the schema is not a valid JSON Schema: {exc.message}")
    parameters.setdefault("properties", {})
    parameters.setdefault("additionalProperties", False)
    if parameters.get("required") == []:
        del parameters["required"]
    return parameters, problems
