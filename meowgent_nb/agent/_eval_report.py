"""What an eval found: `EvalRow` per case, `EvalReport` with its summary, as text and HTML.

The text form is what nbval compares, so it has no timings. The HTML form adds the arguments and
times, and marks each result with a coloured pill (white on green or red, which reads the same in
light and dark themes, like the status pills of the transcript's cards). `cases_html` is the
table of cases alone, which the live view of ``%tools eval`` shows while cases still run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._html import MUTED, escape, seconds, table_html

__all__ = ["CASE_HEADER", "EvalReport", "EvalRow", "cases_html", "result_html", "stopped_note"]

_PROMPT_WIDTH = 40
CASE_HEADER = ["prompt", "category", "expected", "chosen", "arguments", "result", "time"]
"""The columns of the HTML table of cases."""
# The cards' "done" and "error" colours: white text on them has a contrast of 5.1 and 5.6.
_PASS, _FAIL = "#2e7d32", "#c62828"
_PILL = "color: white; border-radius: 3px; padding: 0 0.4em; font-size: 0.85em; font-weight: 600"
_CELL = '<td style="text-align: left">'
_TIME_CELL = '<td style="text-align: left; white-space: nowrap">'


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
    """How long the model turn took (until reading stopped)."""
    stopped_after: int | None = None
    """Reading stopped after this many characters of answer text with no call begun (see
    `aevaluate`'s ``text_limit``); None when the answer was read to its first call or its end."""


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
            "by_category": {
                name: _score([r for r in self.rows if r.category == name]) for name in categories
            },
            "tool_cases": _score([r for r in self.rows if r.expected is not None]),
            "no_tool_cases": _score([r for r in self.rows if r.expected is None]),
            "all": _score(self.rows),
        }

    def _summary_rows(self) -> list[list[str]]:
        summary = self.summary()
        named = [(name or "-", score) for name, score in summary["by_category"].items()]
        named += [
            ("tool cases", summary["tool_cases"]),
            ("no-tool cases", summary["no_tool_cases"]),
            ("all", summary["all"]),
        ]
        return [[name, str(s["cases"]), str(s["passed"]), _percent(s["accuracy"])] for name, s in named]

    def cases_text(self) -> str:
        """The table of cases as aligned text (no timings), without the summary."""
        return _aligned(
            [["prompt", "category", "expected", "chosen", "result"], *map(_text_cells, self.rows)]
        )

    def to_text(self) -> str:
        """The ``text/plain`` form (no timings, so it is stable): the cases, then the summary."""
        summary = _aligned([["category", "cases", "passed", "accuracy"], *self._summary_rows()])
        return self.cases_text() + "\n\n" + summary

    def to_html(self) -> str:
        """The ``text/html`` form: the cases with arguments and timings, then the summary."""
        summary = table_html(
            "meowgent-eval-summary", ["category", "cases", "passed", "accuracy"], self._summary_rows()
        )
        total = self.summary()["all"]
        title = f"<strong>Tool eval: {total['passed']} of {total['cases']} passed</strong>"
        return f'<div class="meowgent-eval-report">{title}{cases_html(self.rows)}{summary}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        total = self.summary()["all"]
        return f"EvalReport(cases={total['cases']}, passed={total['passed']})"


def cases_html(rows: Sequence[EvalRow], running: Sequence[str] = ()) -> str:
    """The HTML table of cases: one row per `EvalRow`, then ``running`` as a last row if given.

    Args:
        rows: The finished cases.
        running: The cells of a case still running (prompt, category, expected, chosen,
            arguments, result, time), shown as given (escaped), the result muted.
    """
    body = []
    for row in rows:
        prompt, category, expected, chosen, _ = _text_cells(row)
        cells = [category, expected, chosen, _json(row.arguments)]
        body.append(
            f"<tr>{_CELL}<code>{escape(row.prompt)}</code></td>"
            + "".join(f"{_CELL}{escape(x)}</td>" for x in cells)
            + f"{_CELL}{result_html(row)}</td>{_TIME_CELL}{seconds(row.seconds)}</td></tr>"
        )
    if running:
        prompt, *middle, result, elapsed = running
        body.append(
            f"<tr>{_CELL}<code>{escape(prompt)}</code></td>"
            + "".join(f"{_CELL}{escape(x)}</td>" for x in middle)
            + f'{_CELL}<span style="{MUTED}">{escape(result)}</span></td>{_TIME_CELL}{escape(elapsed)}</td></tr>'
        )
    head = "".join(f'<th style="text-align: left">{name}</th>' for name in CASE_HEADER)
    return (
        f'<table class="meowgent-eval"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def result_html(row: EvalRow) -> str:
    """A pass or FAIL pill, then why it failed, or for a pass where reading stopped early, that."""
    if row.passed:
        pill = f'<span class="meowgent-eval-pass" style="background: {_PASS}; {_PILL}">pass</span>'
        if row.stopped_after is None:
            return pill
        return f'{pill} <span style="{MUTED}">{escape(stopped_note(row.stopped_after))}</span>'
    pill = f'<span class="meowgent-eval-fail" style="background: {_FAIL}; {_PILL}">FAIL</span>'
    return f"{pill} {escape(row.reason)}"


def stopped_note(characters: int) -> str:
    """What a row says when reading stopped after ``characters`` of text with no call begun."""
    return f"(no call in the first {characters} characters)"


def _text_cells(row: EvalRow) -> list[str]:
    prompt = " ".join(row.prompt.split())
    if len(prompt) > _PROMPT_WIDTH:
        prompt = prompt[: _PROMPT_WIDTH - 3] + "..."
    result = "pass" if row.passed else f"FAIL: {row.reason}"
    return [prompt, row.category or "-", row.expected or "(none)", row.chosen or "(none)", result]


def _score(rows: list[EvalRow]) -> dict[str, Any]:
    passed = sum(row.passed for row in rows)
    return {"cases": len(rows), "passed": passed, "accuracy": passed / len(rows) if rows else None}


def _percent(accuracy: float | None) -> str:
    return "-" if accuracy is None else f"{accuracy:.0%}"


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, default=repr) if arguments else ""


def _aligned(rows: list[list[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join([*(x.ljust(w) for x, w in zip(row, widths)), row[-1]]).rstrip() for row in rows
    )
