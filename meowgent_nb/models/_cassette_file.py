"""The cassette file: recorded model requests as readable JSON, and `Cassette`, its reader and writer.

A cassette (``NAME.cassette.json``) is a sequence of JSON objects, one per model request: what
the model was sent (the fields in `REQUEST_FIELDS`) and the chunks it streamed back. Tools marked
``record=True`` add two more kinds of object (see `_cassette_tools`): a call
(``{"tool", "arguments", "result"}``) and a toolbox's listing (``{"toolbox", "instructions",
"listing"}``). Each is
written over several lines, one field, message or chunk a line, keys sorted, non-ASCII kept as it
is, so a re-recording diffs line by line. Any layout loads: one object a line (JSON Lines),
pretty-printed, reformatted by an editor, with a BOM or Windows line ends. New recordings are
appended after a blank line; the file is never rewritten, so hand edits stay. Every field is
checked where the file is read (`_cassette_schema`): a mistake is one `CassetteError` that names
the line, the field and what is wrong with it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .base import ModelChunk, ModelError, ModelRequest

__all__ = [
    "REQUEST_FIELDS",
    "Cassette",
    "CassetteError",
    "Entry",
    "ListingEntry",
    "Mask",
    "ToolEntry",
    "dump_entry",
    "host_credentials",
    "load_entries",
    "parse_entries",
]

REQUEST_FIELDS = ("model", "think", "options", "format", "offered", "tools", "messages")
"""What a request is recognised by, in the order they are written and compared."""

# user:password@ in a URL (http://user:pw@host). The credentials of OLLAMA_HOST, which may have no
# scheme, are removed as exact strings too (see `scrub`).
_URL_CREDENTIALS = re.compile(r"([A-Za-z][\w+.-]*://)[^\s/@]+@")


class CassetteError(ModelError):
    """A cassette is missing, unreadable, or has no recording of a request."""


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


MASKED = "***"
"""What a masked secret is replaced by in a cassette."""


class Mask:
    """The patterns (regular expressions) whose matches never reach a cassette: each becomes ``***``.

    Applied to every string of what is stored (requests, answers, tool arguments, results and
    listings, object keys too) before it is keyed, so a replayed request, masked the same way,
    still matches its recording.

    Raises:
        CassetteError: A pattern is not a string or not a valid regular expression, or it
            matches the empty string (it would mask nothing and everything).
    """

    def __init__(self, patterns: Iterable[str] = ()):
        if isinstance(patterns, str):
            patterns = [patterns]
        compiled = []
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise CassetteError(f"A cassette mask must be a regular expression (a string), got {pattern!r}.")
            try:
                regex = re.compile(pattern)
            except re.error as error:
                raise CassetteError(f"The cassette mask {pattern!r} is not a valid regular expression: {error}.") from None
            if regex.fullmatch(""):
                raise CassetteError(
                    f"The cassette mask {pattern!r} matches the empty string; write a pattern for the secret itself."
                )
            compiled.append(regex)
        self.patterns = tuple(compiled)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def text(self, text: str) -> str:
        for regex in self.patterns:
            text = regex.sub(MASKED, text)
        return text

    def __call__(self, value: Any) -> Any:
        """``value`` (JSON values) with every match masked."""
        if not self.patterns:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key) if isinstance(key, str) else key: self(item) for key, item in value.items()}
        return value

    def chunks(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answer chunks (`chunk_json`) masked; a secret streamed across chunks is masked too (the
        text, or thinking, of such an answer is then stored in its first chunk)."""
        if not self.patterns:
            return chunks
        chunks = [dict(chunk) for chunk in chunks]
        for field_name in ("text", "thinking"):
            parts = [chunk.get(field_name, "") for chunk in chunks]
            whole = self.text("".join(parts))
            if whole != "".join(map(self.text, parts)):
                first = next(i for i, part in enumerate(parts) if part)
                for index, chunk in enumerate(chunks):
                    chunk.pop(field_name, None)
                    if index == first:
                        chunk[field_name] = whole
        return [self(chunk) for chunk in chunks]


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
    return scrub(json.loads(json.dumps(fields, default=str)), secrets)


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` with URL credentials and the exact ``secrets`` removed from every string."""
    secrets = [s for s in secrets if s]
    if isinstance(value, str):
        value = _URL_CREDENTIALS.sub(r"\1", value)
        for secret in secrets:
            value = value.replace(secret, "")
        return value
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: scrub(item, secrets) for key, item in value.items()}
    return value


def host_credentials(model: Any) -> Iterable[str]:
    """The credentials in ``OLLAMA_HOST``, ``OPENAI_BASE_URL`` and the model's ``host`` or
    ``base_url``, and the API key (``OPENAI_API_KEY``, or an `OpenAIModel`'s own), as exact strings."""
    from .openai import NO_KEY

    # An OpenAIModel keeps its key private, out of reprs; the cassette is the one other reader.
    for key in (os.environ.get("OPENAI_API_KEY"), getattr(model, "_api_key", None)):
        if isinstance(key, str) and key and key != NO_KEY:
            yield key
    addresses = ("OLLAMA_HOST", "OPENAI_BASE_URL")
    for host in (
        *map(os.environ.get, addresses),
        getattr(model, "host", None),
        getattr(model, "base_url", None),
    ):
        if isinstance(host, str) and "@" in host:
            credentials = (
                host.partition("://")[2].rpartition("@")[0] if "://" in host else host.rpartition("@")[0]
            )
            yield credentials + "@"
            yield credentials


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
    return scrub(json.loads(json.dumps(out, default=str)), secrets)


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


def parse_entries(text: str, path: Path, first_line: int = 1) -> list[Entry]:
    """The entries in ``text``, which starts at line ``first_line`` of ``path`` (for errors).

    Raises:
        CassetteError: As for `load_entries`.
    """
    from ._cassette_schema import field_lines  # pydantic loads when a cassette is first read

    decoder = json.JSONDecoder(parse_constant=_not_json)
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
                    f" {line} (it was cut off, or a closing bracket is missing). Complete or delete"
                    " that entry, or delete the file and record again."
                ) from None
            raise CassetteError(
                f"Cassette {path}, {where}: not valid JSON ({error.msg})."
                " Fix that line, or delete the file and record again."
            ) from None
        except ValueError as error:  # NaN or Infinity (see _not_json), or a number too long to read
            what = error if isinstance(error, _NotJson) else "a number too long to read (over 4300 digits)"
            raise CassetteError(
                f"Cassette {path}, line {line}: the entry has {what}. Fix the entry, or delete the"
                " file and record again."
            ) from None
        entries.append(_entry(value, path, line, partial(field_lines, text, start, first_line)))


class _NotJson(ValueError):
    pass


def _not_json(constant: str) -> Any:
    raise _NotJson(f"{constant}, which is not JSON (write a number, or null)")


def _entry(
    value: Any, path: Path, line: int, lines: Callable[[], dict[tuple[Any, ...], int]]
) -> Entry | ToolEntry | ListingEntry:
    from pydantic import ValidationError

    from ._cassette_schema import ChunkFields, EntryFields, ListingFields, ToolEntryFields, problems

    fix = "Fix that line, or delete the file and record again."
    if not isinstance(value, dict):
        raise CassetteError(
            f"Cassette {path}, line {line}: expected a JSON object per request, found"
            f" {_JSON_TYPES.get(type(value), type(value).__name__)}. {fix}"
        )
    if value and set(value) <= set(ChunkFields.model_fields):
        raise CassetteError(
            f'Cassette {path}, line {line}: a chunk outside any request: a chunk goes in the "chunks"'
            " list of its request's entry. Move it there, or delete the file and record again."
        )
    root = ListingFields if "toolbox" in value else ToolEntryFields if "tool" in value else EntryFields
    try:
        fields = root.model_validate(value)
    except ValidationError as error:
        found = problems(error, lines(), line, root)
        if len(found) == 1:
            raise CassetteError(f"Cassette {path}, line {found[0][0]}: {found[0][1]}. {fix}") from None
        listed = "\n".join(f"line {where}: {text}." for where, text in found[:10])
        listed += f"\n(and {len(found) - 10} more)" if len(found) > 10 else ""
        raise CassetteError(
            f"Cassette {path}, the entry on line {line} has {len(found)} mistakes:\n{listed}\n"
            "Fix those lines, or delete the file and record again."
        ) from None
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
        """Write an entry's ``text`` out (see `add`) and keep what it reads back as."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        before = "" if self._fresh or not self.path.exists() else self.path.read_text(encoding="utf-8")
        if not before.strip():
            self._fresh, line = False, 1
            self.path.write_text(text, encoding="utf-8")
        else:  # appended after a blank line; the file is not rewritten, so hand edits stay
            separator = "\n" if before.endswith("\n") else "\n\n"
            line = before.count("\n") + len(separator) + 1
            with self.path.open("a", encoding="utf-8") as file:
                file.write(separator + text)
        # Read back as from the file, so replay in this session sees what a later session will.
        self._sort(parse_entries(text, self.path, line))

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
