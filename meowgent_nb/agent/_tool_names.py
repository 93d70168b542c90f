"""A tool name as the model wrote it -> the offered tool it unambiguously means.

Small models copy a name as the person typed it (``number_theory.gcd`` for the offered
``number_theory_gcd``, ``Get-Weather`` for ``get_weather``). A written name that is not offered
but matches exactly one offered name once case is folded and each run of ``.``, ``_``, ``-``,
``/`` and spaces becomes one ``_`` means that tool; its call is then validated and approved like
any other, under the offered name.
A name two offered tools share in that form, or one no tool has, stays as written and gets the
usual ``unknown_tool`` answer: a made-up tool never turns into a real one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["name_index", "offered_name"]

_SEPARATORS = re.compile(r"[._\-/\s]+")


def _folded(name: str) -> str:
    return _SEPARATORS.sub("_", name.strip()).lower()


def name_index(names: Iterable[str]) -> dict[str, str | None]:
    """Offered names by their folded form; None for a form more than one name has."""
    index: dict[str, str | None] = {}
    for name in names:
        folded = _folded(name)
        index[folded] = None if folded in index and index[folded] != name else name
    return index


def offered_name(written: str, index: Mapping[str, str | None]) -> str:
    """The offered name ``written`` means, or ``written`` itself if it is offered or ambiguous or
    matches none."""
    if written in index.values():
        return written
    return index.get(_folded(written)) or written
