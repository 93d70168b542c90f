"""Validating a call's arguments (`validated`), and its errors (pydantic or jsonschema) -> problem
lines a small model can act on.

One line per problem: the argument's path, what was wrong, what was given. Unknown arguments name
the arguments the tool takes; missing ones say they are required.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .render import schema_type_name

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["jsonschema_problems", "pydantic_problems", "validated"]

_MAX_INPUT_CHARS = 60


def _path(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(arguments)"


def _given(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) > _MAX_INPUT_CHARS:
        text = text[: _MAX_INPUT_CHARS - 3] + "..."
    return text


def _lower_first(message: str) -> str:
    return message[:1].lower() + message[1:]


def _noun(loc: Sequence[Any]) -> str:
    return "argument" if len(loc) == 1 else "field"


def _unknown(path: str, allowed: Sequence[str]) -> str:
    close = difflib.get_close_matches(path, allowed, n=1)
    guess = f" (did you mean {close[0]}?)" if close else ""
    if allowed:
        return f"{path}: unknown argument{guess}; this tool takes: {', '.join(allowed)}"
    return f"{path}: unknown argument; this tool takes no arguments"


def pydantic_problems(error: ValidationError, schema: dict[str, Any]) -> list[str]:
    """Problem lines for a pydantic `ValidationError` on a tool's arguments model.

    Errors inside a union (pydantic reports one per member, tagged ``x.int``, ``x.list[int]``)
    become one line for the union's argument, naming the types it allows.

    Args:
        error: The error raised by the arguments model.
        schema: The tool's arguments JSON Schema, to name what is allowed.
    """
    allowed = list(schema.get("properties", {}))
    problems: list[str] = []
    unions: dict[tuple[Any, ...], tuple[int, Any]] = {}  # path -> (line index, union schema)
    for item in error.errors(include_url=False):
        loc = tuple(item["loc"])
        union = _union_at(loc, schema)
        if union is not None:
            path_loc, options = union
            if path_loc not in unions:
                expected = " | ".join(schema_type_name(option) for option in options)
                unions[path_loc] = (len(problems), expected)
                problems.append("")
            index, expected = unions[path_loc]
            if not problems[index] or len(loc) == len(path_loc) + 1:
                given = item["input"]
                problems[index] = f"{_path(path_loc)}: input should be {expected}, got {_given(given)}"
            continue
        path = _path(loc)
        kind = item["type"]
        if kind == "missing":
            problems.append(f"{path}: missing; this {_noun(loc)} is required")
        elif kind == "extra_forbidden" and len(loc) == 1:
            problems.append(_unknown(path, allowed))
        elif kind == "extra_forbidden":
            problems.append(f"{path}: unknown field; remove it")
        elif kind in ("model_type", "model_attributes_type", "dict_type") and not loc:
            problems.append(
                "(arguments): must be a JSON object mapping argument names to values,"
                f" got {_given(item['input'])}"
            )
        else:
            problems.append(f"{path}: {_lower_first(item['msg'])}, got {_given(item['input'])}")
    return problems


def _union_at(loc: tuple[Any, ...], schema: dict[str, Any]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """Where ``loc`` enters a union (pydantic tags the member next), and the union's options."""
    defs = schema.get("$defs", {})
    node: Any = schema
    for depth, part in enumerate(loc):
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        if not isinstance(node, dict):
            return None
        options = node.get("anyOf") or node.get("oneOf")
        properties = node.get("properties", {})
        if isinstance(options, list) and not (isinstance(part, str) and part in properties):
            return loc[:depth], options
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in properties:
            node = properties[part]
        else:
            node = node.get("additionalProperties", {})
    return None


def jsonschema_problems(errors: Iterable[Any], schema: dict[str, Any]) -> list[str]:
    """Problem lines for `jsonschema` errors, worded like `pydantic_problems`.

    Args:
        errors: `jsonschema.ValidationError` objects, e.g. from ``validator.iter_errors(args)``.
        schema: The tool's arguments JSON Schema, to name what is allowed.
    """
    allowed = list(schema.get("properties", {}))
    problems = []
    missing: set[tuple[Any, ...]] = set()
    for error in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        loc = tuple(error.absolute_path)
        if error.validator == "required":
            # jsonschema yields one error per missing name; the first lists them all, in the
            # schema's order, and the others (or a second schema requiring the same) add nothing.
            given = error.instance if isinstance(error.instance, dict) else {}
            for place in [(*loc, name) for name in error.validator_value if name not in given]:
                if place not in missing:
                    missing.add(place)
                    problems.append(f"{_path(place)}: missing; this {_noun(place)} is required")
        elif error.validator == "additionalProperties" and error.validator_value is False:
            properties = error.schema.get("properties", {})
            for name in error.instance:
                if name not in properties:
                    if loc:
                        problems.append(f"{_path((*loc, name))}: unknown field; remove it")
                    else:
                        problems.append(_unknown(name, allowed))
        elif error.validator == "type" and not loc:
            problems.append(
                "(arguments): must be a JSON object mapping argument names to values,"
                f" got {_given(error.instance)}"
            )
        else:
            message = _lower_first(error.message)
            problems.append(f"{_path(loc)}: {message}")
    return problems


def validated(
    name: str, parameters: dict[str, Any], arguments: Any, schema_validator: Any, model: Any
) -> dict[str, Any]:
    """A tool's validated arguments, defaults filled in (see `Tool.validate`): with the jsonschema
    validator of a tool given as JSON Schema, else with the pydantic ``model`` of its parameters.

    Raises:
        ToolArgumentsError: One line per problem, naming the argument.
    """
    from ..errors import ToolArgumentsError

    if schema_validator is not None:
        problems = jsonschema_problems(schema_validator.iter_errors(arguments), parameters)
        if problems:
            raise ToolArgumentsError(name, problems)
        defaults = {
            key: prop["default"]
            for key, prop in parameters.get("properties", {}).items()
            if isinstance(prop, dict) and "default" in prop and key not in arguments
        }
        return {**arguments, **defaults}
    from pydantic import ValidationError

    try:
        return model.validate(arguments)
    except ValidationError as exc:
        raise ToolArgumentsError(name, pydantic_problems(exc, parameters)) from None
