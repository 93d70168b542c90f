"""What an eval found: `EvalRow` per case, `EvalReport` with its summary, as text and HTML.

The text form is what nbval compares, so it has no timings: the cases, the scores per category,
then the call metrics (tool choice, argument accuracy, execution success, hallucination, calls
where no tool was needed) as aligned tables, and the tools block's size. The HTML form adds the
arguments and times, and marks each result with a coloured pill (white on green or red, which reads
the same in light and dark themes, like the status pills of the transcript's cards). `cases_html`
is the table of cases alone, which the live view of ``%tools eval`` shows while cases still run.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._html import MUTED, escape, seconds, table_html
from ..agent.context import CHARACTERS_PER_TOKEN
from ._tool_block import ToolBlockSize

__all__ = ["CASE_HEADER", "EvalReport", "EvalRow", "cases_html", "result_html", "stopped_note"]

_PROMPT_WIDTH = 40
_METRICS = [
    ("tool choice (of tool cases)", "tool_choice"),
    ("argument accuracy (of right tool named)", "arguments"),
    ("execution success (of calls)", "execution"),
    ("hallucination (of calls)", "hallucination"),
    ("called when no tool was needed (of no-tool cases)", "called_without_need"),
]
"""The call metrics' labels, as the report shows them, and their keys in `EvalReport.summary`."""
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
    executes: bool | None = None
    """Whether the first call could run: it names an offered tool and its arguments validate
    against that tool (whichever tool the case expected). False for a call that could not be read,
    names no offered tool, or has invalid arguments; None when the model made no call."""
    arguments_match: bool | None = None
    """For a case that expected a tool and a call that named it: whether the arguments validate
    and hold the expected ones (after validation, as for passing). None for every other row."""
    made_up: tuple[str, ...] = ()
    """What the first call made up: its tool name when no offered tool has that name, else the
    argument names the tool's schema does not declare (in the call's order; nested fields are not
    looked at). Empty without a call, for a call that could not be read, or when nothing was made up."""

    @property
    def hallucinated(self) -> bool:
        """Whether the call named a tool that is not offered, or an argument its tool does not have."""
        return bool(self.made_up)

    @property
    def called_without_need(self) -> bool:
        """Whether the model called a tool (any, readable or not) where the case expected none."""
        return self.expected is None and self.chosen is not None


class EvalReport:
    """The rows of an eval, with a summary per category and the call metrics; shows as tables.

    Args:
        rows: One `EvalRow` per case, in the cases' order.
        tool_block: The size of the tools block the model was shown (`aevaluate` measures it);
            None when not known.
        seconds: How long the cases took together (wall time), when measured.
        concurrency: How many cases ran at once.
    """

    def __init__(
        self,
        rows: Iterable[EvalRow],
        tool_block: ToolBlockSize | None = None,
        seconds: float | None = None,
        concurrency: int = 1,
    ):
        self.rows: list[EvalRow] = list(rows)
        self.tool_block = tool_block
        self.seconds = seconds
        self.concurrency = concurrency

    @property
    def cases_per_second(self) -> float | None:
        """Cases finished per second of wall time; None when the time was not measured."""
        if self.seconds is None or not self.rows:
            return None
        return len(self.rows) / self.seconds if self.seconds > 0 else None

    def summary(self) -> dict[str, Any]:
        """The scores and the call metrics. A case passes when the first call names the expected
        tool with the expected arguments (validated), or when there is no call and none was expected.

        Returns:
            A dict of:

            - ``by_category`` (``{name: score}``), ``tool_cases``, ``no_tool_cases`` and ``all``:
              the cases that passed. Each score is ``{"cases": n, "passed": k, "accuracy": k / n}``
              (accuracy None when there are no cases).
            - ``tool_choice``: a score of the cases that expected a tool, passed when the first
              call named that tool (whatever its arguments).
            - ``arguments`` (argument accuracy): a score of the cases that expected a tool and
              whose first call named it, passed when `EvalRow.arguments_match`.
            - ``execution``: of the cases where the model made a call (readable or not), how many
              calls could run (`EvalRow.executes`), as ``{"count": k, "of": n, "rate": k / n}``
              (rate None when n is 0).
            - ``hallucination``: of the same calls, how many made up a tool or an argument name
              (`EvalRow.hallucinated`), as a rate.
            - ``called_without_need``: of the cases that expected no tool, how many got a call
              (`EvalRow.called_without_need`), as a rate; the complement of ``no_tool_cases``.
              A call to a made-up tool there counts in ``hallucination`` too.
            - ``tool_block``: ``{"tokens": n, "characters": c, "estimated": bool}`` (see
              `ToolBlockSize`), or None when the report was made without it.
        """
        rows = self.rows
        categories = dict.fromkeys(row.category for row in rows)
        tool_rows = [r for r in rows if r.expected is not None]
        no_tool_rows = [r for r in rows if r.expected is None]
        calls = [r for r in rows if r.chosen is not None]
        block = self.tool_block
        return {
            "by_category": {name: _score([r for r in rows if r.category == name]) for name in categories},
            "tool_cases": _score(tool_rows),
            "no_tool_cases": _score(no_tool_rows),
            "all": _score(rows),
            "tool_choice": _score(tool_rows, lambda r: r.chosen == r.expected),
            "arguments": _score(
                [r for r in tool_rows if r.chosen == r.expected], lambda r: bool(r.arguments_match)
            ),
            "execution": _rate(calls, lambda r: bool(r.executes)),
            "hallucination": _rate(calls, lambda r: r.hallucinated),
            "called_without_need": _rate(no_tool_rows, lambda r: r.called_without_need),
            "tool_block": None if block is None else dataclasses.asdict(block),
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

    def _metrics(self) -> list[tuple[str, int, int, float | None]]:
        """The call metrics as (label, count, of, rate), in the order the report shows them."""
        summary = self.summary()
        return [(label, *_figures(summary[key])) for label, key in _METRICS]

    def metrics_text(self) -> str:
        """The call metrics as an aligned table, then the tools block's size when it is known."""
        rows = [[label, str(count), str(of), _percent(rate)] for label, count, of, rate in self._metrics()]
        table = _aligned([["metric", "count", "of", "rate"], *rows])
        block = self.tool_block
        return table if block is None else f"{table}\n\ntools block: {_block_size(block)}"

    def to_text(self) -> str:
        """The ``text/plain`` form (no timings, so it is stable): the cases, the summary, the metrics."""
        summary = _aligned([["category", "cases", "passed", "accuracy"], *self._summary_rows()])
        return self.cases_text() + "\n\n" + summary + "\n\n" + self.metrics_text()

    def to_html(self) -> str:
        """The ``text/html`` form: the cases with arguments and timings, the summary, the metrics."""
        summary = table_html(
            "meowgent-eval-summary", ["category", "cases", "passed", "accuracy"], self._summary_rows()
        )
        total = self.summary()["all"]
        title = f"<strong>Tool eval: {total['passed']} of {total['cases']} passed</strong>"
        parts = [title, cases_html(self.rows), summary, self._metrics_html()]
        return f'<div class="meowgent-eval-report">{"".join(parts)}</div>'

    def _metrics_html(self) -> str:
        """The call metrics on one line: ``tool choice 80% (4/5) · ...``, then the tools block."""
        # The figures in bold by style, not <strong>: the report's one <strong> is its title.
        items = [f"{escape(m)} {_bold(_percent(r))} ({k}/{n})" for m, k, n, r in self._metrics()]
        if self.tool_block is not None:
            items.append(f"tools block {_bold(escape(_block_size(self.tool_block)))}")
        rate = self.cases_per_second
        if rate is not None:  # a measured time: only in the HTML, like the rows' times
            at_once = f", {self.concurrency} at a time" if self.concurrency > 1 else ""
            items.append(
                f"{_bold(f'{rate:.2f} cases/s')} ({len(self.rows)} in {seconds(self.seconds)}{at_once})"
            )
        return f'<div class="meowgent-eval-metrics" style="margin-top: 0.3em">{" · ".join(items)}</div>'

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
    # One line per case whatever the model wrote: a made-up tool name may hold a newline, or be long.
    result = "pass" if row.passed else f"FAIL: {_one_line(row.reason)}"
    chosen = _one_line(row.chosen, _PROMPT_WIDTH) if row.chosen else "(none)"
    prompt = _one_line(row.prompt, _PROMPT_WIDTH)
    return [prompt, _one_line(row.category) or "-", row.expected or "(none)", chosen, result]


def _one_line(text: str, width: int | None = None) -> str:
    """``text`` with its whitespace runs made single spaces, cut to ``width`` with "..." if longer."""
    text = " ".join(text.split())
    return text if width is None or len(text) <= width else text[: width - 3] + "..."


def _figures(score: dict[str, Any]) -> tuple[int, int, float | None]:
    """(count, of, rate) of a score (passed of cases) or of a rate (count of n)."""
    if "passed" in score:
        return score["passed"], score["cases"], score["accuracy"]
    return score["count"], score["of"], score["rate"]


def _score(rows: list[EvalRow], passes: Callable[[EvalRow], bool] = lambda row: row.passed) -> dict[str, Any]:
    passed = sum(passes(row) for row in rows)
    return {"cases": len(rows), "passed": passed, "accuracy": passed / len(rows) if rows else None}


def _rate(rows: list[EvalRow], counts: Callable[[EvalRow], bool]) -> dict[str, Any]:
    count = sum(counts(row) for row in rows)
    return {"count": count, "of": len(rows), "rate": count / len(rows) if rows else None}


def _bold(html: str) -> str:
    return f'<span style="font-weight: 600">{html}</span>'


def _block_size(block: ToolBlockSize) -> str:
    """``"287 tokens (the model's tokenizer)"``, or an estimate that says it is one."""
    if block.estimated:
        per_token = CHARACTERS_PER_TOKEN
        return f"~{block.tokens:,} tokens (estimated: {block.characters:,} characters / {per_token})"
    return f"{block.tokens:,} tokens (the model's tokenizer)"


def _percent(accuracy: float | None) -> str:
    return "-" if accuracy is None else f"{accuracy:.0%}"


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, default=repr) if arguments else ""


def _aligned(rows: list[list[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join([*(x.ljust(w) for x, w in zip(row, widths)), row[-1]]).rstrip() for row in rows
    )
