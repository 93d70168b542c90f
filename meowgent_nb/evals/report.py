"""What an eval found: `EvalRow` per case, `EvalReport` with its summary, as text and HTML.

The text form is what nbval compares, so it has no timings; the HTML form adds arguments and
times. `cases_html` is the table of cases alone, for the live view of ``%tools eval``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from .._html import MUTED, escape, seconds, table_html
from ..agent.window import CHARACTERS_PER_TOKEN
from ..errors import SettingsError
from ._row import EvalRow, stopped_note
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


class EvalReport:
    """The rows of an eval, with a summary per category and the call metrics; shows as tables.

    Args:
        rows: Every run's `EvalRow`, case by case (with ``repeat=3``: the first case's three
            runs, then the second's, ...).
        tool_block: The size of the tools block the model was shown (`aevaluate` measures it);
            None when not known.
        seconds: How long the cases took together (wall time), when measured.
        concurrency: How many cases ran at once.
        repeat: How many times each case ran.
        notes: Lines the report shows under its table of cases (e.g. that a server cut streams).
        model: The name of the model that answered, when known.
        tools: ``{name: digest}`` of the tools offered (`_tool_block.tool_digests`), when known.

    Raises:
        SettingsError: ``repeat`` is not a whole number of at least 1 that divides the rows.
    """

    def __init__(
        self,
        rows: Iterable[EvalRow],
        tool_block: ToolBlockSize | None = None,
        seconds: float | None = None,
        concurrency: int = 1,
        *,
        repeat: int = 1,
        notes: Iterable[str] = (),
        model: str | None = None,
        tools: Mapping[str, str] | None = None,
    ):
        every = list(rows)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1 or len(every) % repeat:
            raise SettingsError(
                f"repeat must be a whole number of at least 1 dividing the {len(every)} rows; got {repeat!r}"
            )
        self.repeat = repeat
        self.runs: list[list[EvalRow]] = [every[i : i + repeat] for i in range(0, len(every), repeat)]
        """Per case, the rows of its runs."""
        self.rows: list[EvalRow] = [next((r for r in runs if not r.passed), runs[0]) for runs in self.runs]
        """Per case, one row: its first failed run, else its first run; so a case passes only when
        every run passed (pass^k), and a failed case says why."""
        self.tool_block = tool_block
        self.seconds = seconds
        self.concurrency = concurrency
        self.notes = [note for note in notes if note]
        self.model = model
        self.tools = dict(tools or {})
        self.baseline: Any = None
        """What comparing with a baseline found (`baseline.BaselineCheck`), once it was checked."""

    @property
    def passes(self) -> list[int]:
        """Per case, how many of its runs passed."""
        return [sum(row.passed for row in runs) for runs in self.runs]

    @property
    def flips(self) -> list[EvalRow]:
        """The cases that passed in some runs and failed in others (each as its failed row)."""
        return [row for row, k in zip(self.rows, self.passes) if 0 < k < self.repeat]

    @property
    def cases_per_second(self) -> float | None:
        """Cases finished per second of wall time; None when the time was not measured."""
        if self.seconds is None or not self.rows:
            return None
        runs = len(self.rows) * self.repeat
        return runs / self.seconds if self.seconds > 0 else None

    def summary(self) -> dict[str, Any]:
        """The scores per category and the call metrics (docs/guides/evals.md explains each).

        Returns:
            A dict: ``by_category`` (``{name: score}``), ``tool_cases``, ``no_tool_cases``,
            ``all``, ``tool_choice``, ``arguments`` and ``runs`` are scores (``{"cases": n,
            "passed": k, "accuracy": k / n or None}``), pass^k over a case's runs except
            ``runs``; ``execution``, ``hallucination`` and ``called_without_need`` are rates over
            runs (``{"count": k, "of": n, "rate": k / n or None}``); ``tool_block`` (or None),
            ``repeat`` and ``flips`` (the prompts of cases that both passed and failed).
        """
        rows = self.rows
        every = [row for runs in self.runs for row in runs]
        categories = dict.fromkeys(row.category for row in rows)
        tool_rows = [r for r in rows if r.expected is not None]
        no_tool_rows = [r for r in rows if r.expected is None]
        tool_runs = [r for r in every if r.expected is not None]
        calls = [r for r in every if r.chosen is not None]
        block = self.tool_block
        return {
            "by_category": {name: _score([r for r in rows if r.category == name]) for name in categories},
            "tool_cases": _score(tool_rows),
            "no_tool_cases": _score(no_tool_rows),
            "all": _score(rows),
            "tool_choice": _score(tool_runs, lambda r: r.chosen == r.expected),
            "arguments": _score(
                [r for r in tool_runs if r.chosen == r.expected], lambda r: bool(r.arguments_match)
            ),
            "execution": _rate(calls, lambda r: bool(r.executes)),
            "hallucination": _rate(calls, lambda r: r.hallucinated),
            "called_without_need": _rate(
                [r for r in every if r.expected is None], lambda r: r.called_without_need
            ),
            "tool_block": None if block is None else dataclasses.asdict(block),
            "repeat": self.repeat,
            "runs": _score(every),
            "flips": [row.prompt for row in self.flips],
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
        """The table of cases as aligned text (no timings), without the summary; with ``repeat``,
        a ``passes`` column (``2/3``: two of three runs passed)."""
        head = ["prompt", "category", "expected", "chosen", "result"]
        rows = [_text_cells(row) for row in self.rows]
        if self.repeat > 1:
            head.insert(4, "passes")
            for cells, k in zip(rows, self.passes):
                cells.insert(4, f"{k}/{self.repeat}")
        return _aligned([head, *rows])

    def lines(self) -> list[str]:
        """The one-line findings shown under the table of cases: pass^k and the flips (with
        ``repeat``), the notes, and what comparing with a baseline found."""
        lines = []
        if self.repeat > 1:
            k, flips = self.repeat, self.flips
            line = (
                f"pass^{k}: {sum(row.passed for row in self.rows)} of {len(self.rows)} cases passed all"
                f" {k} runs; {len(flips)} flipped (passed in some runs, failed in others)"
            )
            if flips:
                line += ": " + ", ".join(repr(_one_line(row.prompt, _PROMPT_WIDTH)) for row in flips)
            lines.append(line)
        lines += self.notes
        if self.baseline is not None:
            lines.append(self.baseline.line())
        return lines

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
        lines = "\n".join(self.lines())
        return (
            self.cases_text()
            + (f"\n\n{lines}" if lines else "")
            + "\n\n"
            + summary
            + "\n\n"
            + self.metrics_text()
        )

    def to_html(self) -> str:
        """The ``text/html`` form: the cases with arguments and timings, the summary, the metrics."""
        summary = table_html(
            "meowgent-eval-summary", ["category", "cases", "passed", "accuracy"], self._summary_rows()
        )
        total = self.summary()["all"]
        every = f" all {self.repeat} runs" if self.repeat > 1 else ""
        title = f"<strong>Tool eval: {total['passed']} of {total['cases']} passed{every}</strong>"
        passes = [f"{k}/{self.repeat}" for k in self.passes] if self.repeat > 1 else None
        lines = "".join(f'<div class="meowgent-eval-line">{escape(line)}</div>' for line in self.lines())
        parts = [title, cases_html(self.rows, passes=passes), lines, summary, self._metrics_html()]
        return f'<div class="meowgent-eval-report">{"".join(parts)}</div>'

    def _metrics_html(self) -> str:
        """The call metrics on one line: ``tool choice 80% (4/5) · ...``, then the tools block."""
        # The figures in bold by style, not <strong>: the report's one <strong> is its title.
        items = [f"{escape(m)} {_bold(_percent(r))} ({k}/{n})" for m, k, n, r in self._metrics()]
        if self.tool_block is not None:
            items.append(f"tools block {_bold(escape(_block_size(self.tool_block)))}")
        rate = self.cases_per_second
        if rate is not None:  # a measured time (so seconds is set): only in the HTML, like the rows' times
            at_once = f", {self.concurrency} at a time" if self.concurrency > 1 else ""
            items.append(
                f"{_bold(f'{rate:.2f} cases/s')} ({len(self.rows) * self.repeat} in {seconds(cast(float, self.seconds))}{at_once})"
            )
        return f'<div class="meowgent-eval-metrics" style="margin-top: 0.3em">{" · ".join(items)}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        total = self.summary()["all"]
        return f"EvalReport(cases={total['cases']}, passed={total['passed']})"


def cases_html(
    rows: Sequence[EvalRow], running: Sequence[str] = (), passes: Sequence[str] | None = None
) -> str:
    """The HTML table of cases: one row per `EvalRow`, then ``running`` as a last row if given.

    Args:
        rows: The finished cases.
        running: The cells of a case still running (prompt, category, expected, chosen,
            arguments, result, time), shown as given (escaped), the result muted.
        passes: Per row, its runs passed (``"2/3"``), shown in a ``passes`` column before the
            result; None: no such column.
    """
    body = []
    for number, row in enumerate(rows):
        prompt, category, expected, chosen, _ = _text_cells(row)
        cells = [category, expected, chosen, _json(row.arguments)]
        if passes is not None:
            cells.append(passes[number])
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
    names = CASE_HEADER if passes is None else [*CASE_HEADER[:5], "passes", *CASE_HEADER[5:]]
    head = "".join(f'<th style="text-align: left">{name}</th>' for name in names)
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
