"""Agent-loop overhead: the framework's time per turn beyond the model's and the tool's.

A scripted 2-turn run with a `FunctionModel`, for N = 10, 1,000 and 100,000 chunks: turn 1 streams
N-1 text chunks then a ``<tool_call>`` of ``noop`` (which returns "ok" at once), turn 2 streams N
text chunks, the answer. For each N it prints, as medians over repeated runs (per run of 2 turns):

- script ms: iterating the prepared chunks with a bare generator (the floor);
- model ms:  ``async for`` over ``model.stream(request)`` for both turns, the model alone;
- agent ms:  ``await agent.arun(...)``, the whole run;
- tool ms:   the tool's time, the sum of ``ToolResult.duration``;
- overhead:  agent - model - tool, per run, per turn, and per chunk (2N chunks a run).

Then the per-chunk overhead at N=100,000 over that at N=1,000 (about 1: linear in N). Model and
agent runs alternate in one process. Peers installed in the same environment (pydantic-ai,
smolagents; see `_peers.py`) run the same script through their own model interfaces and are
printed the same way. Last, the overhead per turn side by side, with the tool's time taken the
same way everywhere (its body's own), and meowgent / best peer against the goal of <= 0.50x. A
peer that is not installed is reported as such.

Run:  python benchmarks/loop_overhead.py
      (with the peers: from an environment of their own, see benchmarks/README.md)
      python benchmarks/loop_overhead.py --compare bf60651
      (this working tree against a commit's package, alternating, in fresh processes: the
      overhead per turn of each at N = 10 and 1,000, and the ratio; a regression shows as > 1;
      then the working tree's with each run traced, its spans going to the OpenTelemetry SDK's
      in-memory exporter, and what tracing costs per turn: docs/guides/tracing.md)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from meowgent_nb import Agent, FunctionModel, __version__, tool
from meowgent_nb.models import ModelChunk, ModelRequest

try:
    from benchmarks._peers import PROMPT, TEXT, Peer, Sample, Sampler, ToolClock, find_peers
except ImportError:  # run as a script: benchmarks/ is on the path
    from _peers import PROMPT, TEXT, Peer, Sample, Sampler, ToolClock, find_peers

SIZES = (10, 1_000, 100_000)
REPEATS = {10: 51, 1_000: 31, 100_000: 5}
"""Runs measured at each N, fewer when `BUDGET` runs out (at least one)."""
BUDGET = 10.0
"""Seconds of measuring per framework and N, after which it stops repeating."""
WARM_UP_UNTIL = 1_000
"""At N up to this, one untimed run first (imports, thread pool); larger runs take too long."""
GOAL = 0.5
TURNS = 2
CALL = '<tool_call>{"name": "noop", "arguments": {}}</tool_call>'
_CLOCK = ToolClock()


@tool
def noop() -> str:
    """Return "ok" at once."""
    return _CLOCK.noop()


@dataclass(frozen=True)
class Row:
    """The medians at one N."""

    n: int
    runs: int
    median: Sample
    fastest: Sample
    """The run with the least overhead (less disturbed by other processes than the median)."""

    def per_turn(self, overhead: float) -> float:
        """``overhead`` (of one run) per model turn."""
        return overhead / TURNS

    def per_chunk(self, overhead: float) -> float:
        """``overhead`` (of one run) per streamed chunk."""
        return overhead / (TURNS * self.n)


Rows = dict[int, "Row | str"]
"""A row per N, or why that N was not run."""


# --- meowgent ---------------------------------------------------------------------------------------


def meowgent_setup(n: int, tracer_provider: object = None) -> Sampler:
    """The chunks, model and agent for N (its runs traced to ``tracer_provider`` where one is
    given); returns the function that measures one run."""
    turns = ([ModelChunk(text=TEXT)] * (n - 1) + [ModelChunk(text=CALL)], [ModelChunk(text=TEXT)] * n)

    def answer(messages: list[dict], tools: list) -> list[ModelChunk]:
        # Turn 2 is asked once the model's turn 1 is in the conversation.
        return turns[any(m["role"] == "assistant" for m in messages)]

    model = FunctionModel(answer)
    traced = (
        {} if tracer_provider is None else {"tracer_provider": tracer_provider}
    )  # a commit before has none
    agent = Agent(model, tools=[noop], **traced)
    user = {"role": "user", "content": PROMPT}
    requests = (
        ModelRequest(messages=[user], offered=[noop]),
        ModelRequest(messages=[user, {"role": "assistant", "content": ""}, user], offered=[noop]),
    )

    async def sample() -> Sample:
        script = await _bare_seconds(turns)
        model_seconds = await _stream_seconds(model, requests)
        agent.reset()
        model.requests.clear()
        _CLOCK.seconds = 0.0
        started = time.perf_counter()
        result = await agent.arun(PROMPT)
        agent_seconds = time.perf_counter() - started
        kinds = [r.kind for r in result.tool_results]
        if result.turns != 2 or kinds != ["ok"] or result.text != (TEXT * n).strip():
            raise RuntimeError(
                f"the scripted run did not go as planned: {result.turns} turns, results {kinds}"
            )
        tool_seconds = sum(r.duration or 0.0 for r in result.tool_results)
        return Sample(script, model_seconds, agent_seconds, tool_seconds, _CLOCK.seconds)

    return sample


async def _bare_seconds(turns: tuple[list[ModelChunk], ...]) -> float:
    started = time.perf_counter()
    for turn in turns:
        async for _ in _aiter(turn):
            pass
    return time.perf_counter() - started


async def _aiter(items: list[ModelChunk]) -> AsyncIterator[ModelChunk]:
    for item in items:
        yield item


async def _stream_seconds(model: FunctionModel, requests: tuple[ModelRequest, ...]) -> float:
    started = time.perf_counter()
    for request in requests:
        async for _ in model.stream(request):
            pass
    return time.perf_counter() - started


# --- measuring --------------------------------------------------------------------------------------


async def measure(setup: Callable[[int], Sampler], n: int) -> Row:
    """The medians of up to ``REPEATS[n]`` runs at N."""
    sample = setup(n)
    if n <= WARM_UP_UNTIL:
        await sample()
    samples: list[Sample] = []
    started = time.perf_counter()
    while not samples or (len(samples) < REPEATS[n] and time.perf_counter() - started < BUDGET):
        gc.collect()
        samples.append(await sample())
    return Row(n, len(samples), _median(samples), min(samples, key=lambda s: s.overhead))


def _median(samples: list[Sample]) -> Sample:
    fields = ("script", "model", "agent", "tool", "tool_body")
    return Sample(*(statistics.median(getattr(s, name) for s in samples) for name in fields))


async def measure_all(setup: Callable[[int], Sampler], peer: Peer | None = None) -> Rows:
    rows: Rows = {}
    for n in SIZES:
        if peer is not None and peer.limit is not None and n > peer.limit:
            rows[n] = _skip_note(peer, rows)
        else:
            rows[n] = await measure(setup, n)
    return rows


def _skip_note(peer: Peer, rows: Rows) -> str:
    largest = max((row for row in rows.values() if isinstance(row, Row)), key=lambda row: row.n)
    return f"not run: {peer.limit_reason}; N={largest.n:,} took {largest.median.agent * 1000:,.0f} ms"


# --- printing ---------------------------------------------------------------------------------------


def print_rows(title: str, rows: Rows) -> None:
    print(f"\n{title}")
    print(
        f"  {'N':>9} {'runs':>5} {'script ms':>10} {'model ms':>10} {'agent ms':>10} {'tool ms':>8}"
        f" {'overhead ms':>12} {'ms/turn':>9} {'us/chunk':>9}"
    )
    for n, row in rows.items():
        if isinstance(row, str):
            print(f"  {n:>9,} {row}")
            continue
        m = row.median
        print(
            f"  {n:>9,} {row.runs:>5} {m.script * 1e3:>10.2f} {m.model * 1e3:>10.2f} {m.agent * 1e3:>10.2f}"
            f" {m.tool * 1e3:>8.3f} {m.overhead * 1e3:>12.2f} {row.per_turn(m.overhead) * 1e3:>9.3f}"
            f" {row.per_chunk(m.overhead) * 1e6:>9.2f}"
        )
    small, large = rows.get(1_000), rows.get(100_000)
    if isinstance(small, Row) and isinstance(large, Row):
        medians = large.per_chunk(large.median.overhead) / small.per_chunk(small.median.overhead)
        fastest = large.per_chunk(large.fastest.overhead) / small.per_chunk(small.fastest.overhead)
        print(
            f"  us/chunk at N=100,000 / at N=1,000: {medians:.2f} (medians), {fastest:.2f} (fastest runs);"
            " about 1: linear in N"
        )


def print_tool_note(rows: Rows) -> None:
    reported = [row.median for row in rows.values() if isinstance(row, Row)]
    handoff = statistics.median(s.tool - s.tool_body for s in reported)
    print(
        f"  tool ms is ToolResult.duration, which includes the hand-off to the agent's thread pool:"
        f" ~{handoff * 1e3:.2f} ms a run beyond the tool body's own time."
    )


def print_comparison(ours: Rows, peers: dict[str, Rows]) -> list[float]:
    """Prints the overhead per turn side by side; returns the ratios the goal is judged on."""
    everyone = {f"meowgent_nb {__version__}": ours, **peers}
    print("\nOverhead per turn, ms; the tool's time is its body's own in every framework")
    print(f"  {'':<26}" + "".join(f"{f'N={n:,}':>13}" for n in SIZES))
    print("  beyond each one's model interface (the tables' model ms):")
    judged = _comparison_rows(everyone, lambda s: s.beyond(s.model), goal=True)
    print("  beyond the bare script (the model interface's own work counts as overhead):")
    _comparison_rows(everyone, lambda s: s.beyond(s.script), goal=False)
    return judged


def _comparison_rows(
    everyone: dict[str, Rows], overhead: Callable[[Sample], float], goal: bool
) -> list[float]:
    per_turn: dict[str, dict[int, float]] = {}
    for name, rows in everyone.items():
        per_turn[name] = {
            n: row.per_turn(overhead(row.median)) for n, row in rows.items() if isinstance(row, Row)
        }
        cells = (f"{per_turn[name][n] * 1e3:>13.3f}" if n in per_turn[name] else f"{'-':>13}" for n in SIZES)
        print(f"    {name:<24}" + "".join(cells))
    ours, *theirs = per_turn.values()
    ratios: dict[int, float] = {}
    for n in SIZES:
        best = [peer[n] for peer in theirs if n in peer]
        if n in ours and best:
            ratios[n] = ours[n] / min(best)
    cells = (f"{f'{ratios[n]:.3f}x':>13}" if n in ratios else f"{'-':>13}" for n in SIZES)
    print(
        f"    {'meowgent / best peer':<24}" + "".join(cells) + (f"   (goal <= {GOAL:.2f}x)" if goal else "")
    )
    return list(ratios.values())


async def main() -> None:
    print("Agent-loop overhead: 2 turns of N chunks (turn 1 ends in a noop tool call); medians, ms per run")
    print(
        "script: bare generator over the chunks; model: the model interface alone; overhead = agent - model - tool"
    )
    ours = await measure_all(meowgent_setup)
    print_rows(f"meowgent_nb {__version__}", ours)
    print_tool_note(ours)
    peers: dict[str, Rows] = {}
    for peer in find_peers():
        installed = peer.version
        if installed is None:
            print(f"\n{peer.name}: not installed ({peer.install}, in an environment of its own)")
            continue
        name = f"{peer.name} {installed}"
        peers[name] = await measure_all(peer.setup, peer)
        print_rows(name, peers[name])
    if not peers:
        print("\nNo peer installed: nothing to compare with (see benchmarks/README.md).")
        return
    ratios = print_comparison(ours, peers)
    met = all(ratio <= GOAL for ratio in ratios)
    print("goal", "met" if met else "MISSED", f"(meowgent <= {GOAL:.2f}x the best peer at each N compared)")


# --- against another commit ------------------------------------------------------------------------

COMPARE_SIZES = (10, 1_000)
COMPARE_ROUNDS = 3
_HERE = os.path.dirname(os.path.abspath(__file__))


async def overhead_per_turn(traced: bool = False) -> dict[int, float]:
    """Ours only: ms of overhead per turn at each of `COMPARE_SIZES` (medians); ``traced``: each
    run's spans go to the OpenTelemetry SDK's in-memory exporter."""
    setup: Callable[[int], Sampler] = meowgent_setup
    if traced:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))

        def setup(n: int) -> Sampler:
            return meowgent_setup(n, provider)

    rows = {n: await measure(setup, n) for n in COMPARE_SIZES}
    return {n: row.per_turn(row.median.overhead) * 1e3 for n, row in rows.items()}


def compare(ref: str) -> None:
    """This working tree's package against ``ref``'s, alternating, each run in a fresh process."""
    root = os.path.dirname(_HERE)
    with tempfile.TemporaryDirectory() as old:
        archive = subprocess.run(
            ["git", "-C", root, "archive", ref, "meowgent_nb"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", old], input=archive.stdout, check=True)
        trees = {ref: old, "working tree": root, "traced": root}
        runs: dict[str, list[dict[int, float]]] = {name: [] for name in trees}
        for _ in range(COMPARE_ROUNDS):
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": tree}
                traced = ["--traced"] if name == "traced" else []
                out = subprocess.run(
                    [sys.executable, __file__, "--overhead-json", *traced],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[name].append({int(n): v for n, v in json.loads(out.stdout).items()})
    print(f"Overhead per turn, ms (median of {COMPARE_ROUNDS} alternating runs, each the median of its own)")
    print(f"  {'N':>7} {ref:>14} {'working tree':>14} {'ratio':>7} {'traced':>10} {'tracing costs':>14}")
    for n in COMPARE_SIZES:
        then, now, traced = (statistics.median(run[n] for run in runs[name]) for name in trees)
        print(
            f"  {n:>7,} {then:>14.3f} {now:>14.3f} {now / then:>6.2f}x {traced:>10.3f} {traced - now:>14.3f}"
        )
    print(
        "  traced: the working tree with each run's spans going to the OpenTelemetry SDK's in-memory exporter"
    )


if __name__ == "__main__":
    options = argparse.ArgumentParser(description="The agent loop's overhead per turn.")
    options.add_argument("--compare", metavar="REF", help="compare with the package at this commit")
    options.add_argument("--overhead-json", action="store_true", help=argparse.SUPPRESS)
    options.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    chosen = options.parse_args()
    if chosen.overhead_json:
        print(json.dumps(asyncio.run(overhead_per_turn(chosen.traced))))
    elif chosen.compare:
        compare(chosen.compare)
    else:
        asyncio.run(main())
