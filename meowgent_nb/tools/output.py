"""A tool's return value -> the text the model reads, shaped by type and cut to a limit.

Each kind of value is shaped before any cut, so what reaches the model stays readable: ``str``
as it is; ``_ai_repr_()``, ``_repr_llm_()``, pandas and numpy values through their views in
`values` (the same a notebook variable gets); JSON-like values as JSON with at most ``items``
entries and ``depth`` levels, images and audio as placeholders (`tools.media`), other bytes
described, anything else its ``repr``. Text over the
limit keeps its start and its end with a note of what was cut. The person-facing list is in
docs/guides/tools.md.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, NamedTuple, cast

from .media import media_text
from .values import kind_text

__all__ = ["MAX_DEPTH", "MAX_ITEMS", "Shape", "counted", "output_text", "shape_note"]

MAX_ITEMS = 50
"""Entries of a list (or keys of an object) written out at each level, by default."""
MAX_DEPTH = 6
"""Levels of nesting written out, by default."""
_TAIL = 1 / 3  # of the limit, kept from the end of a long text
_DOCUMENTS = {b"%PDF": "application/pdf"}  # named in the text of bytes that are no image or audio


class Shape(NamedTuple):
    """The limits a result is shaped to (an agent's ``max_output_chars``, ``_items`` and ``_depth``)."""

    chars: int | None = 4000
    items: int = MAX_ITEMS
    depth: int = MAX_DEPTH


def shape_note(shape: Shape) -> str:
    """How results are shaped, in a sentence (for ``%tools NAME``)."""
    cut = (
        "not cut"
        if shape.chars is None
        else f"cut to {shape.chars:,} characters, keeping the start and the end"
    )
    return (
        f"Its results reach the model as text {cut}; lists and objects show at most {shape.items:,} entries"
        f" a level, {shape.depth} levels deep; images reach a model that can look at them,"
        " other bytes are described."
    )


def output_text(value: Any, limit: int | Shape | None, items: int = MAX_ITEMS, depth: int = MAX_DEPTH) -> str:
    """The text of a tool's return value, at most ``limit`` characters (None: no limit).

    ``limit`` may be a whole `Shape`; ``items`` and ``depth`` bound JSON (see the module docstring).
    """
    if isinstance(limit, Shape):
        limit, items, depth = limit
    text = _text(value, items, depth)
    if limit is None or len(text) <= limit:
        return text
    tail = int(limit * _TAIL)
    head = limit - tail
    note = f"\n[... cut {len(text) - limit:,} of {len(text):,} characters ...]\n"
    return text[:head] + note + (text[-tail:] if tail else "")


def _text(value: Any, items: int, depth: int) -> str:
    if isinstance(value, str):
        return value
    own = kind_text(value)  # the same views as a notebook variable's (`values`)
    if own is not None:
        return own
    with_media = media_text(value, lambda item: _text(item, items, depth))
    if with_media is not None:
        return with_media
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        kind = next((name for magic, name in _DOCUMENTS.items() if data.startswith(magic)), None)
        return f"[bytes: {len(data):,} bytes" + (f", {kind}]" if kind else "]")
    if hasattr(value, "model_dump_json") and callable(value.model_dump_json):  # pydantic
        plain = value.model_dump(mode="json")
        bounded, changed = _bounded(plain, items, depth)
        return json.dumps(bounded, ensure_ascii=False) if changed else cast(str, value.model_dump_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if value is None or isinstance(value, (dict, list, tuple, int, float, bool)):
        try:
            bounded, _ = _bounded(value, items, depth)
            return json.dumps(bounded, ensure_ascii=False, default=_fallback)
        except (ValueError, RecursionError):  # a circular structure
            return repr(value)
    return repr(value)


def _bounded(value: Any, items: int, depth: int, seen: frozenset[int] = frozenset()) -> tuple[Any, bool]:
    """``value`` with at most ``items`` entries per list or object and ``depth`` levels; whether it changed."""
    if not isinstance(value, (dict, list, tuple)):
        return value, False
    if id(value) in seen:
        raise ValueError("a circular structure")
    if depth <= 0:
        count = len(value)
        return (
            f"{{{counted(count, 'key')}}}" if isinstance(value, dict) else f"[{counted(count, 'item')}]"
        ), True
    inner, changed = frozenset(seen | {id(value)}), False
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index == items:
                out["..."] = f"{len(value) - items:,} more keys"
                changed = True
                break
            out[key], moved = _bounded(item, items, depth - 1, inner)
            changed = changed or moved
        return out, changed
    shown = []
    for index, item in enumerate(value):
        if index == items:
            shown.append(f"... {len(value) - items:,} more items")
            changed = True
            break
        bounded, moved = _bounded(item, items, depth - 1, inner)
        shown.append(bounded)
        changed = changed or moved
    return shown, changed


def counted(n: int, word: str) -> str:
    """``"1 tool"``, ``"2 tools"``, ``"1,024 items"``: a count and its noun, in the singular for one."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _fallback(value: Any) -> Any:
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)
