"""Regexes as the agent runs them from text a person (or a notebook's metadata) wrote: on RE2.

RE2 (the `google-re2` package) matches in time linear in the value, so no pattern can hang a run
whatever the value; it refuses, when the pattern is compiled, the features that could take
catastrophic time (backreferences, lookaround). A pattern's compiled program is bounded too.
"""

from __future__ import annotations

from typing import Any

from ..errors import MeowgentError

__all__ = ["MAX_REGEX_MEMORY", "RegexError", "compile_regex", "fullmatches"]

MAX_REGEX_MEMORY = 8 << 20
"""Bytes RE2 may use for one pattern's compiled program (a pattern that needs more is refused)."""


class RegexError(MeowgentError, ValueError):
    """A regex RE2 cannot run: RE2's reason, and how to write the pattern instead."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(
            f"{detail}. Regexes run on RE2, which matches in time linear in the value and so refuses"
            " backreferences (\\1) and lookaround ((?=...), (?!...)), the features that can take"
            " catastrophic time; write the pattern without them"
        )


def compile_regex(pattern: str) -> Any:
    """``pattern`` compiled by RE2, for ``.fullmatch(text)`` and ``.search(text)``.

    Raises:
        RegexError: RE2 cannot compile it (malformed, a feature it refuses, or too large).
    """
    import re2

    options = re2.Options()
    options.log_errors = False  # the error is raised to the person; RE2 would also print it to stderr
    options.max_mem = MAX_REGEX_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        detail = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else str(error)
        raise RegexError(detail) from None


def fullmatches(compiled: Any, text: str) -> bool:
    """Whether the whole of ``text`` matches ``compiled`` (from `compile_regex`); a lone surrogate,
    which RE2 cannot read, is read as U+FFFD."""
    try:
        return compiled.fullmatch(text) is not None
    except UnicodeEncodeError:
        readable = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return compiled.fullmatch(readable) is not None
