"""What was decided about each call that needed approval, in words and in one session-wide log.

Every decision passes through `CallRunner` to `logged`, which writes it to the session's
`DecisionLog` (`session_decisions`) and, when the model is a cassette, to its decision tape (a
replay checks the same calls are decided the same way); frontends only decide. `decision_words`
is a decision as its call's card shows it (``approved by you``, ``allowed by rule 2 (...)``);
`decided_by` the log's "by" column.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..._visible import visible
from ...tools.core import Tool, ToolCall
from . import PERSON_DECIDED, Approved, Decision, Denied

__all__ = ["DecisionLog", "DecisionRecord", "decided_by", "decision_words", "logged", "session_decisions"]

PERSON = "by you"
"""The `Denied.reason` of a person's denial (``by``: `PERSON_DECIDED`); its ``message`` is their
reason when they gave one."""
_UNSAID = Denied().message  # what the model reads when a person denies without a reason
_VERB = re.compile(r"^(?:always allowed|approved|allowed|denied)\b:?\s*", re.IGNORECASE)
_COLUMNS = ("time", "tool", "arguments", "facts", "decision", "by", "reason")


@dataclass(frozen=True)
class DecisionRecord:
    """One decision on one call."""

    time: datetime.datetime
    """When it was made (local time, to the second in the table)."""
    tool: str
    arguments: dict[str, Any]
    """The validated arguments the decision was asked about, as JSON values."""
    decision: Literal["approved", "edited", "denied"]
    """``edited``: approved with arguments a person changed (see ``ran_with``)."""
    by: str
    """Who or what decided: ``you``, ``rule 2 (...)``, ``policy: MEOWGENT_APPROVE=allow``."""
    reason: str = ""
    """A denial's reason (what the model reads after ``Denied:``); empty for an approval."""
    ran_with: dict[str, Any] | None = None
    """For ``edited``: the arguments the person gave instead."""
    words: str = ""
    """The decision as its call's card says it (`decision_words`)."""
    facts: dict[str, Any] = field(default_factory=dict)
    """The tool's `Tool.facts` about the arguments asked about, as JSON values (``{"risk":
    "read-only"}``); empty for a tool without facts."""

    def row(self) -> dict[str, Any]:
        """The record as a table row (the columns of `DecisionLog.table`; ``facts`` as
        ``risk=read-only``, one ``name=value`` per fact)."""
        arguments = (
            self.arguments if self.ran_with is None else {"asked": self.arguments, "ran": self.ran_with}
        )
        return {
            "time": self.time.strftime("%H:%M:%S"),
            "tool": self.tool,
            "arguments": json.dumps(arguments, ensure_ascii=False, sort_keys=True),
            "facts": " ".join(f"{name}={_fact_text(value)}" for name, value in self.facts.items()),
            "decision": self.decision,
            "by": self.by,
            "reason": self.reason,
        }


class DecisionLog:
    """The decisions of a session, in the order they were made."""

    def __init__(self) -> None:
        self.records: list[DecisionRecord] = []

    def add(self, record: DecisionRecord) -> None:
        self.records.append(record)

    def clear(self) -> None:
        self.records.clear()

    def __iter__(self) -> Iterator[DecisionRecord]:
        return iter(list(self.records))

    def __len__(self) -> int:
        return len(self.records)

    def columns(self) -> tuple[str, ...]:
        """The table's columns: ``facts`` only when a decided call's tool has facts."""
        if any(record.facts for record in self.records):
            return _COLUMNS
        return tuple(column for column in _COLUMNS if column != "facts")

    def table(self, width: int = 60) -> str:
        """The decisions as a plain-text table, numbered from 1; each cell cut at ``width`` characters
        and its hidden characters shown (a tool's arguments and a reason come from outside)."""
        if not self.records:
            return "No decisions yet in this session: no call has needed approval."
        columns = self.columns()
        rows = [["#", *columns]]
        for number, record in enumerate(self.records, 1):
            row = record.row()
            cells = [visible(str(row[column])) for column in columns]
            rows.append([str(number), *(c if len(c) <= width else c[: width - 3] + "..." for c in cells)])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])

    def dataframe(self) -> Any:
        """The decisions as a pandas DataFrame (``time`` a datetime; ``arguments`` JSON text), with
        the columns of `columns`.

        Raises:
            ImportError: pandas is not installed (says how to install it).
        """
        try:
            import pandas
        except ImportError as error:
            raise ImportError(
                "The decisions as a DataFrame need pandas, which is not installed here;"
                " `pip install pandas`, or use `%agent decisions` for the table as text."
            ) from error
        rows = [{**record.row(), "time": record.time} for record in self.records]
        return pandas.DataFrame(rows, columns=list(self.columns()))

    def __repr__(self) -> str:
        return self.table()


_SESSION = DecisionLog()


def session_decisions() -> DecisionLog:
    """This session's (this process's) decisions: every call that needed approval, in order."""
    return _SESSION


def decision_words(decision: Decision) -> str | None:
    """The decision as its call's card says it: ``approved by you (edited)``, ``denied by you:
    "use the archive instead"``; None for a denial that says nothing of who decided (its output
    says what the model was told)."""
    if isinstance(decision, Approved):
        reason = visible(decision.reason.strip())  # an approver's reason may quote the arguments
        if not reason:
            return "approved"
        return reason if _VERB.match(reason) else f"approved: {reason}"
    reason = visible(decision.reason.strip())
    if not reason:
        return None
    if _by_person(decision) and decision.message != _UNSAID:
        return f'denied by you: "{visible(decision.message)}"'
    if reason.lower().startswith("denied"):
        return reason
    return f"denied {reason}" if reason.startswith("by ") else f"denied: {reason}"


def decided_by(decision: Decision) -> str:
    """Who or what decided (the decision's ``by``): ``you``, ``rule 2 (...)``; for an approver of
    one's own that does not say, read from its reason, else ``no one``."""
    if decision.by is not None:
        return visible(decision.by.name.strip())
    words = decision_words(decision)
    if words is None:
        return "no one"
    rest = _VERB.sub("", words, count=1)
    by = rest[3:] if rest.startswith("by ") else rest
    if isinstance(decision, Denied) and _by_person(decision):
        return "you"
    return by or "no one"


def _by_person(decision: Denied) -> bool:
    """Whether a person denied it (an approver of one's own may say so only in its reason)."""
    if decision.by is not None:
        return decision.by == PERSON_DECIDED
    return decision.reason.strip() == PERSON


async def logged(
    deciding: Awaitable[list[Decision]],
    calls: Sequence[tuple[ToolCall, Tool, Mapping[str, Any]]],
    model: Any = None,
    log: DecisionLog | None = None,
) -> list[Decision]:
    """The decisions ``deciding`` gives on ``calls``, written to the session's log and, when
    ``model`` replays or records a cassette, checked against it or recorded in it.

    An approver that raises (or a run stopped while it waited) is recorded as a denial by it,
    and the error goes on.

    Raises:
        CassetteError: In a replay, a call was decided otherwise than when it was recorded.
    """
    log = log if log is not None else _SESSION
    try:
        decisions = await deciding
    except BaseException as error:
        stopped = not isinstance(error, Exception)
        by = "a stop before a decision" if stopped else "the approver, which raised"
        reason = "" if stopped else f"{type(error).__name__}: {error}"
        for _call, tool, values in calls:
            log.add(_record(tool, values, "denied", by, reason, None, f"denied: {by}"))
        raise
    records = [_record_of(tool, values, decision) for (_, tool, values), decision in zip(calls, decisions)]
    for record in records:
        log.add(record)
    tape = getattr(model, "decision_tape", None)
    if tape is not None:
        for record, decision in zip(records, decisions):
            if decision.by is None or decision.by.kind != "replay":  # a replayed one is the recording
                tape.check(record)
    return decisions


def _record_of(tool: Tool, values: Mapping[str, Any], decision: Decision) -> DecisionRecord:
    words = decision_words(decision) or "denied"
    if isinstance(decision, Denied):
        return _record(tool, values, "denied", decided_by(decision), visible(decision.message), None, words)
    ran = None if decision.arguments is None else _plain(decision.arguments)
    edited = ran is not None and _canonical(ran) != _canonical(_plain(values))
    return _record(
        tool,
        values,
        "edited" if edited else "approved",
        decided_by(decision),
        "",
        ran if edited else None,
        words,
    )


def _record(
    tool: Tool, values: Mapping[str, Any], decision: Any, by: str, reason: str, ran: Any, words: str
) -> DecisionRecord:
    now = datetime.datetime.now().replace(microsecond=0)
    facts = _facts(tool, values)
    return DecisionRecord(now, tool.name, _plain(values), decision, by, reason, ran, words, facts)


def _facts(tool: Tool, values: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's facts about the arguments, as JSON values; none when one cannot be derived (the
    call was denied for it, saying so)."""
    if not tool.facts:
        return {}
    try:
        return _plain(tool.facts_of(values))
    except Exception:  # noqa: BLE001 - a failing fact denied the call already; the log still records it
        return {}


def _fact_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _plain(values: Any) -> Any:
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(dict(values), fallback=repr)
    except Exception:  # noqa: BLE001 - arguments a person typed may be no mapping at all
        return repr(values)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)
