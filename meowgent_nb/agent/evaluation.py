"""Tool-description evals: does the model pick the right tool, with the right arguments?

For people writing tools: each `EvalCase` is a prompt and the call it should lead to. `evaluate`
sends each prompt as the first turn of a fresh `Agent` (the same system prompt and request) and
stops reading at the first tool call, so no tool ever runs. ``%tools eval CASES`` shows the report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._async import run_to_completion
from .._html import seconds, table_html
from ..protocols.base import ToolProtocol
from .loop import Agent
from ..errors import ToolArgumentsError
from .events import ToolCallEvent, TurnEnd
from ..models.base import Model
from ..tools.core import Tool, ToolCall

__all__ = ["EvalCase", "EvalReport", "EvalRow", "aevaluate", "evaluate"]

_UNREADABLE = "(unreadable)"  # the name the agent gives a call it could not parse
_PROMPT_WIDTH = 40


@dataclass(frozen=True)
class EvalCase:
    """A prompt and the tool call it should lead to."""

    prompt: str
    """What the person asks."""
    tool: str | None
    """The tool the model should call; None: it should answer without a tool."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """Arguments the call must have (a subset), compared after validation with the tool."""
    category: str = ""
    """A label to group results by, e.g. ``"understanding"``, ``"parameters"``, ``"refusal"``."""


@dataclass(frozen=True)
class EvalRow:
    """How the model did on one case."""

    prompt: str
    category: str
    expected: str | None
    """The expected tool, or None for no tool."""
    chosen: str | None
    """The first tool the model called, or None."""
    arguments: dict[str, Any]
    """The first call's arguments as the model sent them."""
    passed: bool
    reason: str
    """Why it failed; empty when it passed."""
    seconds: float
    """How long the model turn took."""


class EvalReport:
    """The rows of an eval, with a summary per category; shows as a table in a notebook.

    Args:
        rows: One `EvalRow` per case, in the cases' order.
    """

    def __init__(self, rows: Iterable[EvalRow]):
        self.rows: list[EvalRow] = list(rows)

    def summary(self) -> dict[str, Any]:
        """Cases, passed and accuracy: by category, for tool cases, no-tool cases and all.

        Returns:
            ``{"by_category": {name: score}, "tool_cases": score, "no_tool_cases": score,
            "all": score}``, each score ``{"cases": n, "passed": k, "accuracy": k / n}`` (accuracy
            None when there are no cases).
        """
        categories = dict.fromkeys(row.category for row in self.rows)
        return {
            "by_category": {name: _score([r for r in self.rows if r.category == name]) for name in categories},
            "tool_cases": _score([r for r in self.rows if r.expected is not None]),
            "no_tool_cases": _score([r for r in self.rows if r.expected is None]),
            "all": _score(self.rows),
        }

    def _cells(self, row: EvalRow) -> list[str]:
        prompt = " ".join(row.prompt.split())
        if len(prompt) > _PROMPT_WIDTH:
            prompt = prompt[: _PROMPT_WIDTH - 3] + "..."
        result = "pass" if row.passed else f"FAIL: {row.reason}"
        return [prompt, row.category or "-", row.expected or "(none)", row.chosen or "(none)", result]

    def _summary_rows(self) -> list[list[str]]:
        summary = self.summary()
        named = [(name or "-", score) for name, score in summary["by_category"].items()]
        named += [
            ("tool cases", summary["tool_cases"]),
            ("no-tool cases", summary["no_tool_cases"]),
            ("all", summary["all"]),
        ]
        return [[name, str(s["cases"]), str(s["passed"]), _percent(s["accuracy"])] for name, s in named]

    def to_text(self) -> str:
        """The ``text/plain`` form (no timings, so it is stable): the cases, then the summary."""
        cases = _aligned([["prompt", "category", "expected", "chosen", "result"], *map(self._cells, self.rows)])
        summary = _aligned([["category", "cases", "passed", "accuracy"], *self._summary_rows()])
        return cases + "\n\n" + summary

    def to_html(self) -> str:
        """The ``text/html`` form: the cases with arguments and timings, then the summary."""
        header = ["prompt", "category", "expected", "chosen", "arguments", "result", "time"]
        rows = []
        for row in self.rows:
            _, category, expected, chosen, result = self._cells(row)
            rows.append([row.prompt, category, expected, chosen, _json(row.arguments), result, seconds(row.seconds)])
        cases = table_html("meowgent-eval", header, rows)
        summary = table_html("meowgent-eval-summary", ["category", "cases", "passed", "accuracy"], self._summary_rows())
        total = self.summary()["all"]
        title = f"<strong>Tool eval: {total['passed']} of {total['cases']} passed</strong>"
        return f'<div class="meowgent-eval-report">{title}{cases}{summary}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        total = self.summary()["all"]
        return f"EvalReport(cases={total['cases']}, passed={total['passed']})"


async def aevaluate(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    *,
    tools: Iterable[Tool],
    model: Model | str | None,
    protocol: str | ToolProtocol = "xml",
    system: str | None = None,
) -> EvalReport:
    """Ask the model each case's prompt once and check the first tool call it makes.

    Each prompt is the first turn of a fresh `Agent` with these tools, so the model gets exactly
    the request an agent would send. Reading stops at the first call: no tool is run.

    Args:
        cases: `EvalCase` values, or dicts with the same keys.
        tools: The tools offered to the model.
        model: A `Model`, or a name as `Agent` takes it.
        protocol: How tools reach the model, as for `Agent` (``"xml"``, ``"native"``, ...).
        system: Your instructions, as for `Agent`.

    Returns:
        An `EvalReport` with one row per case.

    Raises:
        ValueError: A case is malformed or names a tool that is not offered (all problems listed).
        ModelError: The model failed; the eval stops there.
    """
    tools = list(tools)
    checked = _checked(cases, tools)
    if model is None or isinstance(model, str):
        from ..models.resolve import resolve_model

        model = resolve_model(model)
    by_name = {t.name: t for t in tools}
    rows = []
    for case in checked:
        agent = Agent(model, tools=tools, protocol=protocol, system=system, max_turns=2)
        started = time.perf_counter()
        call = await _first_call(agent, case.prompt)
        elapsed = time.perf_counter() - started
        reason = _judge(case, call, by_name)
        chosen, arguments = (call.name, dict(call.arguments)) if call else (None, {})
        rows.append(EvalRow(case.prompt, case.category, case.tool, chosen, arguments, not reason, reason, elapsed))
    return EvalReport(rows)


def evaluate(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    *,
    tools: Iterable[Tool],
    model: Model | str | None,
    protocol: str | ToolProtocol = "xml",
    system: str | None = None,
) -> EvalReport:
    """`aevaluate` from synchronous code (also in a notebook cell)."""
    return run_to_completion(aevaluate(cases, tools=tools, model=model, protocol=protocol, system=system))


async def _first_call(agent: Agent, prompt: str) -> ToolCall | None:
    """The first call of the agent's first turn, or None; stops before any tool could run."""
    async with contextlib.aclosing(agent.stream(prompt)) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                return event.call
            if isinstance(event, TurnEnd):
                return None
    return None  # pragma: no cover - a stream always ends its first turn


def _judge(case: EvalCase, call: ToolCall | None, by_name: Mapping[str, Tool]) -> str:
    """Why the call does not match the case; empty when it does."""
    chosen = "none" if call is None else call.name
    if case.tool is None:
        return "" if call is None else f"expected no tool, chose {chosen}"
    if call is None or call.name != case.tool:
        if chosen == _UNREADABLE:
            return f"expected {case.tool}, the call could not be read"
        return f"expected {case.tool}, chose {chosen}"
    try:
        values = by_name[case.tool].validate(call.arguments)
    except ToolArgumentsError as error:
        return "invalid arguments: " + "; ".join(error.problems)
    problems = []
    for name, wanted in case.arguments.items():
        if name not in values:
            problems.append(f"argument {name}: expected {wanted!r}, got nothing")
        elif values[name] != wanted and call.arguments.get(name) != wanted:
            problems.append(f"argument {name}: expected {wanted!r}, got {values[name]!r}")
    return "; ".join(problems)


def _checked(cases: Iterable[EvalCase | Mapping[str, Any]], tools: list[Tool]) -> list[EvalCase]:
    names = [t.name for t in tools]
    known = {f.name for f in dataclasses.fields(EvalCase)}
    problems, checked = [], []
    for number, item in enumerate(cases, 1):
        if isinstance(item, Mapping):
            unknown = sorted(set(item) - known)
            missing = [key for key in ("prompt", "tool") if key not in item]
            if unknown or missing:
                detail = [f"unknown keys {', '.join(unknown)}" if unknown else ""]
                detail.append(f"missing {', '.join(missing)} (tool None: no tool expected)" if missing else "")
                problems.append(f"case {number}: " + "; ".join(d for d in detail if d))
                continue
            item = EvalCase(**item)
        elif not isinstance(item, EvalCase):
            problems.append(f"case {number}: an EvalCase or a dict, got {type(item).__name__}")
            continue
        if item.tool is not None and item.tool not in names:
            problems.append(f"case {number}: no tool named {item.tool!r} (tools: {', '.join(names) or 'none'})")
        checked.append(item)
    if problems:
        raise ValueError("Invalid eval cases:\n" + "\n".join(f"- {p}" for p in problems))
    return checked


def _score(rows: list[EvalRow]) -> dict[str, Any]:
    passed = sum(row.passed for row in rows)
    return {"cases": len(rows), "passed": passed, "accuracy": passed / len(rows) if rows else None}


def _percent(accuracy: float | None) -> str:
    return "-" if accuracy is None else f"{accuracy:.0%}"


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, default=repr) if arguments else ""


def _aligned(rows: list[list[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(x.ljust(w) for x, w in zip(row, widths)), row[-1]]).rstrip() for row in rows)
