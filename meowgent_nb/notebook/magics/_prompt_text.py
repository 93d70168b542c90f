"""The prompt a ``%%agent`` cell sends: its text without nbval's marker lines, ``{name}`` filled in.

A string or a number fills in as its text, as typed. Any other value is shown through
`tools.values` (the views tool results get) in a ``<context variable="name">`` block before the
cell's text, and ``{name}`` becomes `` `name` ``: a view is many lines, and pasted inside a
sentence it would break the question in two; as a block before it, the question reads as the
person wrote it and the model meets the data first, as with ``--attach``'s blocks. A variable
named twice is shown once.
"""

from __future__ import annotations

import numbers
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...protocols.prompt import context_block
from ...tools.values import VIEW_TOKENS, ValueView, value_view

__all__ = ["CellPrompt", "SeenVariable", "cell_prompt", "prompt_text"]

_NBVAL_MARKER = re.compile(r"^\s*#\s*NBVAL_\w+\s*$")


@dataclass(frozen=True)
class SeenVariable:
    """A notebook variable the cell showed the model."""

    name: str
    view: ValueView


@dataclass(frozen=True)
class CellPrompt:
    """What a cell sends: the prompt, and the variables shown in it."""

    text: str
    """The whole prompt: the variables' blocks, then the cell's text."""
    cell: str
    """The cell's text alone, names filled in."""
    seen: tuple[SeenVariable, ...] = ()
    """The variables shown in blocks, in the order the cell names them."""


def prompt_text(cell: str, namespace: dict[str, Any]) -> str:
    """The cell without nbval markers (``# NBVAL_SKIP``...), with ``{name}`` filled from ``namespace``."""
    return cell_prompt(cell, namespace).text


def cell_prompt(
    cell: str,
    namespace: dict[str, Any],
    *,
    tokens: int = VIEW_TOKENS,
    count: Callable[[str], int] | None = None,
) -> CellPrompt:
    """The cell's prompt (see the module docstring) and the variables it shows.

    Args:
        cell: The cell's text below ``%%agent``.
        namespace: The notebook's variables.
        tokens: Each variable's budget (`tools.values.value_view`).
        count: The model's tokenizer; None: estimated from characters.
    """
    lines = [line for line in cell.splitlines() if not _NBVAL_MARKER.match(line)]
    seen: dict[str, ValueView] = {}
    text = _expand("\n".join(lines), namespace, seen, tokens, count).strip("\n")
    blocks = [context_block("variable", name, view.text) for name, view in seen.items()]
    shown = tuple(SeenVariable(name, view) for name, view in seen.items())
    return CellPrompt("\n\n".join([*blocks, text]), text, shown)


def _expand(
    text: str,
    namespace: dict[str, Any],
    seen: dict[str, ValueView],
    tokens: int,
    count: Callable[[str], int] | None,
) -> str:
    """``{name}`` -> the notebook variable; anything else (unknown names, ``{}``) stays as typed."""
    out = []
    for literal, field, spec, conversion in string.Formatter().parse(text):
        out.append(literal)
        if field is None:
            continue
        if field.isidentifier() and field in namespace and not conversion and not spec:
            value = namespace[field]
            if issubclass(type(value), (str, numbers.Number)):  # by its type: never its __class__
                out.append(str(value))
                continue
            if field not in seen:
                seen[field] = value_view(value, tokens=tokens, count=count)
            out.append(f"`{field}`")
        else:
            out.append(
                "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            )
    return "".join(out)
