"""How a request differs from the recorded ones: the nearest recording, and a short diff."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._cassette_file import REQUEST_FIELDS, Entry

__all__ = ["describe_difference", "nearest"]


def nearest(sent: Mapping[str, Any], entries: Sequence[Entry]) -> Entry | None:
    """The recorded entry most like ``sent``: most equal fields, then longest shared conversation."""

    def likeness(entry: Entry) -> tuple[int, int, int]:
        recorded = entry.request
        compared = [k for k in REQUEST_FIELDS if k != "messages" and not (k == "model" and sent[k] is None)]
        same = sum(recorded[k] == sent[k] for k in compared)
        shared = 0
        for old, new in zip(recorded["messages"], sent["messages"]):
            if old != new:
                break
            shared += 1
        return same, shared, -abs(len(recorded["messages"]) - len(sent["messages"]))

    return max(entries, key=likeness, default=None)


def describe_difference(recorded: Mapping[str, Any], sent: Mapping[str, Any], max_lines: int = 16) -> str:
    """Where ``sent`` first differs from ``recorded``, with a short unified diff of that value."""
    found = _first_difference(dict(recorded), dict(sent), "")
    if found is None:
        return "it is the same request"
    where, old, new = found
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old + new or len(old + new) > 160):
        lines = list(
            difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "sent", lineterm="", n=1)
        )
        if len(lines) > max_lines:
            lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} more diff lines)"]
        return f"{where} differs:\n" + "\n".join(lines)
    return f"{where} differs:\n  recorded: {_short(old)}\n  sent:     {_short(new)}"


_ABSENT = object()


def _first_difference(old: Any, new: Any, where: str) -> tuple[str, Any, Any] | None:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [k for k in REQUEST_FIELDS if k in old or k in new] if not where else sorted({*old, *new})
        for key in keys:
            found = _first_difference(
                old.get(key, _ABSENT), new.get(key, _ABSENT), f"{where}.{key}" if where else key
            )
            if found:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            a = old[index] if index < len(old) else _ABSENT
            b = new[index] if index < len(new) else _ABSENT
            found = _first_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        return None
    return None if old == new else (where, old, new)


def _short(value: Any, limit: int = 200) -> str:
    text = "(absent)" if value is _ABSENT else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."
