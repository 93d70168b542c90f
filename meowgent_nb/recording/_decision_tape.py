"""Decisions on calls that needed approval, recorded in the cell's cassette and checked in replay.

`DecisionTape` writes each decision (``approved``, ``edited`` or ``denied``, with the validated
arguments, canonical and masked as a tool call's are) beside the model's answers. In replay the
n-th decision on a call must be the n-th recorded one, or it is a `CassetteError` naming the call
and both decisions; who decided is recorded but never compared. A call with no recorded decision
(asked now but not then, or a cassette older than decisions) is decided as it is. A denial's
reason is recorded too, and `replayed` gives a call's recorded decision to decide it by, where
no one can be asked about a call that only a person may approve.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._entries import DecisionEntry
from ._file import Cassette, CassetteError
from .tool_tape import RERECORD_TOOLS, _dump, call_arguments

__all__ = ["DecisionTape"]


class DecisionTape:
    """The recorded decisions of one cassette, in one mode: ``record``, ``replay`` or ``auto``
    (record what has no recording, check what has)."""

    def __init__(self, cassette: Cassette, mode: str, origin: str | None = None):
        self.cassette, self.mode, self.origin = cassette, mode, origin

    def check(self, record: Any) -> None:
        """Record ``record`` (an `agent.decisions.DecisionRecord`), or check it against its recording.

        Raises:
            CassetteError: In replay, the call was decided otherwise when it was recorded.
        """
        mask = self.cassette.mask
        arguments = call_arguments(record.arguments, mask, self.cassette.path)
        ran_with = (
            None if record.ran_with is None else call_arguments(record.ran_with, mask, self.cassette.path)
        )
        tool = mask.string(record.tool)
        found = None
        if self.mode != "record":
            found = self.cassette.take_decision(tool, arguments, again=self.mode == "replay")
        if found is None and self.mode == "replay":
            return  # not asked when it was recorded (approval may be raised since): nothing to compare
        if found is None:
            entry: dict[str, Any] = {"decision": record.decision, "tool": tool, "arguments": arguments}
            entry["by"] = mask.string(record.by)
            if ran_with is not None:
                entry["ran_with"] = ran_with
            if record.decision == "denied" and record.reason:
                entry["reason"] = mask.string(record.reason)
            self.cassette.append(_dump(entry))
            self.cassette.played_decision(tool, arguments)
            return
        if (found.decision, found.ran_with) != (record.decision, ran_with):
            raise self._error(record, arguments, found)

    def replayed(self, tool: str, values: Mapping[str, Any]) -> DecisionEntry | None:
        """In replay, the next recorded decision on a call of ``tool`` with these validated
        arguments, taken (a decision replayed is not `check`-ed again); None in another mode, or
        when the cassette has none.

        Raises:
            CassetteError: The arguments cannot be written as JSON.
        """
        if self.mode != "replay":
            return None
        mask = self.cassette.mask
        arguments = call_arguments(values, mask, self.cassette.path)
        return self.cassette.take_decision(mask.string(tool), arguments, again=True)

    def _error(self, record: Any, arguments: dict[str, Any], found: Any) -> CassetteError:
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        call = f"{record.tool}({shown})"
        where = f" in {self.origin}" if self.origin else ""
        now = _said(record.decision, record.by, record.ran_with, record.reason)
        then = _said(found.decision, found.by, found.ran_with)
        first = (
            f"The call {call}{where} was {then} when the cassette {self.cassette.path} was recorded"
            f" (line {found.line}), and {now} in this run. A replay must decide the same calls the"
            " same way (a person, a rule or MEOWGENT_APPROVE); decide it as recorded."
        )
        return CassetteError(self.cassette.mask.text(f"{first}\n{RERECORD_TOOLS}"))

    def __repr__(self) -> str:
        return f"DecisionTape({str(self.cassette.path)!r}, mode={self.mode!r})"


def _said(decision: str, by: str, ran_with: Any, reason: str = "") -> str:
    text = decision + (f" by {by}" if by and by != "no one" else "") + (f" ({reason})" if reason else "")
    if ran_with is not None:
        text += f" to run with {json.dumps(ran_with, ensure_ascii=False, sort_keys=True)}"
    return text
