"""What never reaches a cassette: masked secrets, credentials, and values nested too deep.

`Mask` is the one place a value is masked before it is written. Each scalar is masked as the
writer will write it (a string also JSON-escaped, a number as its text, bytes as their text and
their base64), since a secret must not reach the file in any form; a masked number becomes a
string. Exact secrets (``Mask(secrets=...)``) are found in every encoded form `meowgent_nb._redact`
knows. `depth_over` bounds nesting without recursion, for the writer and the reader alike. Each
case is a test in tests/recording/test_cassette_masks.py.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .._redact import MASKED, address_credentials, redact, secret_patterns, without_credentials
from ..models.base import CassetteError
from ..models.wire_values import nests_deeper as depth_over  # one depth check for every value from outside

__all__ = [
    "MASKED",
    "MAX_DEPTH",
    "Mask",
    "depth_over",
    "host_credentials",
    "scrub",
]

MAX_DEPTH = 200
"""Levels of nesting a cassette entry may have (a tool's value or arguments: `VALUE_DEPTH`)."""
VALUE_DEPTH = MAX_DEPTH - 20
"""Levels of nesting a recorded value may have, leaving room for the entry around it."""

_ROUNDS = 8  # of masking a string's JSON text or bytes' base64, before the value is dropped whole


class Mask:
    """The patterns (regular expressions) whose matches never reach a cassette: each becomes ``***``.

    Applied to every string, number, bytes and key of what is stored (requests, answers, tool
    arguments, results and listings) before it is keyed, so a replayed request, masked the same
    way, still matches its recording. See the module's docstring for what each kind becomes.

    Raises:
        CassetteError: A pattern is not a string or not a valid regular expression, or it
            matches the empty string (it would mask nothing and everything).
    """

    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()):
        if isinstance(patterns, str):
            patterns = [patterns]
        compiled = list(secret_patterns(secrets))
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise CassetteError(
                    f"A cassette mask must be a regular expression (a string), got {pattern!r}."
                )
            try:
                regex = re.compile(pattern)
            except re.error as error:
                raise CassetteError(
                    f"The cassette mask {pattern!r} is not a valid regular expression: {error}."
                ) from None
            if regex.fullmatch(""):
                raise CassetteError(
                    f"The cassette mask {pattern!r} matches the empty string; write a pattern for the secret itself."
                )
            compiled.append(regex)
        self.patterns = tuple(compiled)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def text(self, text: str) -> str:
        """``text`` with every match of a pattern as ``***``."""
        for regex in self.patterns:
            text = regex.sub(MASKED, text)
        return text

    def found(self, text: str) -> bool:
        return any(regex.search(text) for regex in self.patterns)

    def __call__(self, value: Any) -> Any:
        """``value`` (JSON values: strings, numbers, lists, objects; bytes) with every match
        masked; bytes become their base64 text (see `bytes`), with or without patterns.

        Raises:
            CassetteError: ``value`` is nested deeper than `VALUE_DEPTH` levels.
        """
        if depth_over(value, VALUE_DEPTH):
            raise CassetteError(
                f"A value to record is nested deeper than {VALUE_DEPTH} levels; a cassette does not record that."
            )
        return self._value(value)

    def fields(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """An entry's (or a chunk's) ``fields`` with their values masked; their names are the
        format's, not what was recorded, so a mask never renames them."""
        return {name: self(value) for name, value in fields.items()}

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.number(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self.bytes(bytes(value))
        if isinstance(value, (list, tuple)):
            return [self._value(item) for item in value]
        if isinstance(value, dict):
            return {
                self.string(key) if isinstance(key, str) else self._value(key): self._value(item)
                for key, item in value.items()
            }
        return value

    def string(self, text: str) -> str:
        """``text`` masked so that neither it nor its JSON text (as the writer writes it) holds a match."""
        if not self.patterns:
            return text
        text = self.text(text)
        for _ in range(_ROUNDS):
            written = json_text(text)
            if not self.found(written):
                return text
            try:  # mask the written form, and read it back
                text = self.text(json.loads('"' + self.text(written) + '"'))
            except ValueError:  # the mask cut an escape in two
                return MASKED
        return MASKED

    def number(self, number: int | float) -> int | float | str:
        """``number``, or its text masked (a string) when the text as written, or a whole float's
        digits, hold a match."""
        if not self.patterns:
            return number
        try:
            forms = [json.dumps(number)]
            if isinstance(number, float) and number.is_integer():
                forms.append(str(int(number)))
        except (ValueError, OverflowError):  # over Python's 4300 digits, NaN: refused where written
            return number
        for form in forms:
            if self.found(form):
                return self.string(form)
        return number

    def bytes(self, data: bytes) -> str:
        """``data`` masked, as base64 text that holds no match either."""
        if self.patterns:
            data = self.text(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        for _ in range(_ROUNDS):
            encoded = base64.b64encode(data).decode("ascii")
            spans = [match.span() for regex in self.patterns for match in regex.finditer(encoded)]
            if not spans:
                return encoded
            starred = bytearray(data)
            for start, end in spans:  # the bytes whose bits those base64 characters carry
                first, last = start * 6 // 8, min(((end - 1) * 6 + 5) // 8, len(starred) - 1)
                starred[first : last + 1] = b"*" * (last + 1 - first)
            data = bytes(starred)
        return ""  # no bytes at all: there is nothing left to match

    def chunks(self, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Answer chunks (`chunk_json`) masked; a secret streamed across chunks is masked too (the
        text, or thinking, of such an answer is then stored in its first chunk). A chunk's usage,
        ``done`` and finish reason are the backend's report, not content: kept as they are."""
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
        kept = ("usage", "done", "finish_reason")
        masked = []
        for chunk in chunks:
            fields = self.fields({k: v for k, v in chunk.items() if k not in kept and k != "tool_calls"})
            if "tool_calls" in chunk:
                fields["tool_calls"] = [self.fields(call) for call in chunk["tool_calls"]]
            masked.append({**fields, **{k: chunk[k] for k in kept if k in chunk}})
        return masked


def json_text(text: str) -> str:
    """``text`` as the cassette writer writes it inside a JSON string (non-ASCII kept, a lone
    surrogate escaped)."""
    written = json.dumps(text, ensure_ascii=False)[1:-1]
    return written.encode("utf-8", "backslashreplace").decode("utf-8") if _has_surrogate(written) else written


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` with URL credentials and the exact ``secrets`` (in any form, see `_redact`)
    removed from every string."""
    return _scrubbed(value, frozenset(secrets))


def _scrubbed(value: Any, secrets: frozenset[str]) -> Any:
    if isinstance(value, str):
        return redact(without_credentials(value), secrets, "")
    if isinstance(value, list):
        return [_scrubbed(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: _scrubbed(item, secrets) for key, item in value.items()}
    return value


def host_credentials(model: Any) -> Iterable[str]:
    """The credentials in ``OLLAMA_HOST``, ``OPENAI_BASE_URL`` and the model's ``host`` or
    ``base_url``, and the API key (``OPENAI_API_KEY``, or an `OpenAIModel`'s own), as exact strings."""
    from ..models.openai import NO_KEY

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
        credentials = address_credentials(host) if isinstance(host, str) else None
        if credentials:
            yield credentials + "@"
            yield credentials
