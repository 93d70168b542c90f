"""A cassette read back as the model turns it recorded: `read_turns`.

A cassette stores requests and answers, not runs: a turn begins a new run when the turn before it
asked for no call (its answer was the run's last) or when its messages do not continue that
turn's. The calls an answer asked for are read back from it as the agent read them: the
backend's own calls, else the text parsed for calls to the tools offered (the ``xml``, ``list``
and ``json`` protocols' calls). The recorded decisions on calls, and the recorded results of
``record=True`` tools, belong to the turn they follow in the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models.base import Usage
from ..protocols.parsing import ToolCallParser
from ..tools.calls import ToolCall
from ._entries import DecisionEntry, Entry, ToolEntry, load_entries

__all__ = ["RecordedTurn", "read_turns"]


@dataclass(frozen=True)
class RecordedTurn:
    """One model request of a cassette, its answer, and what the file recorded after it."""

    line: int
    """Where the request starts in the file (1-based)."""
    model: str
    offered: tuple[str, ...]
    """The names of the tools offered."""
    messages: tuple[Mapping[str, Any], ...]
    """The request's messages, as stored."""
    text: str
    """The answer's text (calls written in it included)."""
    calls: tuple[ToolCall, ...]
    """The calls the answer asked for, in order."""
    usage: Usage | None
    finish_reason: str | None
    starts_run: bool
    """Whether the turn begins a run (see the module's docstring)."""
    retried: str | None = None
    """The cause (as the agent words it) of an answer that failed and was asked again; None: it did not."""
    decisions: tuple[DecisionEntry, ...] = field(default=())
    """The decisions recorded after it: ``decision``, ``tool``, ``arguments``, ``by``, ``ran_with``, ``reason``."""
    results: tuple[ToolEntry, ...] = field(default=())
    """The ``record=True`` tools' results recorded after it: ``tool``, ``arguments``, ``result.kind``."""


def read_turns(path: str | os.PathLike[str]) -> list[RecordedTurn]:
    """The model turns of the cassette at ``path``, in file order.

    Raises:
        CassetteError: The file cannot be read or is not a cassette; the message names the line.
    """
    turns: list[RecordedTurn] = []
    after: list[Any] = []
    entries = load_entries(Path(path).expanduser())
    for entry in [*entries, None]:
        if entry is not None and not isinstance(entry, Entry):
            after.append(entry)
            continue
        if turns:
            last = turns[-1]
            turns[-1] = RecordedTurn(
                **{
                    **last.__dict__,
                    "decisions": tuple(e for e in after if isinstance(e, DecisionEntry)),
                    "results": tuple(e for e in after if isinstance(e, ToolEntry)),
                }
            )
        after = []
        if entry is not None:
            turns.append(_turn(entry, turns[-1] if turns else None))
    return turns


def _turn(entry: Entry, before: RecordedTurn | None) -> RecordedTurn:
    request = entry.request
    offered = tuple(str(name) for name in request.get("offered") or ())
    messages = tuple(request.get("messages") or ())
    text = "".join(chunk.text for chunk in entry.chunks)
    native = [call for chunk in entry.chunks for call in chunk.tool_calls]
    calls = tuple(native) if native else _calls_in(text, offered)
    continues = (
        before is not None
        and (before.calls or before.retried is not None)
        and messages[: len(before.messages)] == before.messages
    )
    done = entry.chunks[-1] if entry.chunks else None
    return RecordedTurn(
        line=entry.line,
        model=str(request.get("model") or ""),
        offered=offered,
        messages=messages,
        text=text,
        calls=calls,
        usage=done.usage if done is not None else None,
        finish_reason=done.finish_reason if done is not None else None,
        starts_run=not continues,
        retried=entry.retry.words if entry.retry is not None else None,
    )


def _calls_in(text: str, offered: tuple[str, ...]) -> tuple[ToolCall, ...]:
    if not offered:
        return ()
    parser = ToolCallParser(offered=list(offered))
    return tuple(event for event in [*parser.feed(text), *parser.close()] if isinstance(event, ToolCall))
