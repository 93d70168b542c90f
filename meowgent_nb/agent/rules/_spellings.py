"""The spellings of one place, and the one normal form they share, for the rules' patterns.

`spelling_of` reads a value into a `Spelling`: `Spelling.normal` is the form every spelling of
the place shares (``./keep/a.txt``, ``keep%2fa.txt``, ``keep\a.txt``, NFD accents, ... all read
as ``keep/a.txt``), or None when the value cannot be read one way; `Spelling.written` is the value
as written, only NFC-normalized and without ``./`` and repeated ``/``. Neither reads the disk.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["DECODING_ROUNDS", "Spelling", "has_dot_dot_segment", "local_spelling", "spelling_of"]

DECODING_ROUNDS = 4
"""Rounds of percent-decoding a normal form may take; a value still encoded after them has none."""
_SEPARATORS = re.compile(r"[/\\]")
# Cc (U+0000-U+001F, U+007F-U+009F) but tab, newline and carriage return, which text values hold.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# '\' (a separator on Windows) and slashes that NFKC keeps but a reader takes for '/' or '\'.
_AS_SLASH = str.maketrans(dict.fromkeys("\\∕⁄⧸⧹∖", "/"))
_DROPPED_AT_END = ". \t\n\r"
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Spelling:
    """The forms of one value's text that the patterns match."""

    text: str
    """The text as given."""
    written: str | None
    """NFC, without ``.`` segments and repeated ``/``; None when it has a ``..`` segment (see
    `has_dot_dot_segment`). An allow glob must match this form."""
    decoded: str | None
    """Percent-decoded until stable and NFKC-normalized, or None when that has no end (see ``why``)."""
    normal: str | None
    """The normal form: ``decoded`` read as a path (``\\`` as ``/``, ``a/..`` resolved), or None when it has none."""
    why: str = ""
    """Why there is no normal form, for an error message: "it has a control character"."""


@functools.lru_cache(maxsize=32)  # every rule about an argument reads the same value
def spelling_of(text: str) -> Spelling:
    """The forms of ``text`` (linear in its length: at most `DECODING_ROUNDS` passes)."""
    if _SURROGATE.search(text):  # no UTF-8 spelling: no path on any disk names it one way
        return Spelling(text, None, None, None, "it has a lone surrogate (no UTF-8 spelling)")
    written = None if has_dot_dot_segment(text) else _collapsed(unicodedata.normalize("NFC", text))
    decoded, why = _decoded(text)
    if decoded is None:
        return Spelling(text, written, None, None, why)
    normal, why = _as_path(decoded)
    return Spelling(text, written, decoded, normal, why)


def local_spelling(normal: str) -> str | None:
    """A normal form that names a place by its absolute path (``/home/me/proj/keep/a.txt``) or from
    the home folder (``~/proj/keep/a.txt``), relative to the working directory where it lies inside
    it (``keep/a.txt``: the place a relative rule names, as a tool run here reads it); else None.
    Read now, not cached: the working directory may change."""
    if normal.startswith("~/") or normal == "~":
        normal = os.path.expanduser("~") + normal[1:]
    if not normal.startswith("/"):
        return None
    here, _ = _as_path(unicodedata.normalize("NFKC", os.getcwd()))
    if here is None:
        return None
    here = here.rstrip("/")
    if normal.casefold().startswith(here.casefold() + "/"):
        return normal[len(here) + 1 :] or "."
    return None


def has_dot_dot_segment(text: str) -> bool:
    """Whether ``text`` has a segment (between ``/`` or ``\\``) that names a parent folder: ``..``,
    also written ``%2e%2e``, with full-width dots, or with trailing dots or spaces (which Windows
    drops)."""
    for segment in _SEPARATORS.split(text):
        plain = unicodedata.normalize("NFKC", unquote(segment)).strip()
        if len(plain) >= 2 and set(plain) == {"."}:
            return True
    return False


def _decoded(text: str) -> tuple[str | None, str]:
    for _ in range(DECODING_ROUNDS + 1):
        try:
            decoded = unicodedata.normalize("NFKC", unquote(text, errors="strict"))
        except UnicodeDecodeError:
            return None, "its percent-encoding decodes to bytes that are not UTF-8"
        if decoded == text:
            break
        text = decoded
    else:
        return None, f"it is still percent-encoded after {DECODING_ROUNDS} rounds of decoding"
    if _CONTROL.search(text):
        return None, "it has a control character (such as NUL)"
    return text, ""


def _as_path(text: str) -> tuple[str | None, str]:
    text = text.translate(_AS_SLASH).strip()  # a tool may trim the ends; Windows drops their spaces
    segments = text.split("/")
    parts: list[str] = []
    for segment in segments:
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                return None, "its '..' climbs above where it starts"
            parts.pop()
            continue
        name = segment.rstrip(_DROPPED_AT_END)
        if not name:
            return None, f"it has a name of only dots and spaces ({segment!r}), which systems read apart"
        parts.append(name)
    absolute = text.startswith("/")
    if not parts:
        return ("/" if absolute else "." if text else ""), ""
    trailing = "/" if segments[-1] in ("", ".", "..") else ""
    return ("/" if absolute else "") + "/".join(parts) + trailing, ""


def _collapsed(text: str) -> str:
    """``text`` without ``.`` segments and repeated ``/`` (its leading ``/`` kept as they are)."""
    body = text.lstrip("/")
    lead = text[: len(text) - len(body)]
    segments = body.split("/")
    parts = [segment for segment in segments if segment not in ("", ".")]
    if not parts:
        return lead or ("." if text else "")
    return lead + "/".join(parts) + ("/" if segments[-1] in ("", ".") else "")
