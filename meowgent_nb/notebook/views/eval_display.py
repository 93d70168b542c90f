"""``%tools eval`` in the running cell: rows appear as the cases finish, under "3/7 cases done".

`run_eval` runs `aevaluate` on a thread of its own (the synchronous magic holds the kernel's
loop) and hands each row to the cell's thread, because ipykernel sends a display to the cell of
the thread's request. `EvalProgress` is one display, updated in place, then shrunk to one line
above the returned `EvalReport`. Headless runs show only the report.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any

from ..._html import MUTED, escape, seconds
from ...evals.evaluation import TEXT_LIMIT, EvalCase, EvalReport, EvalRow, aevaluate, check_cases
from ...evals.report import cases_html
from ...models.base import Model
from ...protocols.base import ToolProtocol
from ...tools.core import Tool

__all__ = ["EvalProgress", "run_eval", "watched"]

_POLL = 0.2  # seconds; how late an interrupt may be noticed


class EvalProgress:
    """What the cell shows while an eval runs: the finished rows, then the running case.

    Args:
        cases: The checked cases, in the order they run.
        repeat: How many times each case runs: the view shows each run's row, and counts runs.
    """

    def __init__(self, cases: Sequence[EvalCase], repeat: int = 1):
        self.cases = [case for case in cases for _ in range(repeat)]
        """The case of each run, in the order they run."""
        self._unit = "cases" if repeat == 1 else "runs"
        self.rows: list[EvalRow] = []
        self.started = self._case_started = time.perf_counter()
        self.ended: str | None = None
        """None while running; then "done", or why the eval stopped ("interrupted", an error's name)."""
        self._seconds = 0.0

    def add(self, row: EvalRow) -> None:
        """A case finished."""
        self.rows.append(row)
        self._case_started = time.perf_counter()

    def catch_up(self, rows: Sequence[EvalRow]) -> None:
        """Add the rows of ``rows`` (every row so far) that are not shown yet."""
        for row in rows[len(self.rows) :]:
            self.add(row)

    def end(self, why: str = "done") -> None:
        """The eval is over: ``"done"``, or why it stopped."""
        self.ended = why
        self._seconds = time.perf_counter() - self.started

    @property
    def progress(self) -> str:
        """``"3/7"``: cases (runs) done of all."""
        return f"{len(self.rows)}/{len(self.cases)}"

    def _title(self) -> str:
        if self.ended is None:
            return f"Tool eval: {self.progress} {self._unit} done"
        if self.ended == "done":
            passed = sum(row.passed for row in self.rows)
            return f"Tool eval: {self.progress} {self._unit} done, {passed} passed"
        return f"Tool eval stopped after {self.progress} {self._unit}: {self.ended}"

    def to_text(self) -> str:
        """The ``text/plain`` form: the title, then the finished rows as in the report (no timings)."""
        if self.ended == "done" or not self.rows:
            return self._title()
        return self._title() + "\n" + EvalReport(self.rows).cases_text()

    def to_html(self) -> str:
        """The ``text/html`` form: the title with the time so far, the rows, the running case."""
        now = time.perf_counter()
        elapsed = self._seconds if self.ended else now - self.started
        title = f'<strong>{escape(self._title())}</strong> <span style="{MUTED}">{seconds(elapsed)}</span>'
        if self.ended == "done":
            return f'<div class="meowgent-eval-live">{title}</div>'
        running: list[str] = []
        if self.ended is None and len(self.rows) < len(self.cases):
            case = self.cases[len(self.rows)]
            waited = seconds(now - self._case_started)
            running = [case.prompt, case.category or "-", case.tool or "(none)", "", "", "running...", waited]
        table = cases_html(self.rows, running) if self.rows or running else ""
        return f'<div class="meowgent-eval-live">{title}{table}</div>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}


def watched() -> bool:
    """Whether a person watches the cell: a kernel whose cell did not come from a headless runner."""
    from ..approvals.policy_approvals import is_headless, running_kernel

    return running_kernel() is not None and not is_headless()


def run_eval(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    *,
    tools: Iterable[Tool],
    model: Model,
    protocol: str | ToolProtocol = "xml",
    text_limit: int | None = TEXT_LIMIT,
    live: bool,
    tick: float | None = 1.0,
    concurrency: int = 1,
    repeat: int = 1,
) -> EvalReport:
    """`aevaluate` the cases, showing the rows in the cell as they finish when ``live``.

    ``cases``, ``tools``, ``model``, ``protocol``, ``text_limit``, ``concurrency`` and ``repeat``
    are as for `aevaluate`.

    Args:
        live: Show the progress in the cell (a person watches), or nothing (headless runs).
        tick: Seconds between redraws for the running case's time; None: redraw only per row.

    Returns:
        The `EvalReport`, as `aevaluate` returns it.

    Raises:
        ValueError: The cases are invalid (before anything is shown).
        BaseException: What stopped the eval (a `ModelError`, an interrupt), after the view has
            said so.
    """
    tools = list(tools)
    checked = check_cases(cases, tools)
    # The eval's thread appends each row, then wakes the cell's thread. The list, not the queue,
    # holds the rows: an interrupt can land between a queue's get and the assignment of its value,
    # and the rows that finished must still be shown.
    rows: list[EvalRow] = []
    wake: queue.SimpleQueue[bool] = queue.SimpleQueue()

    def on_row(row: EvalRow, done: int, total: int) -> None:
        rows.append(row)
        wake.put(False)

    worker = _EvalThread(
        aevaluate(
            checked,
            tools=tools,
            model=model,
            protocol=protocol,
            text_limit=text_limit,
            on_row=on_row,
            concurrency=concurrency,
            repeat=repeat,
        ),
        on_end=lambda: wake.put(True),
    )
    view = EvalProgress(checked, repeat)
    handle = None
    try:
        if live:
            from IPython.display import display

            handle = display(view, display_id=True)
        worker.start()  # in the try: an interrupt may land while the thread starts
        drawn = time.perf_counter()
        while True:
            try:
                # A kernel's SIGINT may reach another thread, so the wait must wake now and then
                # for Python to raise the KeyboardInterrupt here.
                ended = wake.get(timeout=_POLL)
            except queue.Empty:
                ended = None
            if ended:
                break
            if ended is None and (tick is None or time.perf_counter() - drawn < tick):
                continue
            if ended is False:  # one wake per row: one update per row, however late we woke
                view.add(rows[len(view.rows)])
            if handle is not None:
                handle.update(view)
                drawn = time.perf_counter()
        report = worker.result()
    except BaseException as error:
        worker.stop()
        view.catch_up(rows)
        is_stop = isinstance(error, (KeyboardInterrupt, asyncio.CancelledError))
        view.end("interrupted" if is_stop else type(error).__name__)
        if handle is not None:
            handle.update(view)
        raise
    view.end()
    if handle is not None:
        handle.update(view)
    return report


class _EvalThread(threading.Thread):
    """Runs one coroutine on an event loop of its own; `stop` cancels it from any thread."""

    def __init__(self, coroutine: Coroutine[Any, Any, EvalReport], on_end: Any):
        super().__init__(name="meowgent-eval", daemon=True)
        self._coroutine, self._on_end = coroutine, on_end
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._stopped = False
        self._outcome: dict[str, Any] = {}

    def run(self) -> None:
        try:
            self._outcome["value"] = asyncio.run(self._main())
        except BaseException as error:  # noqa: BLE001 - handed to the cell's thread by `result`
            self._outcome["error"] = error
        finally:
            self._on_end()

    async def _main(self) -> EvalReport:
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        if self._stopped:  # stopped before it began
            self._coroutine.close()
            raise asyncio.CancelledError
        return await self._coroutine

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel the eval (its model stream is closed) and wait for the thread to end."""
        self._stopped = True
        if self.ident is None:  # never started
            self._coroutine.close()
            return
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop is closed: the eval had ended
                pass
        self.join(timeout)

    def result(self) -> EvalReport:
        """The report, or the error the eval raised; call once the thread has ended."""
        self.join()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["value"]
