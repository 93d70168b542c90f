"""The prompt a ``%%agent`` cell sends: its text without nbval's marker lines, ``{name}`` filled in."""

from __future__ import annotations

import re
import string
from typing import Any

__all__ = ["prompt_text"]

_NBVAL_MARKER = re.compile(r"^\s*#\s*NBVAL_\w+\s*$")


def prompt_text(cell: str, namespace: dict[str, Any]) -> str:
    """The cell without nbval markers (``# NBVAL_SKIP``...), with ``{name}`` filled from ``namespace``."""
    lines = [line for line in cell.splitlines() if not _NBVAL_MARKER.match(line)]
    return _expand("\n".join(lines), namespace).strip("\n")


def _expand(text: str, namespace: dict[str, Any]) -> str:
    """``{name}`` -> the notebook variable; anything else (unknown names, ``{}``) stays as typed."""
    out = []
    for literal, field, spec, conversion in string.Formatter().parse(text):
        out.append(literal)
        if field is None:
            continue
        if field.isidentifier() and field in namespace and not conversion and not spec:
            out.append(str(namespace[field]))
        else:
            out.append(
                "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            )
    return "".join(out)
