"""Secrets hidden from what a person reads and from what is written to a file: one way, everywhere.

`secret_patterns` finds an exact secret (an API key, a token, a header's value) in every form a
careless echo writes it in, one layer deep: as it is, percent-, JSON- or HTML-escaped character
by character, and base64-encoded for secrets of at least `BASE64_MIN` characters; `redact`
replaces each match and `reveals` says whether there is one. `without_credentials`,
`shown_address` and `address_credentials` handle a URL's ``user:password@``. The cassettes'
`Mask`, the MCP boxes' messages and the models' descriptions and errors are built on these. Pure
functions of text.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = [
    "BASE64_MIN",
    "MASKED",
    "address_credentials",
    "redact",
    "reveals",
    "secret_forms",
    "secret_patterns",
    "secret_regex",
    "shown_address",
    "without_credentials",
]

MASKED = "***"
"""What a hidden secret is shown as, unless a place says otherwise."""
BASE64_MIN = 12
"""Exact secrets at least this long are found in their base64 forms too."""

# A URL's scheme, then its user:password@ (to the last "@" before the path or a space). A scheme
# starts where a run of letters does: a megabyte of base64 is not tried at every letter.
_URL_CREDENTIALS = re.compile(r"(?<![A-Za-z])(?P<scheme>[A-Za-z][\w+.-]*://)(?P<credentials>[^\s/]*)@")
# The same at the start of an address alone, whose scheme may be left out (OLLAMA_HOST's may).
_ADDRESS_CREDENTIALS = re.compile(r"\A(?P<scheme>(?:[A-Za-z][\w+.-]*://)?)(?P<credentials>[^\s/]*)@")


def redact(text: str, secrets: Iterable[str], replacement: str = MASKED) -> str:
    """``text`` with each of ``secrets`` (an empty one aside), in any form it is written in,
    replaced by ``replacement`` (taken literally)."""
    template = replacement.replace("\\", "\\\\")
    for form, regex in _forms(frozenset(secrets)):
        text = text.replace(form, replacement) if _as_is(form, text) else regex.sub(template, text)
    return text


def reveals(text: str, secrets: Iterable[str]) -> bool:
    """Whether ``text`` holds one of ``secrets`` in any form it is written in."""
    return any(
        form in text if _as_is(form, text) else regex.search(text) is not None
        for form, regex in _forms(frozenset(secrets))
    )


def secret_patterns(secrets: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """The regular expressions of every form of ``secrets`` (empty ones left out), the longest
    form first, as one may hold another."""
    return tuple(regex for _, regex in _forms(frozenset(secrets)))


@lru_cache(maxsize=256)  # made once per set of secrets: an MCP box and a model hide theirs in every message
def _forms(secrets: frozenset[str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    forms = {form for secret in secrets if secret for form in secret_forms(secret)}
    return tuple((form, secret_regex(form)) for form in sorted(forms, key=lambda form: (-len(form), form)))


def _as_is(form: str, text: str) -> bool:
    """Whether ``form`` can be in ``text`` only as itself: ``text`` has no escape (``%``, ``\\``,
    ``&``), nor a ``+`` that may be a space of ``form``. Then it is found as fast as text is (a
    megabyte of an image's base64 in a request)."""
    return "%" not in text and "\\" not in text and "&" not in text and not (" " in form and "+" in text)


def without_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` of each URL in it left out
    (``http://user:pw@gpu:8000/v1`` -> ``http://gpu:8000/v1``)."""
    return _URL_CREDENTIALS.sub(r"\g<scheme>", text)


def shown_address(address: str) -> str:
    """A server's address without its ``user:password@``, for descriptions and errors:
    ``http://user:secret@gpu:8000/v1`` -> ``http://gpu:8000/v1``, ``user:pw@host:11434`` -> ``host:11434``."""
    return _ADDRESS_CREDENTIALS.sub(r"\g<scheme>", address, count=1)


def address_credentials(address: str) -> str | None:
    """The ``user:password`` `shown_address` leaves out of ``address``, or None when it has none."""
    match = _ADDRESS_CREDENTIALS.match(address)
    return (match["credentials"] or None) if match else None


def secret_forms(secret: str) -> list[str]:
    """The texts ``secret`` is written as before any escaping (`secret_regex` adds those): itself
    and (from `BASE64_MIN` characters) the base64 characters that encode only its bytes, at each of
    the three byte alignments and in both alphabets."""
    forms = {secret}
    data = secret.encode("utf-8", "surrogateescape")
    if len(secret) >= BASE64_MIN:
        for pad in range(3):
            encoded = base64.b64encode(b"\0" * pad + data).decode("ascii")
            first, end = -(-pad * 8 // 6), (pad + len(data)) * 8 // 6  # the characters of its bits alone
            core = encoded[first:end]
            forms.update((core, core.replace("+", "-").replace("/", "_")))
    return sorted(forms)


def secret_regex(form: str) -> re.Pattern[str]:
    """The regular expression of ``form`` with each character as it is or escaped (see the module's
    docstring): percent-encoded, JSON-escaped or HTML-escaped, in any mixture."""
    return re.compile("".join(_char_regex(char) for char in form))


@lru_cache(maxsize=4096)
def _char_regex(char: str) -> str:
    """The ways one character may be written: itself, ``%XX`` per UTF-8 byte (hex in either case; a
    space also ``+``), a JSON escape, an HTML character reference."""
    ways = [re.escape(char)]
    try:
        data = char.encode("utf-8", "surrogateescape")  # a byte a text was decoded around
    except UnicodeEncodeError:  # a lone surrogate of another kind
        data = char.encode("utf-8", "surrogatepass")
    ways.append("".join("%" + "".join(_hex_digit(digit) for digit in f"{byte:02X}") for byte in data))
    if char == " ":
        ways.append(r"\+")
    ways.append("".join(r"\\u" + _hex(f"{unit:04X}") for unit in _utf16_units(char)))
    if char in _JSON_SHORT:
        ways.append(re.escape("\\" + _JSON_SHORT[char]))
    for point in (ord(char), *_windows_1252().get(char, ())):
        ways.append(f"&#0*{point};?")
        ways.append(f"&#[xX]0*{_hex(f'{point:X}')};?")
    ways.extend(re.escape("&" + name) for name in _entity_names().get(char, ()))
    return "(?:" + "|".join(ways) + ")"


_JSON_SHORT = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


@lru_cache(maxsize=1)  # made by the first secret, not by importing
def _entity_names() -> dict[str, list[str]]:
    """Each character's HTML named references: "amp;" and "amp" (html.unescape reads both), the
    longest first, so that the whole reference is masked."""
    import html.entities

    names: dict[str, list[str]] = {}
    for name, text in html.entities.html5.items():
        if len(text) == 1:
            names.setdefault(text, []).append(name)
    return {char: sorted(found, key=lambda name: (-len(name), name)) for char, found in names.items()}


@lru_cache(maxsize=1)
def _windows_1252() -> dict[str, list[int]]:
    """The characters HTML reads &#128; to &#159; as: windows-1252's (&#128; is "€"), as browsers do."""
    points: dict[str, list[int]] = {}
    for point in range(0x80, 0xA0):
        points.setdefault(bytes([point]).decode("cp1252", "ignore") or chr(point), []).append(point)
    return points


def _hex(digits: str) -> str:
    return "".join(_hex_digit(digit) for digit in digits)


def _hex_digit(digit: str) -> str:
    return f"[{digit}{digit.lower()}]" if digit.isalpha() else digit


def _utf16_units(char: str) -> list[int]:
    point = ord(char)
    if point < 0x10000:
        return [point]
    point -= 0x10000
    return [0xD800 + (point >> 10), 0xDC00 + (point & 0x3FF)]
