"""What one ``ARG=PATTERN`` of a rule matches: a path glob, a regex, a set, or an exact value.

`Pattern.matches` reads a value by its text (a number, bool or null as JSON; a list or object
only by a ``json:`` pattern). A deny or ask pattern matches every spelling of a place and a value
with no normal form (see `_spellings`); an allow pattern only values that mean what it says
however they are read. The rules per kind are docs/guides/approvals.md's. Globs are
`agent.patterns`' dialect; globs and regexes run on RE2, so no rule can take catastrophic time,
and a regex RE2 refuses is an error when the rule is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..._visible import visible
from ...errors import MeowgentError
from ..patterns import HELD, held_regex, hold
from ..regex import RegexError, compile_regex
from ._spellings import Spelling, has_dot_dot_segment, local_spelling, spelling_of

__all__ = [
    "MAX_PATTERN_CHARS",
    "Pattern",
    "RuleSyntaxError",
    "has_dot_dot_segment",
    "plain_value",
    "read_pattern",
    "value_text",
]

MAX_PATTERN_CHARS = 1000
_NO_MATCH = object()


class RuleSyntaxError(MeowgentError, ValueError):
    """What is wrong in a pattern, said for the person who wrote it (the rule adds its own text)."""


@dataclass(frozen=True)
class Pattern:
    """One argument's pattern: ``source`` as written, and what it matches."""

    kind: str
    """``"glob"``, ``"re"``, ``"set"``, ``"exact"`` (a quoted string) or ``"json"``."""
    source: str
    """The pattern as written in the rule."""
    test: Callable[[Any, bool], bool] = field(compare=False, repr=False)

    def matches(self, value: Any, *, allow: bool) -> bool:
        """Whether ``value`` matches, for an allow rule (``allow=True``: only spellings that mean
        what the pattern says whichever way they are read) or a deny or ask rule (every spelling of
        what it says, and a value with no normal form)."""
        return self.test(value, allow)


def value_text(value: Any) -> Any:
    """The text a glob, regex or set matches for ``value``, or a private marker when it has none
    (a list, an object)."""
    plain = plain_value(value)
    if isinstance(plain, str):
        return plain
    if plain is None or isinstance(plain, (bool, int, float)):
        return json.dumps(plain)
    return _NO_MATCH


def plain_value(value: Any) -> Any:
    """``value`` as JSON-like data (a Path as its string, an enum as its value, a model as a dict)."""
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    try:
        from pydantic_core import to_jsonable_python

        return to_jsonable_python(value)
    except Exception:  # noqa: BLE001 - a value pydantic cannot write out matches no pattern
        return _NO_MATCH


def _spelling(value: Any) -> Spelling | None:
    text = value_text(value)
    return spelling_of(text) if isinstance(text, str) else None


def _re2(pattern: str, what: str) -> Any:
    try:
        return compile_regex(pattern)
    except RegexError as error:
        raise RuleSyntaxError(f"{what} is not a pattern the rules can run: {error}") from None


def _glob(source: str, argument: str) -> Pattern:
    what = f"the glob {argument}={source}"
    if has_dot_dot_segment(source):
        raise RuleSyntaxError(
            f"{what} has a '..' segment, which a glob cannot have (a value's '..' is resolved before it"
            f" is matched); to match exactly that value, quote it: {argument}={json.dumps(source)}"
        )
    if any(char in source for char in HELD.values()):
        raise RuleSyntaxError(
            f"the glob {argument}={visible(source)} has a private-use character (U+E000 to U+E002) that"
            " the rules use for its wildcards; to match a value that has one, quote it:"
            f" {argument}={json.dumps(source)}"
        )
    held = spelling_of(hold(source))
    if held.normal is None or held.written is None:
        quoted = json.dumps(source)
        raise RuleSyntaxError(
            f"{what} cannot be read as one place: {held.why}; write the place plainly (e.g."
            f" {argument}=scratch/**), or quote the value to match exactly that: {argument}={quoted}"
        )
    # The normal form has only '/' for a separator; as written, a backslash separates too.
    written = _re2(held_regex(held.written), what)
    normal = _re2(held_regex(held.normal, segment="[^/]"), what)
    any_case = _re2("(?i)" + held_regex(held.normal, segment="[^/]"), what)

    def test(value: Any, allow: bool) -> bool:
        spelling = _spelling(value)
        if spelling is None:
            return False
        as_written = spelling.written is not None and written.fullmatch(spelling.written) is not None
        if allow:
            return as_written and spelling.normal is not None and bool(normal.fullmatch(spelling.normal))
        if as_written or spelling.normal is None or any_case.fullmatch(spelling.normal) is not None:
            return True
        local = local_spelling(spelling.normal)
        return local is not None and any_case.fullmatch(local) is not None

    return Pattern("glob", source, test)


def _regex(source: str, pattern: str, argument: str) -> Pattern:
    compiled = _re2(pattern, f"the regex {argument}={source}")

    def test(value: Any, allow: bool) -> bool:
        spelling = _spelling(value)
        if spelling is None:
            return False
        if allow:
            return spelling.normal is not None and compiled.fullmatch(spelling.text) is not None
        if spelling.normal is None:
            return True
        forms = (spelling.text, spelling.decoded, spelling.normal, local_spelling(spelling.normal))
        return any(form is not None and compiled.fullmatch(form) is not None for form in forms)

    return Pattern("re", source, test)


def _texts(values: frozenset[str], kind: str, source: str) -> Pattern:
    normals = {spelling.normal.casefold() for spelling in map(spelling_of, values) if spelling.normal}

    def test(value: Any, allow: bool) -> bool:
        text = value_text(value)
        if text in values or allow or not isinstance(text, str):
            return text in values
        normal = spelling_of(text).normal
        if normal is None or normal.casefold() in normals:
            return True
        local = local_spelling(normal)
        return local is not None and local.casefold() in normals

    return Pattern(kind, source, test)


def _json_value(source: str, value: Any) -> Pattern:
    wanted = json.dumps(value, sort_keys=True)

    def test(given: Any, allow: bool) -> bool:
        plain = plain_value(given)
        try:
            return plain is not _NO_MATCH and json.dumps(plain, sort_keys=True) == wanted
        except (TypeError, ValueError):
            return False

    return Pattern("json", source, test)


_DECODER = json.JSONDecoder()


def _quoted(text: str, start: int, what: str) -> tuple[str, int]:
    """The JSON string starting at ``start`` (a ``"``) and where it ends."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise RuleSyntaxError(
            f"{what} begins a quoted value that does not end properly ({error.msg}); quote values as JSON"
            ' strings: "my file.txt", with \\" for a quote inside'
        ) from None
    return value, end


def _bare_end(text: str, start: int) -> int:
    end = start
    while end < len(text) and not text[end].isspace() and not text.startswith("->", end):
        end += 1
    return end


def read_pattern(text: str, start: int, argument: str) -> tuple[Pattern, int]:
    """The pattern of ``argument`` that starts at ``text[start]``, and where it ends.

    Raises:
        RuleSyntaxError: The pattern is malformed; says how to write it.
    """
    what = f"{argument}="
    if start >= len(text) or text[start].isspace() or text.startswith("->", start):
        raise RuleSyntaxError(f'{what} has no pattern; to match an empty value write {argument}=""')
    char = text[start]
    if char == '"':
        value, end = _quoted(text, start, what)
        return _texts(frozenset([value]), "exact", text[start:end]), end
    if text.startswith("re:", start):
        if text.startswith('re:"', start):
            pattern, end = _quoted(text, start + 3, what + "re:")
        else:
            end = _bare_end(text, start + 3)
            pattern = text[start + 3 : end]
        if not pattern:
            raise RuleSyntaxError(f"{what}re: has no regex after 're:'; e.g. {argument}=re:[a-z]+\\.txt")
        _check_length(pattern, what)
        return _regex(text[start:end], pattern, argument), end
    if text.startswith("json:", start):
        try:
            value, end = _DECODER.raw_decode(text, start + 5)
        except json.JSONDecodeError as error:
            raise RuleSyntaxError(
                f"{what}json: is not followed by a JSON value ({error.msg}); e.g. {argument}=json:[1,2]"
            ) from None
        return _json_value(text[start:end], value), end
    if char == "{":
        return _value_set(text, start, argument)
    end = _bare_end(text, start)
    source = text[start:end]
    for bad in '"{}':
        if bad in source:
            raise RuleSyntaxError(
                f"the glob {what}{source} has a {bad!r} inside it; quote a value that has one as a JSON string"
                f" ({argument}={json.dumps(source)}), and write a set as the whole value: {argument}={{a,b}}"
            )
    _check_length(source, what)
    return _glob(source, argument), end


def _value_set(text: str, start: int, argument: str) -> tuple[Pattern, int]:
    what = f"{argument}={{...}}"
    values: list[str] = []
    i = start + 1
    while True:
        while i < len(text) and text[i] in " \t":
            i += 1
        if i >= len(text):
            raise RuleSyntaxError(f"the set {what} has no closing '}}'; write it as {argument}={{a,b}}")
        if text[i] == '"':
            value, i = _quoted(text, i, what)
        else:
            end = i
            while end < len(text) and text[end] not in ',{}"' and not text[end].isspace():
                end += 1
            value, i = text[i:end], end
            if not value:
                raise RuleSyntaxError(
                    f"the set {what} has an empty or malformed entry; write it as {argument}={{a,b}}, quoting"
                    ' an entry that has a space, a comma or a brace: {"a b",c}'
                )
        values.append(value)
        while i < len(text) and text[i] in " \t":
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == "}":
            end = i + 1
            break
        raise RuleSyntaxError(
            f"the set {what} has no closing '}}' after {value!r}; write it as {argument}={{a,b}}"
        )
    source = text[start:end]
    _check_length(source, f"{argument}=")
    return _texts(frozenset(values), "set", source), end


def _check_length(source: str, what: str) -> None:
    if len(source) > MAX_PATTERN_CHARS:
        raise RuleSyntaxError(
            f"the pattern of {what} is {len(source):,} characters long; a pattern may have at most"
            f" {MAX_PATTERN_CHARS:,}: write a shorter one (a regex or a glob) a person can read"
        )
