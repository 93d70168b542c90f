"""Validation errors (pydantic or jsonschema) -> problem lines a small model can act on.

One line per problem: the argument's path, what was wrong, what was given. Unknown arguments name
the arguments the tool takes; missing ones say they are required.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

__all__ = ["jsonschema_problems", "pydantic_problems"]

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
    if allowed:
        return f"{path}: unknown argument; this tool takes: {', '.join(allowed)}"
    return f"{path}: unknown argument; this tool takes no arguments"


def pydantic_problems(error: ValidationError, allowed: Sequence[str]) -> list[str]:
    """Problem lines for a pydantic `ValidationError` on a tool's arguments model.

    Args:
        error: The error raised by the arguments model.
        allowed: The tool's argument names, for the "unknown argument" line.
    """
    problems = []
    for item in error.errors(include_url=False):
        loc = tuple(item["loc"])
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


def jsonschema_problems(errors: Iterable[Any], allowed: Sequence[str]) -> list[str]:
    """Problem lines for `jsonschema` errors, worded like `pydantic_problems`.

    Args:
        errors: `jsonschema.ValidationError` objects, e.g. from ``validator.iter_errors(args)``.
        allowed: The tool's argument names, for the "unknown argument" line.
    """
    problems = []
    for error in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        loc = tuple(error.absolute_path)
        if error.validator == "required":
            for name in error.validator_value:
                if isinstance(error.instance, dict) and name not in error.instance:
                    problems.append(f"{_path((*loc, name))}: missing; this {_noun((*loc, name))} is required")
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
