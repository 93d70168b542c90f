"""The values of an expectation's arguments: literals, globs, regexes (``'re:...'``) and any value (``*``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..patterns import compile_glob, is_glob
from ..regex import compile_regex, fullmatches

__all__ = ["ANY", "Regex", "value_matches", "written"]


class _Any:
    """Any value (``*``)."""

    def __repr__(self) -> str:
        return "*"


ANY = _Any()


@dataclass(frozen=True)
class Regex:
    """A string value the whole of which matches ``source`` (written ``'re:SOURCE'``), run on RE2.

    Raises:
        RegexError: RE2 cannot run ``source`` (a backreference, lookaround, or malformed).
    """

    source: str
    """The regex as written after ``re:``."""
    compiled: Any = field(init=False, compare=False, repr=False)
    """``source`` compiled by RE2 (see `agent.regex`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", compile_regex(self.source))

    def fullmatch(self, text: str) -> bool:
        """Whether the whole of ``text`` matches (a lone surrogate, which RE2 cannot read, as U+FFFD)."""
        return fullmatches(self.compiled, text)

    def __repr__(self) -> str:
        return repr("re:" + self.source)


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` (an argument's value) is what ``expected`` asks for.

    A string matches itself, or as a glob (case-sensitive) where it has ``*`` or ``?``: the
    dialect of the approval rules (`agent.patterns`: ``*`` within one path segment, ``**`` across);
    lists, tuples and dicts match element by element (a dict has the same keys); True is no 1.
    """
    if expected is ANY:
        return True
    if isinstance(expected, Regex):
        return isinstance(actual, str) and expected.fullmatch(actual)
    if isinstance(expected, str):
        if not isinstance(actual, str):
            return False
        return actual == expected or (is_glob(expected) and fullmatches(compile_glob(expected), actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(value_matches(e, a) for e, a in zip(expected, actual))
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(actual) == set(expected)
            and all(value_matches(v, actual[k]) for k, v in expected.items())
        )
    if expected is None:
        return actual is None
    try:
        return bool(expected == actual)
    except Exception:  # noqa: BLE001 - a value whose comparison raises is no match
        return False


def written(value: Any) -> str:
    """A value as an expectation writes it (`ANY` as ``*``)."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(written(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' * (len(value) == 1)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {written(v)}" for k, v in value.items()) + "}"
    return repr(value)
