"""The cassette file: recorded model requests as readable JSON, and `Cassette`, its reader and writer.

A cassette (``NAME.cassette.json``) is a sequence of JSON objects: a model request (the fields in
`REQUEST_FIELDS` and the chunks streamed back), and with ``record=True`` tools a tool call, a
toolbox's listing and a decision (see `tool_tape`, `_decision_tape`). Each is written one field,
message or chunk a line with keys sorted, so a re-recording diffs line by line; any JSON layout
loads. New entries are checked as the reader would check them (`_entries`), then appended
atomically, so what the file held, hand edits included, stays byte for byte.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import secrets as _random
import stat
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..models.base import CassetteError, ModelChunk, ModelRequest, ToolSupport
from ._entries import (
    REQUEST_FIELDS,
    DecisionEntry,
    Entry,
    ListingEntry,
    SupportEntry,
    ToolEntry,
    load_entries,
    parse_entries,
)
from ._mask import MASKED, MAX_DEPTH, VALUE_DEPTH, Mask, host_credentials, scrub

__all__ = [
    "MASKED",
    "MAX_DEPTH",
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
    "scrub",
]


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
        return {
            recordable(key, 1) if isinstance(key, (int, float)) else key: recordable(item, depth - 1)
            for key, item in value.items()
        }
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


def _same(recorded: Any, sent: Any) -> bool:
    return json.dumps(recorded, sort_keys=True, ensure_ascii=False) == json.dumps(
        sent, sort_keys=True, ensure_ascii=False
    )


_BLANK = re.compile(rb"(?:\xef\xbb\xbf)?\s*")  # an empty file (a BOM and spaces at most): no copy made


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

    def __init__(self, path: str | os.PathLike[str], *, fresh: bool = False, mask: Mask | Iterable[str] = ()):
        self.path = Path(path).expanduser().absolute()
        self.mask = mask if isinstance(mask, Mask) else Mask(mask)
        """What is masked in everything stored (see `Mask`)."""
        self.entries: list[Entry] = []
        """The model's recordings, in file order."""
        self.tool_entries: list[ToolEntry] = []
        """The recorded tool calls, in file order."""
        self.listings: list[ListingEntry] = []
        """The recorded toolboxes' listings, in file order."""
        self.decisions: list[DecisionEntry] = []
        """The recorded decisions on calls that needed approval, in file order."""
        self.supports: list[SupportEntry] = []
        """What the models said of their templates (the protocol each got), in file order."""
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
        # A lone surrogate (a tool's text decoded with surrogateescape) is written as its JSON escape.
        data = text.encode("utf-8", "backslashreplace")
        if _BLANK.fullmatch(before):
            line, whole = 1, data
        else:  # after a blank line; with an old Mac line end (CR), CR LF would read as one line end
            ends = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n")  # as the reader counts
            ended = before.endswith((b"\n", b"\r"))
            separator = (b"\n" if ended else b"\n\n") + (b"\n" if before.endswith(b"\r") else b"")
            line = ends + (1 if ended else 2) + 1
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

    def take_decision(
        self, tool: str, arguments: Mapping[str, Any], *, again: bool = False
    ) -> DecisionEntry | None:
        """The next recorded decision on a call of ``tool`` with these (masked) arguments; see `take`."""
        key = "decision " + json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)
        matches = [e for e in self.decisions if e.tool == tool and _same(e.arguments, arguments)]
        count = self._played[key]
        if not matches or (count >= len(matches) and not again):
            return None
        self._played[key] += 1
        return matches[count % len(matches)]

    def played_decision(self, tool: str, arguments: Mapping[str, Any]) -> None:
        """Count a decision just recorded as replayed."""
        self._played["decision " + json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)] += 1

    def support(self, model: str | None) -> ToolSupport | None:
        """What ``model`` said of its template when recorded (None: any model's), or None."""
        found = [e for e in self.supports if model is None or e.model == model]
        return found[-1].support if found else None

    def add_support(self, model: str | None, support: ToolSupport) -> None:
        """Record what ``model`` said of its template, and write it out."""
        fields = {"support": support.protocol, "model": model, "why": support.why}
        if support.thinking_first:
            fields["thinking_first"] = True
        self.append(json.dumps(fields, ensure_ascii=False) + "\n")

    def listing(self, toolbox: str) -> ListingEntry | None:
        """The last recorded listing of ``toolbox``, or None."""
        return next((entry for entry in reversed(self.listings) if entry.toolbox == toolbox), None)

    def _sort(
        self, entries: Iterable[Entry | ToolEntry | ListingEntry | DecisionEntry | SupportEntry]
    ) -> None:
        for entry in entries:
            if isinstance(entry, SupportEntry):
                self.supports.append(entry)
            elif isinstance(entry, DecisionEntry):
                self.decisions.append(entry)
            elif isinstance(entry, ToolEntry):
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
