"""What `run_code` adds to running a piece of code: the same code run by plain ``exec`` and by the
tool (its parse, its per-thread capture of output and displays, its figure check, its `CodeRun`),
side by side in one run, and a call through the agent loop against a plain tool's call.

    python benchmarks/run_code_overhead.py

Figures are microseconds per call, the best of five rounds of 500 calls each.
"""

from __future__ import annotations

import time

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.notebook.workspace import run_code_tool
from meowgent_nb.testing import tool_call

CODES = {
    "an expression": "x + 1",
    "a print": "print(x)",
    "a loop of 1,000": "s = 0\nfor i in range(1000):\n    s += i\ns",
}
ROUNDS, CALLS = 5, 500


def best_us(function) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            function()
        times.append((time.perf_counter() - start) / CALLS)
    return min(times) * 1e6


def plain(namespace: dict, code: str):
    compiled = compile(code, "<plain>", "exec")
    return lambda: exec(compiled, namespace)


def main() -> None:
    import io
    import sys

    namespace: dict = {"x": 41}
    run_code = run_code_tool(namespace)
    print(f"{'code':<18} {'exec µs':>9} {'run_code µs':>12} {'ratio':>7}")
    for name, code in CODES.items():
        saved, sys.stdout = sys.stdout, io.StringIO()  # plain exec's prints go nowhere, as captured ones
        try:
            bare = best_us(plain(namespace, code))
        finally:
            sys.stdout = saved
        tool_us = best_us(lambda code=code: run_code.invoke({"code": code}))
        print(f"{name:<18} {bare:>9.1f} {tool_us:>12.1f} {tool_us / bare:>6.0f}x")

    @tool
    def add_one(x: int) -> int:
        """Add one."""
        return x + 1

    def through_agent(tools, call, rules) -> float:
        calls = 50  # each call different: the loop does not run a repeated call again
        start = time.perf_counter()
        model = ScriptedModel([*(call(i) for i in range(calls)), "done"])
        result = Agent(model, tools=tools, rules=rules, max_turns=calls + 1).run("go")
        assert sum(r.ok for r in result.tool_results) == calls, result
        return (time.perf_counter() - start) / calls * 1e6

    loop_plain = min(through_agent([add_one], lambda i: tool_call("add_one", x=i), []) for _ in range(3))
    loop_code = min(
        through_agent([run_code], lambda i: tool_call("run_code", code=f"x + {i}"), ["run_code -> allow"])
        for _ in range(3)
    )
    print(
        f"\nthrough the agent loop, per call (50 turns): add_one {loop_plain:,.0f} µs,"
        f" run_code {loop_code:,.0f} µs ({loop_code / loop_plain:.2f}x)"
    )


if __name__ == "__main__":
    main()
