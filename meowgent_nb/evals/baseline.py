"""A regression gate for tool descriptions: an eval's outcomes kept in a file, later runs compared.

`check_baseline` (behind ``%tools eval --baseline FILE`` and `testing.assert_eval_baseline`)
records a report's per-case outcomes, model name and tool digests the first time, and afterwards
raises `EvalRegression` naming each case that got worse (a smaller share of its runs passed) and
the tools that changed. A case is known by its prompt, expected tool and arguments. FILE is JSON
(``"format": "meowgent-eval-baseline/1"``), keys sorted so it diffs well in review.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from ..errors import MeowgentError
from .report import EvalReport, EvalRow, _one_line

__all__ = ["FORMAT", "BaselineCheck", "BaselineError", "CaseChange", "EvalRegression", "check_baseline"]

FORMAT = "meowgent-eval-baseline/1"


class BaselineError(MeowgentError, ValueError):
    """A baseline file cannot be read or written; the message names the file (and the field)."""


class _Case(pydantic.BaseModel, extra="forbid"):
    prompt: str
    category: str
    tool: str | None
    arguments: dict[str, Any]
    runs: int = pydantic.Field(ge=1)
    passes: int = pydantic.Field(ge=0)
    reason: str

    @pydantic.model_validator(mode="after")
    def _at_most_runs(self) -> _Case:
        if self.passes > self.runs:
            raise ValueError(f"passes ({self.passes}) is more than runs ({self.runs})")
        return self


class _File(pydantic.BaseModel, extra="forbid"):
    format: str
    model: str | None
    repeat: int = pydantic.Field(ge=1)
    tools: dict[str, str]
    cases: list[_Case]


@dataclass(frozen=True)
class CaseChange:
    """A case whose share of passing runs changed since the baseline."""

    prompt: str
    before: tuple[int, int]
    """(runs passed, runs) in the baseline."""
    now: tuple[int, int]
    """(runs passed, runs) in this run."""
    reason: str
    """Why it fails now (a failed run's reason); empty when every run passed."""

    def line(self) -> str:
        """``'Prompt': 1 of 1 runs passed before, 0 of 1 now: why``."""
        text = f"{_one_line(self.prompt, 60)!r}: {self.before[0]} of {self.before[1]} runs passed before, {self.now[0]} of {self.now[1]} now"
        return f"{text}: {self.reason}" if self.reason else text


@dataclass(frozen=True)
class BaselineCheck:
    """What `check_baseline` did: recorded the baseline, or compared the report with it."""

    path: str
    recorded: bool
    """True when this run wrote the file (there was none): nothing was compared."""
    cases: int = 0
    passed: int = 0
    worse: list[CaseChange] = field(default_factory=list)
    better: list[CaseChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    """Prompts of cases that are not in the baseline."""
    removed: list[str] = field(default_factory=list)
    """Prompts of the baseline's cases that are not in this run."""
    changed_tools: list[str] = field(default_factory=list)
    """Tools whose description or schema differ from the baseline's (or that are new or gone)."""
    models: tuple[str | None, str | None] = (None, None)
    """The baseline's model and this run's."""

    def line(self) -> str:
        """One line for the report: recorded, or how the run compares with the baseline."""
        if self.recorded:
            cases = "case" if self.cases == 1 else "cases"
            return f"baseline recorded to {self.path}: {self.cases} {cases}, {self.passed} passed"
        parts = [f"{len(self.worse)} worse", f"{len(self.better)} better"]
        parts += [f"{len(self.added)} new"] if self.added else []
        parts += [f"{len(self.removed)} gone"] if self.removed else []
        changed = f"; changed since: {', '.join(self.changed_tools)}" if self.changed_tools else ""
        return f"baseline {self.path}: {', '.join(parts)}{changed}"

    def details(self) -> list[str]:
        """Every finding, one line each: worse, better, new and gone cases, changed tools, model."""
        lines = [f"worse: {change.line()}" for change in self.worse]
        lines += [f"better: {change.line()}" for change in self.better]
        lines += [f"new (not in the baseline): {_one_line(p, 60)!r}" for p in self.added]
        lines += [f"gone (in the baseline only): {_one_line(p, 60)!r}" for p in self.removed]
        if self.changed_tools:
            lines.append(
                f"changed since the baseline (description or schema): {', '.join(self.changed_tools)}"
            )
        before, now = self.models
        if before != now:
            lines.append(f"the baseline was recorded with the model {before!r}; this run used {now!r}")
        return lines


class EvalRegression(MeowgentError, AssertionError):
    """An eval did worse than its baseline: the message names each case that got worse.

    An `AssertionError` too, so a plain pytest test shows it as a failed assertion.

    Attributes:
        check: The `BaselineCheck` with every finding.
    """

    def __init__(self, check: BaselineCheck):
        self.check = check
        count = len(check.worse)
        cases = "case" if count == 1 else "cases"
        lines = [f"{count} {cases} got worse than the baseline {check.path}:"]
        lines += [f"- {change.line()}" for change in check.worse]
        lines += [f"  {line}" for line in check.details() if not line.startswith("worse: ")]
        lines.append(
            f"Fix the tool's description or schema; or, if the change is meant, delete {check.path}"
            " and run again to record a new baseline."
        )
        super().__init__("\n".join(lines))

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


def check_baseline(report: EvalReport, path: str | os.PathLike[str]) -> BaselineCheck:
    """Record ``report`` as the baseline at ``path`` when there is none, else compare with it.

    The check is also kept on the report (``report.baseline``), whose text then ends its list of
    findings with it.

    Returns:
        The `BaselineCheck`: recorded, or compared with nothing worse.

    Raises:
        EvalRegression: A case got worse than the baseline.
        BaselineError: The file is not a baseline this package wrote (the message names the
            field), holds none of the report's cases, or cannot be read or written.
    """
    where = str(path)
    target = Path(path)
    if not target.exists():
        _write(target, _dump(report))
        passed = sum(row.passed for row in report.rows)
        check = BaselineCheck(where, True, cases=len(report.rows), passed=passed)
    else:
        check = _compare(report, _read(target), where)
    report.baseline = check
    if check.worse:
        raise EvalRegression(check)
    return check


def _keys(cases: Sequence[Any], prompt: Any, tool: Any, arguments: Any) -> list[str]:
    """Each case's key: its prompt, tool and arguments (and which of equal ones it is)."""
    seen: Counter[str] = Counter()
    keys = []
    for case in cases:
        key = json.dumps([prompt(case), tool(case), arguments(case)], sort_keys=True, default=repr)
        keys.append(f"{key}#{seen[key]}")
        seen[key] += 1
    return keys


def _report_cases(report: EvalReport) -> dict[str, tuple[EvalRow, int]]:
    keys = _keys(report.rows, lambda r: r.prompt, lambda r: r.expected, lambda r: r.wanted)
    return dict(zip(keys, zip(report.rows, report.passes)))


def _dump(report: EvalReport) -> dict[str, Any]:
    cases = [
        {
            "prompt": row.prompt,
            "category": row.category,
            "tool": row.expected,
            "arguments": json.loads(json.dumps(dict(row.wanted), default=repr)),
            "runs": report.repeat,
            "passes": passes,
            "reason": "" if passes == report.repeat else row.reason,
        }
        for row, passes in zip(report.rows, report.passes)
    ]
    return {
        "format": FORMAT,
        "model": report.model,
        "repeat": report.repeat,
        "tools": report.tools,
        "cases": cases,
    }


def _compare(report: EvalReport, before: _File, where: str) -> BaselineCheck:
    old = dict(
        zip(_keys(before.cases, lambda c: c.prompt, lambda c: c.tool, lambda c: c.arguments), before.cases)
    )
    new = _report_cases(report)
    if old and new and not set(old) & set(new):  # nothing to compare: it would pass whatever happened
        raise BaselineError(
            f"The eval baseline {where} holds none of this run's cases ({len(new)}; it holds {len(old)} others):"
            " give each list of cases a baseline file of its own, or delete this one to record these cases."
        )
    worse, better = [], []
    for key, (row, passes) in new.items():
        case = old.get(key)
        if case is None:
            continue
        now, then = (passes, report.repeat), (case.passes, case.runs)
        change = CaseChange(row.prompt, then, now, "" if passes == report.repeat else row.reason)
        if now[0] * then[1] < then[0] * now[1]:  # a smaller share of runs passed
            worse.append(change)
        elif now[0] * then[1] > then[0] * now[1]:
            better.append(change)
    names = sorted(set(before.tools) | set(report.tools))
    return BaselineCheck(
        where,
        False,
        cases=len(report.rows),
        passed=sum(row.passed for row in report.rows),
        worse=worse,
        better=better,
        added=[row.prompt for key, (row, _) in new.items() if key not in old],
        removed=[case.prompt for key, case in old.items() if key not in new],
        changed_tools=[name for name in names if before.tools.get(name) != report.tools.get(name)],
        models=(before.model, report.model),
    )


def _read(target: Path) -> _File:
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(
            f"Cannot read the eval baseline {target}: {error}. Delete it to record a new one."
        ) from None
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise BaselineError(
            f"{target} is not an eval baseline (its format is {found!r}, not {FORMAT!r}):"
            " give another file, or delete it to record a new baseline there."
        )
    try:
        return _File.model_validate(data)
    except pydantic.ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors(include_url=False)
        )
        raise BaselineError(
            f"The eval baseline {target} was changed by hand and cannot be read: {problems}."
            " Undo the edit, or delete it to record a new baseline."
        ) from None


def _write(target: Path, data: Mapping[str, Any]) -> None:
    """Write the file whole or not at all: a temp file beside it, renamed over it."""
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.chmod(temporary, 0o644)  # a file for the repository, not mkstemp's private 0600
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise BaselineError(f"Cannot write the eval baseline {target}: {error}") from None
