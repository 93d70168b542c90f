"""Tool examples: argument dicts that show a model what a good call of a tool looks like.

`check_examples` checks an author's examples when the tool is defined (a call the tool accepts,
written as the schema says rather than as lax validation coerces it, JSON, at most `MAX_EXAMPLES`
of at most `MAX_EXAMPLE_CHARS` characters, no repeats) and raises one error naming each bad one;
`usable_examples` keeps an MCP server's examples that pass and leaves out the rest, since they
are outside input. The rules a person reads are in docs/guides/tools.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ToolArgumentsError
from ._validation import jsonschema_problems
from ._xml_schema import example_json

__all__ = [
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "check_examples",
    "example_json",
    "split_examples",
    "usable_examples",
]

MAX_EXAMPLES = 5
"""Examples a tool may have: each one costs prompt tokens on every turn."""
MAX_EXAMPLE_CHARS = 300
"""Characters of compact JSON an example may have (about 80 tokens)."""

_MAX_DEPTH = 20
_MAX_CHECKED = 4 * MAX_EXAMPLES  # outside examples looked at, however many a listing holds

Validate = Callable[[Any], Any]


def split_examples(schema: Any) -> tuple[Any, Any]:
    """``schema`` without its top-level ``examples`` keyword, and that keyword's value (or None).

    JSON Schema's own ``examples`` at the top of an arguments schema is a list of argument
    objects: a tool's examples, not part of what validates.
    """
    if not isinstance(schema, Mapping) or "examples" not in schema:
        return schema, None
    return {key: value for key, value in schema.items() if key != "examples"}, schema["examples"]


def _shape_problem(examples: Any) -> str | None:
    if isinstance(examples, Mapping):
        return "examples must be a list of argument dicts, got one dict; wrap it in a list: examples=[{...}]"
    if not isinstance(examples, (list, tuple)):
        return f"examples must be a list of argument dicts, got {type(examples).__name__}"
    return None


def check_examples(
    examples: Any, validate: Validate, schema: dict[str, Any] | None
) -> tuple[tuple[str, ...], list[str]]:
    """An author's examples: all of them, as `example_json` texts, or every problem.

    Args:
        examples: What was given as ``examples=`` (None: no examples).
        validate: The tool's own validation (`Tool.validate`).
        schema: The tool's JSON Schema, for tools whose validation coerces; None when
            ``validate`` is already a JSON Schema check.

    Returns:
        (texts, problems); the texts are only meaningful when problems is empty.
    """
    if examples is None:
        return (), []
    shape = _shape_problem(examples)
    if shape is not None:
        return (), [shape]
    problems = []
    if len(examples) > MAX_EXAMPLES:
        problems.append(
            f"{len(examples)} examples given, at most {MAX_EXAMPLES}: every example is in the prompt on"
            " every turn; keep the few that show different uses"
        )
    texts: list[str] = []
    checker = _Checker(validate, schema)
    for index, example in enumerate(examples):
        text, found = checker.check(index, example, texts)
        problems.extend(found)
        if text is not None:
            texts.append(text)
    return tuple(texts), problems


def usable_examples(
    examples: Any, validate: Validate, schema: dict[str, Any] | None = None
) -> tuple[tuple[str, ...], list[str]]:
    """Examples from elsewhere (an MCP server): the first `MAX_EXAMPLES` that pass, and why the
    others were left out. Never raises for what the examples hold.

    Returns:
        (texts, problems): the kept examples as `example_json` texts, one line per left-out one.
    """
    shape = _shape_problem(examples)
    if shape is not None:
        return (), [shape]
    texts: list[str] = []
    problems: list[str] = []
    checker = _Checker(validate, schema)
    for index, example in enumerate(examples):
        if len(texts) == MAX_EXAMPLES or index == _MAX_CHECKED:
            problems.append(f"examples[{index}:] left out: at most {MAX_EXAMPLES} examples are kept")
            break
        text, found = checker.check(index, example, texts)
        if text is not None:
            texts.append(text)
        else:
            problems.extend(found[:1])  # one line per left-out example is enough to say why
    return tuple(texts), problems


class _Checker:
    """Checks one example at a time against a tool's validation (and its schema, when given)."""

    def __init__(self, validate: Validate, schema: dict[str, Any] | None):
        self.validate = validate
        self.schema = schema
        self._validator: Any = None

    def check(self, index: int, example: Any, earlier: list[str]) -> tuple[str | None, list[str]]:
        """(the example's text, []) when it is usable, else (None, its problems)."""
        where = f"examples[{index}]"
        if not isinstance(example, Mapping):
            return None, [f"{where} must be a dict of argument names to values, got {type(example).__name__}"]
        problem = _json_problem(example, "", 0)
        if problem is not None:
            return None, [f"{where}: {problem}"]
        text = example_json(example)
        if len(text) > MAX_EXAMPLE_CHARS:
            return None, [
                f"{where} is {len(text)} characters as JSON, more than {MAX_EXAMPLE_CHARS}; shorten"
                " its values: an example shows the shape of a call, not a whole input"
            ]
        if text in earlier:
            return None, [f"{where} repeats examples[{earlier.index(text)}]; leave it out"]
        plain = json.loads(text)  # exactly what the model reads (tuples are lists, enums values)
        try:
            self.validate(plain)
        except ToolArgumentsError as error:
            return None, [
                f"{where} is not a call the tool accepts: {line}; correct it or leave it out"
                for line in error.problems
            ]
        strict = self._strict_problems(plain)
        if strict:
            return None, [
                f"{where}: {line}; the model copies an example as written, so write each value"
                " as its schema type"
                for line in strict
            ]
        return text, []

    def _strict_problems(self, plain: dict[str, Any]) -> list[str]:
        if self.schema is None:
            return []
        if self._validator is None:
            import jsonschema  # only tools with examples need it here

            self._validator = jsonschema.Draft202012Validator(self.schema)
        return jsonschema_problems(self._validator.iter_errors(plain), self.schema)


def _json_problem(value: Any, path: str, depth: int) -> str | None:
    """Why ``value`` (at ``path``) is not plain JSON, or None when it is."""
    here = path or "the example"
    if depth > _MAX_DEPTH:
        return f"{here} nests deeper than {_MAX_DEPTH} levels; an example shows the shape of a call"
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return f"{here} is {value!r}, which JSON cannot carry; use a finite number or null"
    if isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{position}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{here} has the key {key!r} ({type(key).__name__}); JSON object keys are strings"
            problem = _json_problem(item, f"{path}.{key}" if path else key, depth + 1)
            if problem is not None:
                return problem
        return None
    return (
        f"{here} is of type {type(value).__name__}, which JSON cannot carry; write it as the model would:"
        " a string, number, boolean, null, list or dict"
    )
