"""Globs as the agent reads them from text a person wrote: one dialect for rules and expectations.

``*`` matches within one path segment, ``?`` one such character, ``**`` anything including
``/``; every other character is itself (no character classes). `compile_glob` compiles a glob to
an RE2 regex (linear time) matched against text as written (expectations); `hold` and
`held_regex` put a glob through the rules' normal form with its wildcards kept aside.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .regex import compile_regex

__all__ = ["HELD", "SEGMENT", "compile_glob", "glob_regex", "held_regex", "hold", "is_glob"]

SEGMENT = r"[^/\\]"
"""What ``*`` and ``?`` match one of: a character of one path segment."""
HELD = {"**": "\ue000", "*": "\ue001", "?": "\ue002"}
"""A glob's wildcards as `hold` writes them: private-use characters, which NFKC, percent-decoding
and reading a path keep as they are (so a ``%2a`` decoded to ``*`` stays a literal star)."""
_UNHELD = {char: wildcard for wildcard, char in HELD.items()}
_WILDCARD = r"\*\*+|\*|\?"  # compiled on first use (re caches it), not at import
_TOKEN = r"\*\*+|\*|\?|[^*?]+"


def is_glob(text: str) -> bool:
    """Whether ``text`` has a wildcard (``*`` or ``?``); a text without one matches only itself."""
    return "*" in text or "?" in text


def glob_regex(glob: str, *, segment: str = SEGMENT) -> str:
    """The regex (for a full match) of ``glob``, ``*`` and ``?`` matching characters of ``segment``."""
    return "".join(
        _wildcard_regex(token[:2], segment) if token[0] in "*?" else re.escape(token)
        for token in re.findall(_TOKEN, glob)
    )


def hold(glob: str) -> str:
    """``glob`` with its wildcards written as `HELD` characters (``***`` as ``**``)."""
    return re.sub(_WILDCARD, lambda match: HELD[match.group()[:2]], glob)


def held_regex(held: str, *, segment: str = SEGMENT) -> str:
    """The regex of a glob written by `hold` (and put in a normal form since): its `HELD`
    characters are wildcards, every other character is itself (a ``*`` too)."""
    return "".join(
        _wildcard_regex(_UNHELD[char], segment) if char in _UNHELD else re.escape(char) for char in held
    )


@functools.lru_cache(maxsize=256)  # an expectation matches one glob against every call of a run
def compile_glob(glob: str) -> Any:
    """``glob`` compiled by RE2, for ``.fullmatch(text)``.

    Raises:
        RegexError: RE2 cannot compile it (a glob too large for its memory bound).
    """
    return compile_regex(glob_regex(glob))


def _wildcard_regex(wildcard: str, segment: str) -> str:
    return {"**": r"(?s:.*)", "*": segment + "*", "?": segment}[wildcard]
