"""How a request differs from the recorded ones: the nearest recording, and a short diff."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._file import REQUEST_FIELDS, Entry

__all__ = ["describe_carried_over", "describe_difference", "describe_value_difference", "nearest"]


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


def describe_carried_over(sent: Mapping[str, Any], entries: Sequence[Entry]) -> str | None:
    """Why ``sent`` has no recording when only the conversation before this cell differs; else None.

    A cell run after other ``%%agent`` cells continues their conversation: its request begins with
    their messages. Recorded from a fresh start (the notebook's first cell, ``--new``), the
    recording holds the same messages without those before. The reverse happens when a cell that
    was recorded after others is run on its own, or starts fresh now. Everything but the
    conversation's beginning must be the same for this to be the explanation.
    """
    # (messages in common, the entry, earlier messages: > 0 in the live request, < 0 in the recording)
    best: tuple[int, Entry, int] | None = None
    for entry in entries:
        recorded = entry.request
        others = [k for k in REQUEST_FIELDS if k != "messages" and not (k == "model" and sent[k] is None)]
        if any(recorded[k] != sent[k] for k in others):
            continue
        system_old, old = _split_system(recorded["messages"])
        system_new, new = _split_system(sent["messages"])
        if system_old != system_new or not old or not new or len(old) == len(new):
            continue
        shorter, longer = (old, new) if len(old) < len(new) else (new, old)
        if longer[-len(shorter) :] != shorter:
            continue
        found = (len(shorter), entry, len(new) - len(old))
        if best is None or found[0] > best[0]:
            best = found
    if best is None:
        return None
    _, entry, earlier = best
    count = f"{abs(earlier)} earlier message{'s' if abs(earlier) != 1 else ''}"
    if earlier > 0:
        return (
            f"This cell continues the conversation of earlier cells ({count} before its prompt), but the"
            f" recording (line {entry.line}) started fresh. Add --new to the first %%agent cell, or run"
            " the notebook from the top (Kernel > Restart and Run All)."
        )
    return (
        f"This cell starts a fresh conversation, but the recording (line {entry.line}) continued the"
        f" conversation of earlier cells ({count} before its prompt). Run the notebook from the top"
        " (Kernel > Restart and Run All) so the earlier cells run first, and do not start this cell"
        " with --new or %agent reset."
    )


def _split_system(messages: Sequence[Any]) -> tuple[Any, list[Any]]:
    """The system message (None without one) and the conversation after it."""
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        return messages[0], list(messages[1:])
    return None, list(messages)


def describe_difference(recorded: Mapping[str, Any], sent: Mapping[str, Any], max_lines: int = 16) -> str:
    """Where ``sent`` first differs from ``recorded``, with a short unified diff of that value."""
    return _described(_first_difference(dict(recorded), dict(sent), ""), max_lines)


def describe_value_difference(recorded: Any, sent: Any, where: str, max_lines: int = 16) -> str:
    """Where ``sent`` first differs from ``recorded`` (a value named ``where``), as `describe_difference`."""
    return _described(_first_difference(recorded, sent, where), max_lines)


def _described(found: tuple[str, Any, Any] | None, max_lines: int) -> str:
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
