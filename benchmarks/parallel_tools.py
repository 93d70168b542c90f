"""Parallel tool calls: 8 calls of a tool that sleeps 200 ms, in one model turn.

Prints the wall time of the turn's tool phase for 1 call, for 8 calls run by the agent (in its
thread pool), and for the same 8 calls run one after another, measured side by side in one run.
Goal: 8 parallel calls take <= 1.2x one call (sequential would be 8x).

Run:  python benchmarks/parallel_tools.py
"""

from __future__ import annotations

import json
import statistics
import time

from meowgent_nb import Agent, ScriptedModel, tool

SLEEP = 0.2
CALLS = 8
REPEATS = 5


@tool
def nap(label: str) -> str:
    """Sleep 200 ms, then return the label."""
    time.sleep(SLEEP)
    return label


def _answer(count: int) -> str:
    calls = (json.dumps({"name": "nap", "arguments": {"label": f"n{i}"}}) for i in range(count))
    return "".join(f"<tool_call>{c}</tool_call>" for c in calls)


def agent_seconds(count: int) -> float:
    """Wall time of one run whose first turn makes ``count`` calls (the model itself is instant)."""
    agent = Agent(ScriptedModel([_answer(count), "done"]), tools=[nap])
    started = time.perf_counter()
    result = agent.run("go")
    elapsed = time.perf_counter() - started
    assert [r.kind for r in result.tool_results] == ["ok"] * count
    return elapsed


def sequential_seconds(count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        nap.run({"label": f"n{i}"})
    return time.perf_counter() - started


def main() -> None:
    agent_seconds(1)  # warm up the thread pool and imports
    one = statistics.median(agent_seconds(1) for _ in range(REPEATS))
    eight = statistics.median(agent_seconds(CALLS) for _ in range(REPEATS))
    sequential = statistics.median(sequential_seconds(CALLS) for _ in range(REPEATS))
    print(f"{CALLS} calls of a tool that sleeps {SLEEP * 1000:.0f} ms, median of {REPEATS} runs")
    print(f"  1 call  (agent)            {one * 1000:7.1f} ms")
    print(
        f"  {CALLS} calls (agent, parallel) {eight * 1000:7.1f} ms   {eight / one:4.2f}x one call  (goal <= 1.20x)"
    )
    print(
        f"  {CALLS} calls (sequential)      {sequential * 1000:7.1f} ms   {sequential / one:4.2f}x one call"
    )
    print("goal", "met" if eight / one <= 1.2 else "MISSED")


if __name__ == "__main__":
    main()
