"""Accuracy against the number of offered tools, with every tool described and behind search_tools.

The cases of `_accuracy_cases.py` (8 tools; prompts that need a tool and prompts that don't) run
with the 8 tools among distractors from the 100-tool set of `_toolsets.py` (the other notebook
tools and the 80 service tools), for each size, once with ``tool_search=False`` (every tool
described in the prompt) and once with ``tool_search=True`` (the model sees ``search_tools`` and
finds the rest). The tools are shuffled with a fixed seed, so the case tools' places differ
between sizes but not between runs.

A case passes when the first call that is not ``search_tools`` names the expected tool with (at
least) the expected arguments, or when there is no call and none was expected (the rule of
`meowgent_nb.evaluate`, which reads only the first call and so cannot score a search). A run
stops at that call, before it runs; searches run. Prints per size and mode: tool cases and
no-tool cases passed, how many cases searched, in how many the expected tool was among a
search's results (recall), the system prompt's characters, and seconds per case.

``--model`` is any model spec (``local``, ``ollama:NAME``, ...), or ``oracle``: a deterministic
model that knows the answers. It calls the expected tool when that tool is offered to it, else
searches with the prompt's own words, else answers without a call; so it checks the plumbing and
measures the search's recall on the prompts, not a model's judgment.

Run:  python benchmarks/many_tools.py [--model oracle|local|SPEC] [--sizes 8,20,50,100]
      [--cases N] [--protocol xml|native|json] [--modes off,on] [--quiet]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from meowgent_nb import Agent, EvalCase, FunctionModel, Tool
from meowgent_nb.agent.events import TextDelta
from meowgent_nb.errors import ToolArgumentsError
from meowgent_nb.events import ToolCallEvent, ToolResultEvent, TurnEnd

try:
    from benchmarks._accuracy_cases import CASES, TOOLS
    from benchmarks._toolsets import MANY_TOOLS
except ImportError:  # run as a script: this directory is on sys.path
    from _accuracy_cases import CASES, TOOLS
    from _toolsets import MANY_TOOLS

SEARCH = "search_tools"
TEXT_LIMIT = 300  # as `evaluate`: this much text with no call begun is an answer without a call
MODES = {"off": False, "on": True}


def tool_set(size: int, seed: int = 0) -> list[Tool]:
    """The 8 case tools and ``size - 8`` distractors, shuffled with ``seed``."""
    names = {t.name for t in TOOLS}
    distractors = [t for t in MANY_TOOLS if t.name not in names]
    if not len(TOOLS) <= size <= len(TOOLS) + len(distractors):
        raise SystemExit(f"sizes go from {len(TOOLS)} to {len(TOOLS) + len(distractors)}, got {size}")
    tools = [*TOOLS, *distractors[: size - len(TOOLS)]]
    random.Random(seed).shuffle(tools)
    return tools


def spread(cases: list[EvalCase], count: int | None) -> list[EvalCase]:
    """``count`` cases taken evenly through the list (so each category shows), or all of them."""
    if not count or count >= len(cases):
        return cases
    step = len(cases) / count
    return [cases[int(i * step)] for i in range(count)]


# --- one case -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    passed: bool
    reason: str
    searched: int = 0
    found: bool = False
    """The expected tool was in a search's result."""
    seconds: float = 0.0


async def run_case(agent: Agent, case: EvalCase) -> Outcome:
    started = time.perf_counter()
    searched, found, shown, call = 0, False, 0, None
    async with contextlib.aclosing(agent.stream(case.prompt)) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                if event.call.name != SEARCH:
                    call = event.call
                    break
                searched += 1
            elif isinstance(event, ToolResultEvent) and event.result.call.name == SEARCH:
                found = found or (
                    case.tool is not None and f'<tool name="{case.tool}"' in event.result.output
                )
            elif isinstance(event, TurnEnd) and event.calls == 0:
                break
            elif isinstance(event, TextDelta):
                shown += len(event.text)
                if shown >= TEXT_LIMIT:
                    break
    reason = judge(case, call)
    return Outcome(not reason, reason, searched, found, time.perf_counter() - started)


def judge(case: EvalCase, call: Any) -> str:
    """Why ``call`` does not match ``case``; empty when it does (the rule of `evaluate`)."""
    chosen = "none" if call is None else call.name
    if case.tool is None:
        return "" if call is None else f"expected no tool, chose {chosen}"
    if call is None or call.name != case.tool:
        return f"expected {case.tool}, chose {chosen}"
    tool = next(t for t in TOOLS if t.name == case.tool)
    try:
        values = tool.validate(call.arguments)
    except ToolArgumentsError as error:
        return "invalid arguments: " + "; ".join(error.problems)
    wrong = [
        f"{name}: expected {wanted!r}, got {call.arguments.get(name, values.get(name))!r}"
        for name, wanted in case.arguments.items()
        if values.get(name) != wanted and call.arguments.get(name) != wanted
    ]
    return "; ".join(wrong)


# --- the oracle -----------------------------------------------------------------------------------


def oracle(cases: list[EvalCase]) -> FunctionModel:
    """A model that knows each case's answer; it calls the expected tool only once it is offered."""
    expected = {case.prompt: case for case in cases}

    def answer(messages: list[dict[str, Any]], offered: list[Tool]) -> str:
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        case = expected[prompt]
        names = {t.name for t in offered}
        if case.tool is None:
            return "I can answer that myself."
        if case.tool in names:
            return _call(case.tool, _complete(case))
        searched = any(SEARCH in str(m.get("content", "")) for m in messages[2:])  # after system, prompt
        if SEARCH in names and not searched:
            return _call(SEARCH, {"query": prompt})
        return "I found no tool for that."

    return FunctionModel(answer, name="oracle")


_PLACEHOLDER = {"string": "2025-01-01T10:00:00", "array": ["x@example.com"], "number": 1.0, "integer": 1}


def _complete(case: EvalCase) -> dict[str, Any]:
    """The case's arguments, and a placeholder for each other required one (the cases name only
    the arguments they judge)."""
    tool = next(t for t in TOOLS if t.name == case.tool)
    missing = [n for n in tool.parameters.get("required", []) if n not in case.arguments]
    return {**{n: _PLACEHOLDER[tool.parameters["properties"][n]["type"]] for n in missing}, **case.arguments}


def _call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


# --- report ---------------------------------------------------------------------------------------


@dataclass
class Row:
    size: int
    mode: str
    outcomes: list[tuple[EvalCase, Outcome]] = field(default_factory=list)
    prompt_chars: int = 0

    def line(self) -> str:
        tool = [o for c, o in self.outcomes if c.tool is not None]
        none = [o for c, o in self.outcomes if c.tool is None]
        searched = sum(1 for _, o in self.outcomes if o.searched)
        recall = sum(o.found for o in tool)
        seconds = sum(o.seconds for _, o in self.outcomes) / max(1, len(self.outcomes))
        return (
            f"{self.size:>5} {self.mode:>6}  {_share(tool):>14}  {_share(none):>14}  "
            f"{searched:>3}/{len(self.outcomes):<3}  {recall:>3}/{len(tool):<3}  {self.prompt_chars:>7}  {seconds:6.2f}"
        )


def _share(outcomes: list[Outcome]) -> str:
    if not outcomes:
        return "-"
    passed = sum(o.passed for o in outcomes)
    return f"{passed / len(outcomes):5.0%} ({passed}/{len(outcomes)})"


def make_model(spec: str, cases: list[EvalCase]) -> Any:
    if spec == "oracle":
        return oracle(cases)
    if spec == "local":  # as toolcall_accuracy.py, with room for 100 described tools
        from meowgent_nb.models.llamacpp import LlamaCppModel

        return LlamaCppModel(max_tokens=200, n_ctx=16384)
    from meowgent_nb.models.resolve import resolve_model

    return resolve_model(spec)


async def main_async(args: argparse.Namespace) -> None:
    cases = spread(CASES, args.cases)
    model = make_model(args.model, cases)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    print(
        f"model {args.model}, protocol {args.protocol}, {len(cases)} cases, sizes {sizes}, tool search {modes}"
    )
    print(
        f"{'tools':>5} {'search':>6}  {'tool cases':>14}  {'no-tool cases':>14}  searched  recall  prompt ch  s/case"
    )
    rows = []
    for size in sizes:
        tools = tool_set(size, args.seed)
        for mode in modes:
            row = Row(size, mode)
            for case in cases:
                agent = Agent(
                    model, tools=tools, protocol=args.protocol, tool_search=MODES[mode], max_turns=4
                )
                row.prompt_chars = len(agent.system_prompt())
                row.outcomes.append((case, await run_case(agent, case)))
            rows.append(row)
            print(row.line(), flush=True)
    if not args.quiet:
        for row in rows:
            for case, outcome in row.outcomes:
                if not outcome.passed:
                    print(f"  {row.size:>3} {row.mode:>3}  {case.prompt[:60]!r}: {outcome.reason}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="oracle", help="oracle (deterministic), local, or any model spec")
    parser.add_argument("--sizes", default="8,20,50,100", help="numbers of offered tools, comma-separated")
    parser.add_argument("--cases", type=int, default=None, metavar="N", help="N cases spread over the list")
    parser.add_argument("--protocol", default="xml", choices=["xml", "native", "json"])
    parser.add_argument("--modes", default="off,on", help="tool search off, on, or both")
    parser.add_argument("--seed", type=int, default=0, help="the shuffle of the tools")
    parser.add_argument("--quiet", action="store_true", help="don't list the failures")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modes.split(",") if m.strip() and m.strip() not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(unknown)}; choose from off, on")
    import asyncio

    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
