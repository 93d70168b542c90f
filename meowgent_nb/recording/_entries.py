"""Cassette entries, and how a cassette's text is read into them.

An entry is one JSON object: a model's request and answer (`Entry`), a recorded tool call
(`ToolEntry`), a decision (`DecisionEntry`) or a toolbox's listing (`ListingEntry`).
`parse_entries` reads them from text laid out any way JSON allows and refuses, with one
`CassetteError` naming the file, the line and the field, whatever a JSON reader would take
silently or wrongly (NaN, huge numbers, duplicate keys, nesting past `MAX_DEPTH`) or the schema
(`_schema`) refuses. The writer checks a new entry with it too (``writing=True``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..models.base import CassetteError, ModelChunk, ToolSupport
from ._mask import MAX_DEPTH, depth_over

__all__ = [
    "FIX_LINE",
    "NOT_WRITTEN",
    "REQUEST_FIELDS",
    "DecisionEntry",
    "Entry",
    "HugeNumber",
    "ListingEntry",
    "SupportEntry",
    "ToolEntry",
    "load_entries",
    "parse_entries",
]

REQUEST_FIELDS = ("model", "think", "options", "format", "offered", "tools", "messages")
"""What a request is recognised by, in the order they are written and compared."""


@dataclass
class Entry:
    """One recorded request and its answer."""

    request: dict[str, Any]
    """The `REQUEST_FIELDS`, as stored (credentials removed, JSON values only)."""
    chunks: list[ModelChunk]
    """The answer's chunks, exactly as streamed (the last has ``done=True``)."""
    line: int = 0
    """Where the entry starts in its file (1-based)."""
    retry: Any = None
    """The `_schema.RetryFields` of an answer that failed so that it was asked again, or None."""


@dataclass
class ToolEntry:
    """One recorded tool call: the tool, its validated arguments (masked) and its result."""

    tool: str
    arguments: dict[str, Any]
    result: Any
    """The `_schema.ResultFields` as read."""
    line: int = 0


@dataclass
class DecisionEntry:
    """One recorded decision: approved, edited or denied, on a call of ``tool`` with these
    validated arguments (masked), by whom (see `_decision_tape`)."""

    decision: str
    tool: str
    arguments: dict[str, Any]
    by: str
    ran_with: dict[str, Any] | None = None
    line: int = 0
    reason: str = ""
    """A denial's reason as the model read it (after ``Denied:``); empty: none recorded."""


@dataclass
class ListingEntry:
    """What a recorded toolbox offered: its tools (`_schema.ListedToolFields`) and the
    server's instructions."""

    toolbox: str
    instructions: str | None
    listing: list[Any]
    line: int = 0
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    """The server's tools that were not offered, and why."""
    left_out: list[str] = dataclasses.field(default_factory=list)
    """The server's tools left out by the box's include / exclude."""


@dataclass
class SupportEntry:
    """What a model said of its template when the cassette was recorded (`models.base.ToolSupport`),
    so a replay follows the same protocol without asking its server."""

    model: str | None
    support: ToolSupport
    line: int = 0


def load_entries(path: Path) -> list[Entry]:
    """Every entry of the cassette at ``path``, in file order.

    Raises:
        CassetteError: The file cannot be read, is not UTF-8, is not a sequence of JSON objects,
            or an entry is malformed; the message names the line and what was wrong.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CassetteError(f"Cannot read the cassette {path}: {error.strerror or error}.") from None
    try:
        text = data.decode("utf-8-sig")  # a BOM, as some Windows editors write, is not content
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise CassetteError(
            f"Cassette {path}, line {line}: not UTF-8 text (byte 0x{data[error.start]:02x}). Save it"
            " as UTF-8, or delete the file and record again."
        ) from None
    # CR is only ever whitespace between JSON values; as a line end it must count as one.
    return parse_entries(text.replace("\r\n", "\n").replace("\r", "\n"), path)


FIX_LINE = "Fix that line, or delete the file and record again."
NOT_WRITTEN = (
    "Nothing was written: the cassette is as it was. The value came from what was being recorded"
    " (the model's backend or the tool); a cassette holds only what it reads back."
)


def parse_entries(text: str, path: Path, first_line: int = 1, *, writing: bool = False) -> list[Entry]:
    """The entries in ``text``, which starts at line ``first_line`` of ``path`` (for errors).

    ``writing``: the text is an entry about to be written (its errors say nothing was written).

    Raises:
        CassetteError: As for `load_entries`.
    """
    from ._schema import field_lines  # pydantic loads when a cassette is first read

    fix = (lambda _: NOT_WRITTEN) if writing else (lambda what: what)
    decoder = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite, object_pairs_hook=_object)
    entries, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return entries
        line = text.count("\n", 0, position) + first_line
        start = position
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            where = f"line {error.lineno + first_line - 1} column {error.colno}"
            if error.msg.startswith("Unterminated string") or not text[error.pos :].strip():
                raise CassetteError(
                    f"Cassette {path}, {where}: the file ends inside the entry that begins on line"
                    f" {line} (it was cut off, or a closing bracket is missing). "
                    + fix("Complete or delete that entry, or delete the file and record again.")
                ) from None
            raise CassetteError(
                f"Cassette {path}, {where}: not valid JSON ({error.msg}). {fix(FIX_LINE)}"
            ) from None
        except ValueError as error:  # NaN, Infinity, 1e400 (see _finite), a key twice, a number too long
            what = error if isinstance(error, _NotJson) else "a number too long to read (over 4300 digits)"
            raise CassetteError(
                f"Cassette {path}, line {line}: the entry has {what}. "
                + fix("Fix the entry, or delete the file and record again.")
            ) from None
        except RecursionError:  # deeper than the parser's stack: the same mistake as below
            value = _TOO_DEEP
        if value is _TOO_DEEP or depth_over(value, MAX_DEPTH):
            raise CassetteError(
                f"Cassette {path}, line {line}: the entry is nested deeper than {MAX_DEPTH} levels,"
                f" which no cassette entry needs. {fix('Fix the entry, or delete the file and record again.')}"
            )
        entries.append(_entry(value, path, line, partial(field_lines, text, start, first_line), fix))


_TOO_DEEP = object()


class _NotJson(ValueError):
    pass


def _not_json(constant: str) -> Any:
    raise _NotJson(f"{constant}, which is not JSON (write a number, or null)")


class HugeNumber(float):
    """A number too large for a float (``1e400``), read as infinity; ``text`` is how it was written."""

    text: str

    def __new__(cls, text: str) -> HugeNumber:
        made = super().__new__(cls, text)
        made.text = text
        return made


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):  # refused once the field it is in is known
        return HugeNumber(text)
    return number


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) < len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _NotJson(
            f"the key {json.dumps(twice, ensure_ascii=False)} twice in one object (a reader would keep"
            " only the last one); keep the one you mean"
        )
    return made


def _entry(
    value: Any,
    path: Path,
    line: int,
    lines: Callable[[], dict[tuple[Any, ...], int]],
    fix: Callable[[str], str] = lambda what: what,
) -> Entry | ToolEntry | ListingEntry | DecisionEntry | SupportEntry:
    from pydantic import ValidationError

    from ._schema import (
        ChunkFields,
        DecisionFields,
        EntryFields,
        ListingFields,
        SupportFields,
        ToolEntryFields,
        field_path,
        huge_number,
        problems,
    )

    if not isinstance(value, dict):
        raise CassetteError(
            f"Cassette {path}, line {line}: expected a JSON object per request, found"
            f" {_JSON_TYPES.get(type(value), type(value).__name__)}. {fix(FIX_LINE)}"
        )
    if value and set(value) <= set(ChunkFields.model_fields):
        raise CassetteError(
            f'Cassette {path}, line {line}: a chunk outside any request: a chunk goes in the "chunks"'
            " list of its request's entry. " + fix("Move it there, or delete the file and record again.")
        )
    root = (
        SupportFields
        if "support" in value
        else ListingFields
        if "toolbox" in value
        else DecisionFields
        if "decision" in value
        else ToolEntryFields
        if "tool" in value
        else EntryFields
    )
    try:
        fields = root.model_validate(value)
    except ValidationError as error:
        found = problems(error, lines(), line, root)
        if len(found) == 1:
            raise CassetteError(
                f"Cassette {path}, line {found[0][0]}: {found[0][1]}. {fix(FIX_LINE)}"
            ) from None
        listed = "\n".join(f"line {where}: {text}." for where, text in found[:10])
        listed += f"\n(and {len(found) - 10} more)" if len(found) > 10 else ""
        raise CassetteError(
            f"Cassette {path}, the entry on line {line} has {len(found)} mistakes:\n{listed}\n"
            + fix("Fix those lines, or delete the file and record again.")
        ) from None
    huge = huge_number(value)
    if huge is not None:
        loc, number = huge
        where = next((lines()[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines()), line)
        text = getattr(number, "text", repr(number))
        shown = text if len(text) <= 30 else text[:27] + "..."
        raise CassetteError(
            f"Cassette {path}, line {where}: {field_path(loc)} is {shown}, a number too large to read"
            f" (over 1.8e308). {fix(FIX_LINE)}"
        )
    if isinstance(fields, ToolEntryFields):
        return ToolEntry(fields.tool, fields.arguments, fields.result, line)
    if isinstance(fields, DecisionFields):
        return DecisionEntry(
            fields.decision, fields.tool, fields.arguments, fields.by, fields.ran_with, line, fields.reason
        )
    if isinstance(fields, SupportFields):
        return SupportEntry(
            fields.model, ToolSupport(fields.support, fields.why, fields.thinking_first), line
        )
    if isinstance(fields, ListingFields):
        return ListingEntry(
            fields.toolbox, fields.instructions, fields.listing, line, fields.skipped, fields.left_out
        )
    request = {key: getattr(fields, key) for key in REQUEST_FIELDS}
    retry = fields.chunks[-1].retry if fields.chunks else None
    return Entry(request, [chunk.chunk() for chunk in fields.chunks], line, retry)


_JSON_TYPES = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
