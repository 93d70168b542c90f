"""Running an eval's cases some at a time, reporting them in order, and the server that cuts streams.

`run_jobs` runs numbered jobs at most ``concurrency`` at once and hands each result on in order.
A server may cut a streamed answer short when another request arrives (`StreamCut`, e.g.
llama-cpp-python's ``interrupt_requests``): the cut job and those not yet started then run one
at a time after the others, and `cut_note` says so. A cut while nothing else runs is an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..models.base import StreamCut

__all__ = ["cut_note", "run_jobs"]

T = TypeVar("T")


async def run_jobs(
    count: int,
    run_one: Callable[[int], Awaitable[T]],
    *,
    concurrency: int,
    on_done: Callable[[T, int, int], None] | None = None,
) -> tuple[list[T], str]:
    """Run jobs ``0 .. count - 1``, ``concurrency`` at once, in order.

    Args:
        count: How many jobs.
        run_one: Runs job ``number`` and returns its result.
        concurrency: How many jobs run at once.
        on_done: Called as ``on_done(result, done, count)`` with each result in the jobs' order
            (``done`` counts from 1); a job that finishes before an earlier one waits for it here.

    Returns:
        The results in the jobs' order, and the note of cut streams (`cut_note`; empty when none
        was cut).

    Raises:
        BaseException: What a job raised (the other jobs are cancelled; none starts after it),
            including a `StreamCut` of a job that ran alone.
    """
    results: list[Any] = [None] * count
    done = [False] * count
    reported, failed = 0, False
    cut: list[int] = []
    """The jobs whose stream the server cut while others ran."""
    later: list[int] = []
    """The jobs not started when a stream had been cut: they run alone too."""
    gate = asyncio.Semaphore(concurrency)

    async def run(number: int, alone: bool) -> None:
        nonlocal reported, failed
        async with gate:
            if failed:  # a job failed: start no more (the rest are being cancelled)
                return
            if cut and not alone:
                later.append(number)
                return
            try:
                results[number] = await run_one(number)
            except StreamCut:
                if alone or concurrency == 1:
                    failed = True
                    raise
                cut.append(number)
                return
            except BaseException:
                failed = True
                raise
            done[number] = True
        while reported < count and done[reported]:
            reported += 1
            if on_done is not None:
                on_done(results[reported - 1], reported, count)

    # Made in order, so the semaphore lets them in in order: with concurrency 1, one at a time.
    tasks = [asyncio.ensure_future(run(number, False)) for number in range(count)]
    try:
        await asyncio.gather(*tasks)
    finally:  # a failing job (or a cancelled eval) stops the others
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for number in sorted(cut + later):
        await run(number, True)
    return results, cut_note(len(cut), len(cut) + len(later), concurrency)


def cut_note(cut: int, rerun: int, concurrency: int) -> str:
    """The one line an eval says when the server cut ``cut`` streams (empty when none)."""
    if not cut:
        return ""
    answers = "answer" if cut == 1 else "answers"
    cases = "case" if rerun == 1 else "cases"
    return (
        f"The server cut {cut} {answers} short while cases ran up to {concurrency} at a time (a stream ended"
        f" with no finish_reason), so {rerun} {cases} ran one at a time after the others; llama-cpp-python's"
        " server does this unless started with --interrupt_requests False."
    )
