"""The cassette file: recorded model requests as readable JSON, and `Cassette`, its reader and writer.

A cassette (``NAME.cassette.json``) is a sequence of JSON objects, one per model request: what
the model was sent (the fields in `REQUEST_FIELDS`) and the chunks it streamed back. Tools marked
``record=True`` add two more kinds of object (see `_cassette_tools`): a call
(``{"tool", "arguments", "result"}``) and a toolbox's listing (``{"toolbox", "instructions",
"listing"}``). Each is
written over several lines, one field, message or chunk a line, keys sorted, non-ASCII kept as it
is, so a re-recording diffs line by line. Any layout loads: one object a line (JSON Lines),
pretty-printed, reformatted by an editor, with a BOM or Windows line ends. New recordings are
appended after a blank line; what the file held stays byte for byte, so hand edits stay. Every
field is checked where the file is read (`_cassette_schema`): a mistake is one `CassetteError` that
names the line, the field and what is wrong with it. A key given twice in one object, nesting
deeper than `MAX_DEPTH` levels and numbers out of range are mistakes too. A new entry is checked
the same way *before* it is written, and written atomically (a new file beside it, then renamed
over it), so a value the reader would refuse, or a failure while writing, leaves the file as it was.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
import secrets as _random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ._cassette_mask import MASKED, MAX_DEPTH, VALUE_DEPTH, Mask, depth_over, host_credentials, scrub
from .base import CassetteError, ModelChunk, ModelRequest

__all__ = [
    "REQUEST_FIELDS",
    "Cassette",
    "CassetteError",
    "Entry",
    "ListingEntry",
    "MASKED",
    "MAX_DEPTH",
    "Mask",
    "ToolEntry",
    "dump_entry",
    "host_credentials",
    "load_entries",
    "parse_entries",
    "scrub",
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


@dataclass
class ToolEntry:
    """One recorded tool call: the tool, its validated arguments (masked) and its result."""

    tool: str
    arguments: dict[str, Any]
    result: Any
    """The `_cassette_schema.ResultFields` as read."""
    line: int = 0


@dataclass
class ListingEntry:
    """What a recorded toolbox offered: its tools (`_cassette_schema.ListedToolFields`) and the
    server's instructions."""

    toolbox: str
    instructions: str | None
    listing: list[Any]
    line: int = 0
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    """The server's tools that were not offered, and why."""
    left_out: list[str] = dataclasses.field(default_factory=list)
    """The server's tools left out by the box's include / exclude."""


def request_fields(
    name: str | None, request: ModelRequest, settings: Mapping[str, Any], secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """What identifies ``request``: the `REQUEST_FIELDS` as plain JSON values, credentials removed.

    Args:
        name: The model's name as chosen (None: not known, as in a `ReplayModel` without one).
        request: What the model is sent.
        settings: Model settings that change the answer but are not in the request (the
            temperature an `OllamaModel` was made with...); the request's options win.
        secrets: Exact strings to remove wherever they occur.
    """
    fields = {
        "model": name,
        "think": request.think,
        "options": {**settings, **request.options},
        "format": request.format,
        "offered": [tool.name for tool in request.offered],
        "tools": [tool.to_json_schema() for tool in request.tools],
        "messages": list(request.messages),
    }
    # Through JSON and back: tuples become lists, keys strings, as they will be when loaded.
    return scrub(_as_json(fields), secrets)


def key_of(fields: Mapping[str, Any], with_model: bool = True) -> str:
    """The canonical text two requests are compared by."""
    return json.dumps(
        {k: v for k, v in fields.items() if with_model or k != "model"}, sort_keys=True, ensure_ascii=False
    )


# --- writing and reading --------------------------------------------------------------------------


def chunk_json(chunk: ModelChunk, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A chunk as JSON: only the fields that are set."""
    out: dict[str, Any] = {}
    if chunk.text:
        out["text"] = chunk.text
    if chunk.thinking:
        out["thinking"] = chunk.thinking
    if chunk.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in chunk.tool_calls]
    if chunk.done:
        out["done"] = True
    if chunk.usage is not None:
        out["usage"] = {k: v for k, v in dataclasses.asdict(chunk.usage).items() if v is not None}
    if chunk.finish_reason is not None:
        out["finish_reason"] = chunk.finish_reason
    return scrub(_as_json(out), secrets)


def _as_json(value: Any) -> Any:
    """``value`` through JSON and back (other objects as their ``str``). What JSON cannot hold
    becomes a string that says what it was, so a field with a type (a usage count) is refused by
    the writer's check, naming the file and the field, and any other field is recorded as that."""
    return json.loads(json.dumps(recordable(value), default=str))


def recordable(value: Any, depth: int = VALUE_DEPTH) -> Any:
    """``value`` with what JSON cannot hold as a string that says what it was: nesting deeper than
    ``depth``, NaN and infinities, integers over Python's 4300 digits."""
    if isinstance(value, (dict, list, tuple)) and depth <= 0:
        return f"(nested deeper than {VALUE_DEPTH} levels)"
    if isinstance(value, dict):
        return {recordable(key, 1) if isinstance(key, (int, float)) else key: recordable(item, depth - 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [recordable(item, depth - 1) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf": JSON has no such number
    if isinstance(value, int) and value.bit_length() > 14_000:  # over Python's 4300 digits
        return f"(a number of about {int(value.bit_length() * 0.30103):,} digits)"
    return value


def dump_entry(request: Mapping[str, Any], chunks: Sequence[dict[str, Any]]) -> str:
    """One entry as text: a field a line, and a line per message, tool and chunk."""

    def text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    parts = []
    for index, (key, value) in enumerate([*((k, request[k]) for k in REQUEST_FIELDS), ("chunks", chunks)]):
        lead = "{" if index == 0 else " "
        if key in ("tools", "messages", "chunks") and value:
            items = ",\n".join("  " + text(item) for item in value)
            parts.append(f"{lead}{text(key)}: [\n{items}\n ]")
        else:
            parts.append(f"{lead}{text(key)}: {text(value)}")
    return ",\n".join(parts) + "}\n"


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
    from ._cassette_schema import field_lines  # pydantic loads when a cassette is first read

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
            raise CassetteError(f"Cassette {path}, {where}: not valid JSON ({error.msg}). {fix(FIX_LINE)}") from None
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
) -> Entry | ToolEntry | ListingEntry:
    from pydantic import ValidationError

    from ._cassette_schema import (
        ChunkFields,
        EntryFields,
        ListingFields,
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
    root = ListingFields if "toolbox" in value else ToolEntryFields if "tool" in value else EntryFields
    try:
        fields = root.model_validate(value)
    except ValidationError as error:
        found = problems(error, lines(), line, root)
        if len(found) == 1:
            raise CassetteError(f"Cassette {path}, line {found[0][0]}: {found[0][1]}. {fix(FIX_LINE)}") from None
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
    if isinstance(fields, ListingFields):
        return ListingEntry(fields.toolbox, fields.instructions, fields.listing, line, fields.skipped, fields.left_out)
    request = {key: getattr(fields, key) for key in REQUEST_FIELDS}
    return Entry(request, [chunk.chunk() for chunk in fields.chunks], line)


def _same(recorded: Any, sent: Any) -> bool:
    return json.dumps(recorded, sort_keys=True, ensure_ascii=False) == json.dumps(sent, sort_keys=True, ensure_ascii=False)


_JSON_TYPES = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


def _replace(target: Path, data: bytes) -> None:
    """Make ``target`` hold ``data``: written to a new file in its folder, then renamed over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{_random.token_hex(4)}.tmp")
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class Cassette:
    """A cassette file, and how far replay has got in it; models that share one share both.

    Args:
        path: The file. A relative path is resolved against the current directory (a notebook's
            kernel runs in the notebook's folder) now.
        fresh: Start a new recording: ignore what the file holds, replace it at the first write.
        mask: Regular expressions of secrets never stored (see `Mask`).

    Raises:
        CassetteError: The file is not a readable cassette; the message names the line.
    """

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False, mask: Iterable[str] = ()):
        self.path = Path(path).expanduser().absolute()
        self.mask = mask if isinstance(mask, Mask) else Mask(mask)
        """What is masked in everything stored (see `Mask`)."""
        self.entries: list[Entry] = []
        """The model's recordings, in file order."""
        self.tool_entries: list[ToolEntry] = []
        """The recorded tool calls, in file order."""
        self.listings: list[ListingEntry] = []
        """The recorded toolboxes' listings, in file order."""
        self._sort([] if fresh or not self.path.exists() else load_entries(self.path))
        self._fresh = fresh
        self._played: Counter[str] = Counter()
        self._keys: dict[tuple[int, bool], str] = {}

    def take(
        self, fields: Mapping[str, Any], *, with_model: bool = True, again: bool = False
    ) -> Entry | None:
        """The next recording of this request (the n-th time it is asked: its n-th recording).

        Args:
            fields: The request, as `request_fields` gives it.
            with_model: Whether the model's name must match too.
            again: When every recording of it was replayed, start again from the first (rather
                than return None).
        """
        key = key_of(fields, with_model)
        matches = [entry for entry in self.entries if self._key(entry, with_model) == key]
        count = self._played[key]
        if not matches or (count >= len(matches) and not again):
            return None
        self._played[key] += 1
        return matches[count % len(matches)]

    def add(
        self, fields: Mapping[str, Any], chunks: list[dict[str, Any]], *, with_model: bool = True
    ) -> None:
        """Record a request's answer (``chunks`` as `chunk_json` gives them) and write it out."""
        self.append(dump_entry(fields, chunks))
        self._played[key_of(fields, with_model)] += 1

    def append(self, text: str) -> None:
        """Check an entry's ``text`` as the reader will, then write it out (see `add`) and keep
        what it reads back as.

        The file is replaced by a new one holding what it held, byte for byte, and the entry after
        a blank line; the new file is written beside it and renamed over it, so a reader never sees
        half an entry and a failure leaves the file as it was.

        Raises:
            CassetteError: The entry is not one the reader accepts (the message names the field),
                or the file cannot be read or written; nothing was written.
        """
        target = Path(os.path.realpath(self.path))  # a link stays a link to the file it names
        try:
            before = b"" if self._fresh or not target.exists() else target.read_bytes()
        except OSError as error:
            raise CassetteError(f"Cannot read the cassette {self.path}: {error.strerror or error}.") from None
        shown = before.decode("utf-8-sig", "replace").replace("\r\n", "\n").replace("\r", "\n")
        # A lone surrogate (a tool's text decoded with surrogateescape) is written as its JSON escape.
        data = text.encode("utf-8", "backslashreplace")
        if not shown.strip():
            line, whole = 1, data
        else:  # after a blank line; with an old Mac line end (CR), CR LF would read as one line end
            separator = (b"\n" if shown.endswith("\n") else b"\n\n") + (b"\n" if before.endswith(b"\r") else b"")
            line = shown.count("\n") + (1 if shown.endswith("\n") else 2) + 1
            whole = before + separator + data
        # Read back as from the file, so replay in this session sees what a later session will.
        entries = parse_entries(data.decode("utf-8"), self.path, line, writing=True)
        try:
            _replace(target, whole)
        except OSError as error:
            raise CassetteError(
                f"Cannot write the cassette {self.path}: {error.strerror or error}. It is as it was."
            ) from None
        self._fresh = False
        self._sort(entries)

    def take_tool(self, tool: str, arguments: Mapping[str, Any], *, again: bool = False) -> ToolEntry | None:
        """The next recording of a call of ``tool`` with these (masked) arguments; see `take`."""
        key = "tool " + json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)
        matches = [e for e in self.tool_entries if e.tool == tool and _same(e.arguments, arguments)]
        count = self._played[key]
        if not matches or (count >= len(matches) and not again):
            return None
        self._played[key] += 1
        return matches[count % len(matches)]

    def played_tool(self, tool: str, arguments: Mapping[str, Any]) -> None:
        """Count a call just recorded as replayed (as `add` does for a request)."""
        self._played["tool " + json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)] += 1

    def listing(self, toolbox: str) -> ListingEntry | None:
        """The last recorded listing of ``toolbox``, or None."""
        return next((entry for entry in reversed(self.listings) if entry.toolbox == toolbox), None)

    def _sort(self, entries: Iterable[Entry | ToolEntry | ListingEntry]) -> None:
        for entry in entries:
            if isinstance(entry, ToolEntry):
                self.tool_entries.append(entry)
            elif isinstance(entry, ListingEntry):
                self.listings.append(entry)
            else:
                self.entries.append(entry)

    def _key(self, entry: Entry, with_model: bool) -> str:
        cached = self._keys.get((id(entry), with_model))
        if cached is None:
            cached = self._keys[(id(entry), with_model)] = key_of(entry.request, with_model)
        return cached

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, recordings={len(self.entries)})"
