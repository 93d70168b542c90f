"""A server's elicitation form: its requested schema read into fields, and answers checked against it.

`form_from_schema` reads MCP's restricted form schema (one object of flat string, number,
boolean and choice fields) into an `ElicitForm` of `FormField`s, or raises `ElicitSchemaError`
listing every way it leaves that shape; `parse_entry` turns what a person typed into a value;
`check_content` checks a whole answer before it goes back. Pure: the widget form and the
terminal prompts use it. A server is outside input, so sizes and numbers are bounded here.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from ...errors import MeowgentError
from ...models.wire_values import WireError, shown, unicode

__all__ = [
    "ElicitForm",
    "ElicitSchemaError",
    "FormField",
    "check_content",
    "check_value",
    "form_from_schema",
    "parse_entry",
]

MAX_FIELDS = 50
MAX_OPTIONS = 500
MAX_TEXT = 2_000  # characters of a title, a description or an option's title that are kept
MESSAGE_SHOWN = 4_000  # characters of the server's message a person is shown
_FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
Kind = Literal["string", "number", "integer", "boolean", "choice", "choices"]


class ElicitSchemaError(MeowgentError, ValueError):
    """A server's requested schema is not the flat form MCP allows; ``problems`` says where."""

    def __init__(self, problems: Sequence[str]):
        self.problems = tuple(problems)
        super().__init__("the server's form cannot be shown: " + "; ".join(self.problems))


@dataclass(frozen=True)
class FormField:
    """One field of a server's form."""

    name: str
    """The key of the answer's content."""
    kind: Kind
    title: str
    """What the person reads as the field's label (the schema's ``title``, else the name)."""
    description: str = ""
    required: bool = False
    default: Any = None
    """The schema's default, or None when it has none."""
    options: tuple[tuple[str, str], ...] = ()
    """For ``choice`` and ``choices``: (value, title) pairs, in the server's order."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    """For strings: characters; for ``choices``: how many may be picked (``minItems``)."""
    max_length: int | None = None
    format: str | None = None
    """For strings: email, uri, date or date-time."""

    @property
    def hint(self) -> str:
        """What the field takes, in a few words ("a whole number from 1 to 10")."""
        if self.kind == "integer" or self.kind == "number":
            what = "a whole number" if self.kind == "integer" else "a number"
            if self.minimum is not None and self.maximum is not None:
                return f"{what} from {self.minimum:g} to {self.maximum:g}"
            if self.minimum is not None:
                return f"{what}, at least {self.minimum:g}"
            if self.maximum is not None:
                return f"{what}, at most {self.maximum:g}"
            return what
        if self.kind == "string":
            what = {
                "email": "an email address",
                "uri": "a URI",
                "date": "a date (YYYY-MM-DD)",
                "date-time": "a date and time (YYYY-MM-DDTHH:MM)",
            }.get(self.format or "", "text")
            if self.min_length is not None and self.max_length is not None:
                return f"{what}, {self.min_length} to {self.max_length} characters"
            if self.min_length is not None:
                return f"{what}, at least {self.min_length} characters"
            if self.max_length is not None:
                return f"{what}, at most {self.max_length} characters"
            return what
        if self.kind == "choices":
            return "pick any" if self.min_length is None and self.max_length is None else _count_hint(self)
        return ""


@dataclass(frozen=True)
class ElicitForm:
    """A server's request for input: its message and its fields."""

    message: str
    fields: tuple[FormField, ...]

    @property
    def shown_message(self) -> str:
        """The message as a person is shown it: cut after `MESSAGE_SHOWN` characters, saying so."""
        if len(self.message) <= MESSAGE_SHOWN:
            return self.message
        cut = len(self.message) - MESSAGE_SHOWN
        return (
            f"{self.message[:MESSAGE_SHOWN]}\n[... the server's message goes on for {cut:,} more characters]"
        )

    def defaults(self) -> dict[str, Any]:
        """The answer a person who changes nothing gives: each default that the schema has."""
        return {f.name: f.default for f in self.fields if f.default is not None}


def _count_hint(field: FormField) -> str:
    low, high = field.min_length, field.max_length
    if low is not None and high is not None:
        return f"pick {low} to {high}"
    return f"pick at least {low}" if low is not None else f"pick at most {high}"


def _text(value: Any) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not _beyond(value)


def _beyond(value: Any) -> str:
    """Why ``value``, a number, is none a form holds (NaN, infinite, past a float's range); else ""."""
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isfinite(value):
            return ""
    except OverflowError:  # an integer past a float's range (10**400)
        pass
    return f"{shown(value)} is beyond the numbers a form holds (finite, within ±1.8e308)"


def _options(name: str, spec: Mapping[str, Any], problems: list[str]) -> tuple[tuple[str, str], ...] | None:
    """The (value, title) pairs of a choice: ``enum`` (+ ``enumNames``), or ``oneOf`` / ``anyOf`` consts."""
    listed = spec.get("oneOf", spec.get("anyOf"))
    offered = spec.get("enum") if listed is None else listed
    if isinstance(offered, list) and len(offered) > MAX_OPTIONS:  # counted before anything is read
        problems.append(f"field {name!r}: it offers {len(offered):,} choices (at most {MAX_OPTIONS})")
        return None
    if listed is not None:
        if not isinstance(listed, list) or not all(
            isinstance(o, dict) and isinstance(o.get("const"), str) for o in listed
        ):
            problems.append(f'field {name!r}: its choices must be {{"const": text, "title": text}} objects')
            return None
        pairs = [(o["const"], _text(o.get("title")) or o["const"]) for o in listed]
    else:
        values = offered
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            problems.append(f"field {name!r}: its enum must be a list of strings")
            return None
        names = spec.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(values) else values
        pairs = [(v, _text(t) or v) for v, t in zip(values, titles)]
    if not pairs:
        problems.append(f"field {name!r}: it offers no choices")
        return None
    if any(len(v) > MAX_TEXT for v, _ in pairs):
        problems.append(f"field {name!r}: a choice is longer than {MAX_TEXT:,} characters")
        return None
    if len({v for v, _ in pairs}) != len(pairs):
        problems.append(f"field {name!r}: a choice is offered twice")
        return None
    return tuple(pairs)


def _bound(name: str, spec: Mapping[str, Any], key: str, problems: list[str], whole: bool = False) -> Any:
    value = spec.get(key)
    if value is None:
        return None
    if _beyond(value):
        problems.append(f"field {name!r}: {key} {_beyond(value)}")
        return None
    if not _number(value) or (whole and (value != int(value) or value < 0)):
        problems.append(
            f"field {name!r}: {key} must be a {'count' if whole else 'number'}, not {shown(value)}"
        )
        return None
    return int(value) if whole else value


def _field(name: str, spec: Any, required: bool, problems: list[str]) -> FormField | None:
    if not isinstance(spec, dict):
        problems.append(f"field {name!r}: its schema is not an object")
        return None
    kind = spec.get("type")
    common = {
        "name": name,
        "title": _text(spec.get("title")) or name,
        "description": _text(spec.get("description")),
        "required": required,
    }
    if kind in ("object", "null") or "properties" in spec or "$ref" in spec:
        problems.append(
            f"field {name!r}: it is a nested object; a form's fields must be flat (text, numbers, yes/no, choices)"
        )
        return None
    if kind == "array":
        items = spec.get("items")
        if not isinstance(items, dict) or items.get("type", "string") != "string":
            problems.append(f"field {name!r}: a list field must be a multiple choice of strings")
            return None
        options = _options(name, items, problems)
        low, high = (
            _bound(name, spec, "minItems", problems, True),
            _bound(name, spec, "maxItems", problems, True),
        )
        if options is None:
            return None
        made = FormField(kind="choices", options=options, min_length=low, max_length=high, **common)
    elif kind == "string" and any(k in spec for k in ("enum", "oneOf", "anyOf")):
        options = _options(name, spec, problems)
        if options is None:
            return None
        made = FormField(kind="choice", options=options, **common)
    elif kind == "string":
        form = spec.get("format")
        if form is not None and form not in _FORMATS:
            problems.append(f"field {name!r}: the format {shown(form)} is not one of {', '.join(_FORMATS)}")
            return None
        low, high = (
            _bound(name, spec, "minLength", problems, True),
            _bound(name, spec, "maxLength", problems, True),
        )
        made = FormField(kind="string", min_length=low, max_length=high, format=form, **common)
    elif kind in ("number", "integer"):
        low, high = _bound(name, spec, "minimum", problems), _bound(name, spec, "maximum", problems)
        made = FormField(kind=kind, minimum=low, maximum=high, **common)
    elif kind == "boolean":
        made = FormField(kind="boolean", **common)
    else:
        what = "no type" if kind is None else f"the type {shown(kind)}"
        problems.append(
            f"field {name!r}: it has {what}; a form field is a string, number, integer, boolean or choice"
        )
        return None
    if "default" in spec and spec["default"] is not None:
        problem = check_value(made, spec["default"])
        if problem is not None:
            problems.append(f"field {name!r}: its default {shown(spec['default'])} does not fit: {problem}")
            return None
        made = FormField(**{**made.__dict__, "default": spec["default"]})
    return made


def form_from_schema(message: Any, schema: Any) -> ElicitForm:
    """Read a server's ``elicitation/create`` message and requested schema into a form.

    Raises:
        ElicitSchemaError: The message or schema is not the flat form MCP allows (every problem
            listed); never another exception.
    """
    try:
        unicode([message, schema], "the request")  # text that no answer or card could hold
        return _read_form(message, schema)
    except (RecursionError, OverflowError, ValueError, TypeError) as error:  # a refusal, never a crash
        if isinstance(error, ElicitSchemaError):
            raise
        unread = f"a value in it cannot be read ({type(error).__name__}: {shown(str(error))})"
        raise ElicitSchemaError([str(error) if isinstance(error, WireError) else unread]) from None


def _read_form(message: Any, schema: Any) -> ElicitForm:
    problems: list[str] = []
    if not isinstance(message, str):
        problems.append("the message is not text")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ElicitSchemaError([*problems, "the requested schema is not an object schema"])
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict):
        raise ElicitSchemaError([*problems, "its properties are not an object"])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ElicitSchemaError([*problems, "its required list is not a list of field names"])
    if (many := max(len(properties), len(required))) > MAX_FIELDS:
        raise ElicitSchemaError([*problems, f"it has {many:,} fields (at most {MAX_FIELDS})"])
    unknown = [r for r in required if r not in properties]
    if unknown:
        problems.append(
            f"it requires fields it does not have: {', '.join(repr(r[:40]) for r in unknown[:5])}"
        )
    fields = []
    for name, spec in properties.items():
        if len(name) > 100 or not name:
            problems.append(f"a field name is {'empty' if not name else 'longer than 100 characters'}")
            continue
        made = _field(name, spec, name in required, problems)
        if made is not None:
            fields.append(made)
    if problems:
        raise ElicitSchemaError(problems)
    return ElicitForm(message, tuple(fields))


def parse_entry(field: FormField, entry: Any) -> Any:
    """The value of what a person entered in a field (text, a bool, a choice or a sequence of them).

    Returns:
        The value to send, or None for an empty optional field.

    Raises:
        ValueError: The entry does not fit; the message says what the field takes.
    """
    if field.kind in ("string", "number", "integer") and isinstance(entry, str):
        text = entry.strip() if field.kind != "string" else entry
        if text == "":
            if field.required:
                raise ValueError(f"required: enter {field.hint}")
            return None
        if field.kind == "string":
            value: Any = text
        else:
            try:
                value = int(text) if field.kind == "integer" else float(text)
            except ValueError:
                raise ValueError(
                    f"{text[:40]!r} is not {field.hint.split(',')[0].split(' from')[0]}"
                ) from None
            finite = math.isfinite(value)
            if (
                field.kind == "number"
                and finite
                and value == int(value)
                and "." not in text
                and "e" not in text.lower()
            ):
                value = int(value)
    elif field.kind == "choice" and entry in (None, ""):
        if field.required:
            raise ValueError("required: pick one")
        return None
    elif field.kind == "choices":
        value = list(entry or [])
        if not value and not field.required:
            return None
    else:
        value = entry
    problem = check_value(field, value)
    if problem is not None:
        raise ValueError(problem)
    return value


def check_value(field: FormField, value: Any) -> str | None:
    """What is wrong with ``value`` for ``field``, or None when it fits."""
    if field.kind == "string":
        if not isinstance(value, str):
            return f"expected text, got {type(value).__name__}"
        if field.min_length is not None and len(value) < field.min_length:
            return f"too short: {len(value)} characters, at least {field.min_length}"
        if field.max_length is not None and len(value) > field.max_length:
            return f"too long: {len(value):,} characters, at most {field.max_length}"
        return _format_problem(field.format, value)
    if field.kind in ("number", "integer"):
        if not _number(value) or (field.kind == "integer" and value != int(value)):
            return (
                f"expected {'a whole number' if field.kind == 'integer' else 'a number'}, got {shown(value)}"
            )
        if field.minimum is not None and value < field.minimum:
            return f"{value:g} is below the least allowed, {field.minimum:g}"
        if field.maximum is not None and value > field.maximum:
            return f"{value:g} is above the most allowed, {field.maximum:g}"
        return None
    if field.kind == "boolean":
        return None if isinstance(value, bool) else f"expected yes or no (true / false), got {shown(value)}"
    allowed = {v for v, _ in field.options}
    if field.kind == "choice":
        return (
            None
            if isinstance(value, str) and value in allowed
            else f"{shown(value)} is not one of the choices"
        )
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        return "pick from the choices given"
    if len(set(value)) != len(value):
        return "a choice is picked twice"
    if (field.min_length is not None and len(value) < field.min_length) or (
        field.max_length is not None and len(value) > field.max_length
    ):
        return f"{_count_hint(field)} (picked {len(value)})"
    return None


def _format_problem(form: str | None, value: str) -> str | None:
    if form is None or value == "":
        return None
    if form == "email":
        return None if _EMAIL.match(value) else "not an email address (name@example.org)"
    if form == "uri":
        parts = urlsplit(value)
        return (
            None if parts.scheme and (parts.netloc or parts.path) else "not a URI (https://example.org/page)"
        )
    try:
        if form == "date":
            datetime.date.fromisoformat(value)
        elif "T" not in value.upper():
            return "not a date and time (2026-12-01T17:30)"
        else:
            datetime.datetime.fromisoformat(value)
    except ValueError:
        return "not a date (2026-12-01)" if form == "date" else "not a date and time (2026-12-01T17:30)"
    return None


def check_content(form: ElicitForm, content: Any) -> list[str]:
    """Every way ``content`` (an accepted answer) does not fit ``form``; empty when it fits."""
    if not isinstance(content, dict):
        return ["the answer is not an object of field values"]
    known = {f.name: f for f in form.fields}
    problems = [f"{name[:40]!r} is not a field of the form" for name in content if name not in known]
    for name, field in known.items():
        if name not in content or content[name] is None:
            if field.required:
                problems.append(f"{name}: required")
            continue
        problem = check_value(field, content[name])
        if problem is not None:
            problems.append(f"{name}: {problem}")
    return problems
