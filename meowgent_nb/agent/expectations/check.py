"""Checking an `Expectation` against what a run did, and showing how they differ, side by side.

`check_expectation` reads the run's `AgentResult`: each call's tool, arguments (validated, or as
sent when validation failed; a value matches either) and outcome, in order, and why the run
ended. Each step takes, among the calls after the previous step's, the earliest set that fits it
(a matching, so ``A(x=*), A(x=1)`` finds both in either order); every call must be taken unless
the calls end with ``, ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import MeowgentError
from ..result import AgentResult
from .language import Expectation, ExpectedCall, parse_expectation, value_matches, written

__all__ = ["Act", "ExpectationNotMet", "Verdict", "acts_of", "check_expectation"]

_ENDED = {"answer": "answered"}
_LONG = 40  # characters of one value shown in a call


@dataclass(frozen=True)
class Act:
    """One call a run made, as an expectation sees it."""

    position: int
    """1 for the run's first call."""
    name: str
    arguments: dict[str, Any]
    """Validated (what ran), or as sent where the call never passed validation."""
    sent: dict[str, Any]
    """As the model sent them."""
    outcome: str
    """The result's kind: ``ok``, ``error``, ``denied``, ``timeout``, ..."""

    def __str__(self) -> str:
        shown = self.sent if isinstance(self.sent, dict) else {}
        return f"{self.name or '(unreadable)'}({', '.join(f'{k}={_short(v)}' for k, v in shown.items())}) -> {self.outcome}"


def acts_of(result: AgentResult) -> list[Act]:
    """The calls ``result``'s run made, in order."""
    acts = []
    for position, each in enumerate(result.tool_results, 1):
        sent = each.call.arguments if isinstance(each.call.arguments, dict) else {}
        ran = each.arguments if each.arguments is not None else sent
        acts.append(Act(position, each.call.name, dict(ran), dict(sent), each.kind))
    return acts


@dataclass(frozen=True)
class Row:
    """One line of the side-by-side table: an expected call and the call it met (or None)."""

    step: str
    expected: str
    actual: str
    mark: str
    ok: bool


@dataclass(frozen=True)
class Verdict:
    """How a run met an expectation: ``met``, a one-line ``line``, and the side-by-side ``table``."""

    expectation: Expectation
    met: bool
    line: str
    rows: tuple[Row, ...]
    acts: tuple[Act, ...]
    ended: str
    """How the run ended: ``answered``, or why it stopped (``max_turns``, ``interrupted``, ...)."""

    def table(self) -> str:
        head = Row("", "expected", "actual", "", True)
        rows = [head, *self.rows]
        widths = [max(len(getattr(r, f)) for r in rows) for f in ("step", "expected", "actual")]
        return "\n".join(
            f"  {r.step:<{widths[0]}}  {r.expected:<{widths[1]}}  {r.actual:<{widths[2]}}  {r.mark}".rstrip()
            for r in rows
        )

    def __str__(self) -> str:
        return self.line if self.met else f"{self.line}\n{self.table()}"

    def raise_if_unmet(self) -> None:
        """Raise `ExpectationNotMet` unless the expectation was met."""
        if not self.met:
            raise ExpectationNotMet(self)


class ExpectationNotMet(MeowgentError, AssertionError):
    """A run did not do what its expectation says: one line, then expected and actual calls side by side."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict
        super().__init__(str(verdict))

    def _render_traceback_(self) -> list[str]:
        line, *table = str(self).splitlines()
        return [
            f"\x1b[31m{type(self).__name__}\x1b[0m: {line}",
            *table,
            "(the full traceback: %agent traceback)",
        ]


def check_expectation(expectation: Expectation | str, result: AgentResult) -> Verdict:
    """Whether ``result``'s run did what ``expectation`` says, and where it did not.

    Raises:
        ExpectationError: ``expectation`` is text that cannot be read.
    """
    if isinstance(expectation, str):
        expectation = parse_expectation(expectation)
    acts = acts_of(result)
    ended = _ENDED.get(result.stopped, result.stopped)
    end_ok = _end_fits(expectation.end, result.stopped)
    steps = [[(str(number), call) for call in step] for number, step in enumerate(expectation.steps, 1)]
    flat = [item for step in steps for item in step]
    ordered = _in_order(expectation.steps, acts)
    problems: list[str] = []
    pairs: dict[int, int] = {}  # index in `flat` -> index in `acts`
    marks: dict[int, str] = {}
    if ordered is not None:
        pairs = ordered
    else:
        pairs = _matching(range(len(flat)), range(len(acts)), lambda i, a: _fits(flat[i][1], acts[a]))
        rest = [i for i in range(len(flat)) if i not in pairs]
        free = [a for a in range(len(acts)) if a not in pairs.values()]
        named = _matching(rest, free, lambda i, a: value_matches(flat[i][1].tool, acts[a].name))
        for i, a in named.items():
            detail = _difference(flat[i][1], acts[a])
            marks[i] = detail[0]
            problems.append(detail[1])
        pairs.update(named)
        problems[:0] = [f"{flat[i][1].source} was not called" for i in range(len(flat)) if i not in pairs]
        if not named and len(pairs) == len(flat):  # every call is there: the order is wrong
            problems.append(_order_problem(flat, pairs, acts, marks))
    extra = [a for a in range(len(acts)) if a not in pairs.values()]
    if extra and not expectation.others:
        shown = ", ".join(f"{acts[a].position} {acts[a]}" for a in extra)
        problems.append(
            f"call{'s' * (len(extra) > 1)} {shown} {'were' if len(extra) > 1 else 'was'} not expected (end the calls with ', ...' to allow others)"
        )
    if not end_ok:
        problems.append(f"the run ended {ended}, expected {expectation.end}")
    rows = [
        Row(
            flat[i][0],
            flat[i][1].source
            + (f" -> {flat[i][1].outcome}" if flat[i][1].outcome and "->" not in flat[i][1].source else ""),
            f"{acts[pairs[i]].position} {acts[pairs[i]]}" if i in pairs else "-",
            "✗ " + marks[i] if i in marks else "✓" if i in pairs else "✗ missing",
            i in pairs and i not in marks,
        )
        for i in range(len(flat))
    ]
    allowed = "✓ other call (, ...)" if expectation.others else "✗ not expected"
    rows += [Row("", "-", f"{acts[a].position} {acts[a]}", allowed, expectation.others) for a in extra]
    rows.append(Row("end", expectation.end or "(any)", ended, "✓" if end_ok else "✗ wrong end", end_ok))
    met = not problems
    if met:
        count = f"{len(acts)} call{'s' * (len(acts) != 1)}"
        line = f"Expectation met: {expectation.source} ({count}, {ended})."
    else:
        line = f"Expectation not met: {'; '.join(problems)}."
    return Verdict(expectation, met, line, tuple(rows), tuple(acts), ended)


def _end_fits(end: str | None, stopped: str) -> bool:
    if end is None:
        return True
    if end == "answered":
        return stopped == "answer"
    if end == "stopped":
        return stopped != "answer"
    return stopped == end


def _fits(call: ExpectedCall, act: Act) -> bool:
    return (
        value_matches(call.tool, act.name)
        and _outcome_fits(call.outcome, act.outcome)
        and all(_argument_fits(value, name, act) for name, value in call.arguments)
    )


def _argument_fits(value: Any, name: str, act: Act) -> bool:
    return any(name in given and value_matches(value, given[name]) for given in (act.arguments, act.sent))


def _outcome_fits(outcome: str | None, kind: str) -> bool:
    if outcome is None:
        return True
    if outcome == "error":
        return kind not in ("ok", "denied")
    return kind == outcome


def _in_order(steps: Sequence[Sequence[ExpectedCall]], acts: list[Act]) -> dict[int, int] | None:
    """Expected call (index over all steps) -> call, each step after the previous one's calls; None
    if there is no such assignment. Each step takes the set that ends earliest: that leaves the
    most calls to the steps after it, so if any assignment exists this finds one."""
    found: dict[int, int] = {}
    start = first = 0
    for step in steps:
        for last in range(start + len(step) - 1, len(acts)):
            match = _matching(range(len(step)), range(start, last + 1), lambda i, a: _fits(step[i], acts[a]))  # noqa: B023 - called within this iteration
            if len(match) == len(step):
                break
        else:
            return None
        found.update({first + i: a for i, a in match.items()})
        start, first = max(match.values(), default=start - 1) + 1, first + len(step)
    return found


def _matching(left: Any, right: Any, fits: Callable[[int, int], bool]) -> dict[int, int]:
    """A largest matching of ``left`` to ``right`` (augmenting paths; both are a few dozen at most)."""
    owner: dict[int, int] = {}
    right = list(right)

    def place(i: int, seen: set[int]) -> bool:
        for a in right:
            if a not in seen and fits(i, a):
                seen.add(a)
                if a not in owner or place(owner[a], seen):
                    owner[a] = i
                    return True
        return False

    for i in left:
        place(i, set())
    return {i: a for a, i in owner.items()}


def _difference(call: ExpectedCall, act: Act) -> tuple[str, str]:
    """(mark, problem) for a call of the expected tool that does not fit ``call``."""
    for name, value in call.arguments:
        if not _argument_fits(value, name, act):
            if name not in act.arguments and name not in act.sent:
                return (
                    f"no {name}",
                    f"call {act.position} {act.name} had no {name} (expected {name}={written(value)})",
                )
            had = act.arguments.get(name, act.sent.get(name))
            return (
                f"wrong {name}",
                f"call {act.position} {act.name} had {name}={_short(had)}, expected {name}={written(value)}",
            )
    return (
        f"ended {act.outcome}",
        f"call {act.position} {act.name} ended {act.outcome}, expected -> {call.outcome}",
    )


def _order_problem(
    flat: list[tuple[str, ExpectedCall]], pairs: dict[int, int], acts: list[Act], marks: dict[int, str]
) -> str:
    first = None
    for i, a in pairs.items():
        for j, b in pairs.items():
            if int(flat[i][0]) < int(flat[j][0]) and a > b:
                marks[i] = marks[j] = "out of order"
                first = first or (acts[b], acts[a])
    if first is None:  # pragma: no cover - an assignment in order would have been found
        return "the calls were made in another order"
    later, earlier = first
    return f"call {later.position} {later.name} came before call {earlier.position} {earlier.name}, expected the other order"


def _short(value: Any) -> str:
    text = written(value)
    return text if len(text) <= _LONG else text[: _LONG - 3] + "..."
