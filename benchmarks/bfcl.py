"""The Berkeley Function Calling Leaderboard's (BFCL v4) cases through the product, scored by its AST rules.

Each case's functions become `Tool.from_schema` tools (BFCL's types translated as its own handler
does for OpenAI-style tools: ``dict`` is ``object``, ``float`` is ``number``, ``tuple`` an array,
``any`` and untyped properties strings, ``.`` in names ``_``). The case's question is the first
turn of a fresh `Agent` with the product's own prompt (a BFCL system message becomes the agent's
``system``), temperature 0. Only that first turn's calls are scored: reading stops at the turn's
end, before any tool could run, since every call waits for an approval that never comes (the
tools' handlers raise if one ever ran). The score follows BFCL's published AST rules
(`_bfcl_score`).

Development is on the ``live_*`` categories (the default) and your own cases; the non-live ones
(simple_python, multiple, parallel, parallel_multiple, irrelevance) are the held-out measure:
``--held-out`` runs them, to report, never to tune a prompt on.

Needs the data, which this script does not install: ``pip install --no-deps bfcl-eval`` (its wheel
carries the question and possible-answer files; nothing of it is imported).

``--interleave`` runs each case through every protocol in turn, so the prompt the protocols share
(``xml`` and ``decide`` the whole of it, ``list`` up to the end of the tools block) is read once a
case: the first protocol's s/case then includes reading the prompt, the others' not.

Run:  python benchmarks/bfcl.py [--per-category 10] [--seed 0] [--protocol xml,decide,list|both]
                                [--model local] [--categories live_simple,...] [--held-out]
                                [--verbose] [--dump answers.jsonl] [--interleave]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import importlib.util
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from meowgent_nb import Agent, Tool
from meowgent_nb.agent.events import ApprovalRequested, TextDelta, ToolCallEvent, ToolResultEvent, TurnEnd
from meowgent_nb.models.resolve import resolve_model
from meowgent_nb.protocols import PROTOCOLS
from meowgent_nb.protocols.registry import BASELINES

try:
    from benchmarks._bfcl_score import KINDS, bfcl_name, score
except ImportError:  # run as a script: this directory is on sys.path
    from _bfcl_score import KINDS, bfcl_name, score

LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
HELD_OUT = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
NO_ANSWERS = ("live_irrelevance", "live_relevance", "irrelevance")
TEXT_LIMIT = 300  # as `evaluate`: text with no call begun after which the answer is no call
# BFCL's GORILLA_TO_OPENAPI, for the types its Python categories use; anything else is a string.
_TYPES = {
    **{name: name for name in ("integer", "number", "string", "boolean", "array", "object")},
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "tuple": "array",
    "any": "string",
}


def data_dir() -> Path:
    """Where bfcl-eval keeps its question files, found without importing it."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bfcl-eval is not installed; its wheel carries the data: pip install --no-deps bfcl-eval")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def load(category: str, per_category: int, seed: int) -> list[tuple[dict, list | None]]:
    """A seeded sample of a category's cases, each with its possible answers (None if it has none)."""
    root = data_dir()
    cases = [json.loads(line) for line in (root / f"BFCL_v4_{category}.json").open()]
    answers: dict[str, list] = {}
    if category not in NO_ANSWERS:
        for line in (root / "possible_answer" / f"BFCL_v4_{category}.json").open():
            entry = json.loads(line)
            answers[entry["id"]] = entry["ground_truth"]
    picked = random.Random(f"{seed}:{category}").sample(cases, min(per_category, len(cases)))
    return [(case, answers.get(case["id"])) for case in picked]


def _openai_properties(properties: dict) -> dict:
    """BFCL's ``_cast_to_openai_type``: its types as JSON Schema's, nested one or two levels."""
    for value in properties.values():
        kind = value.get("type")
        if kind == "float":
            value["format"] = "float"
            value["description"] = value.get("description", "") + " This is a float type value."
        value["type"] = _TYPES.get(kind, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _openai_properties(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = _TYPES.get(items.get("type"), "string")
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = _TYPES.get(items["items"].get("type"), "string")
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _openai_properties(items["properties"])
    return properties


class Recording:
    """A model that passes another's chunks through and keeps the last answer's text and calls."""

    def __init__(self, model: Any):
        self.model = model
        self.answer: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def stream(self, request: Any):
        self.answer = []
        async with contextlib.aclosing(self.model.stream(request)) as chunks:
            async for chunk in chunks:
                self.answer.append(chunk.text)
                self.answer.extend(
                    json.dumps({"native call": [c.name, c.arguments]}) for c in chunk.tool_calls
                )
                yield chunk


def _never_run(**_: Any) -> str:
    raise RuntimeError("a BFCL tool ran: only the first turn's calls are read")


def to_tool(function: dict) -> Tool:
    """One BFCL function document as a schema tool, the way BFCL hands it to an OpenAI-style model."""
    function = copy.deepcopy(function)
    schema = function["parameters"]
    schema["type"] = "object"
    schema["properties"] = _openai_properties(schema.get("properties", {}))
    return Tool.from_schema(bfcl_name(function["name"]), function.get("description", ""), schema, _never_run)


async def first_turn(agent: Agent, prompt: str) -> tuple[list[tuple[str, dict]], bool, str | None]:
    """The readable calls of the first turn, whether one was unreadable, and the finish reason.

    The agent asks approval for every call (``approve="every"``, which the model never sees), so the
    turn's calls end in `ApprovalRequested` before any runs; reading stops there, or at the first
    result (calls refused before running: unknown tool, invalid arguments), or at the turn's end.
    """
    calls: list[tuple[str, dict]] = []
    unreadable, shown = False, 0
    async with contextlib.aclosing(agent.stream(prompt)) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                if event.call.name == "(unreadable)":
                    unreadable = True
                else:
                    calls.append((event.call.name, dict(event.call.arguments)))
            elif isinstance(event, TurnEnd):
                return calls, unreadable, event.finish_reason
            elif isinstance(event, (ApprovalRequested, ToolResultEvent)):
                return calls, unreadable, None
            elif isinstance(event, TextDelta) and not calls and not unreadable:
                shown += len(event.text)
                if shown >= TEXT_LIMIT:
                    return calls, unreadable, "text limit"
    return calls, unreadable, None  # pragma: no cover - a stream always ends its first turn


def case_agent(case: dict, model: Any, protocol: str) -> tuple[Agent, str]:
    """An agent holding a case's conversation before its last message, and that message.

    Raises:
        TypeError, ValueError: The product rejects the case's tool set.
    """
    messages = case["question"][0]
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    talk = [m for m in messages if m["role"] != "system"]
    tools = [to_tool(f) for f in case["function"]]
    agent = Agent(model, tools=tools, protocol=protocol, system=system, max_turns=2, approve="every")
    agent.messages.extend({"role": m["role"], "content": m["content"]} for m in talk[:-1])
    return agent, talk[-1]["content"]


async def run_case(
    case: dict, answers: list | None, category: str, model: Any, protocol: str, dump: Any = None
) -> str:
    """The failure kind of one case ("" if it passes); a tool set the product rejects is "bad schema"."""
    try:
        agent, prompt = case_agent(case, model, protocol)
    except (TypeError, ValueError) as error:
        print(f"    {case['id']}: tools rejected: {error}", file=sys.stderr)
        return "bad schema"
    calls, unreadable, _ = await first_turn(agent, prompt)
    kind = score(category, case["function"], calls, answers, unreadable=unreadable)
    if dump is not None:
        record = {"id": case["id"], "protocol": protocol, "kind": kind or "passed", "calls": calls}
        dump.write(json.dumps({**record, "answer": "".join(getattr(model, "answer", []))}) + "\n")
        dump.flush()
    return kind


async def run_category(
    category: str, cases: list, model: Any, protocol: str, verbose: bool, dump: Any = None
) -> tuple[Counter, float]:
    """How many cases of a category passed and failed by each kind, and the seconds per case."""
    kinds: Counter = Counter()
    started = time.perf_counter()
    for case, answers in cases:
        kind = await run_case(case, answers, category, model, protocol, dump)
        kinds[kind or "passed"] += 1
        if verbose and kind:
            print(f"    {case['id']}: {kind}", file=sys.stderr)
    return kinds, (time.perf_counter() - started) / max(len(cases), 1)


def row(label: str, kinds: Counter, per_case: float | None) -> str:
    cases = sum(kinds.values())
    failures = ", ".join(f"{k} {kinds[k]}" for k in (*KINDS, "bad schema") if kinds[k])
    rate = f"{kinds['passed'] / cases:6.1%}" if cases else "     -"
    seconds = f"{per_case:5.1f} s/case" if per_case is not None else " " * 11
    return f"{label:24} {kinds['passed']:3}/{cases:<3} {rate}  {seconds}  {failures or '-'}"


def interleaved(
    categories: list[str],
    samples: dict[str, list],
    model: Any,
    protocols: list[str],
    verbose: bool,
    dump: Any,
) -> None:
    """Each case through every protocol in turn, so the protocols' common prompt prefix (the
    tools block) is read once a case; prints each category's row per protocol, then the totals.
    The first protocol of a case pays for reading the prompt: its s/case is not the others'."""
    total = {protocol: Counter() for protocol in protocols}
    for category in categories:
        kinds = {protocol: Counter() for protocol in protocols}
        seconds = dict.fromkeys(protocols, 0.0)
        for case, answers in samples[category]:
            for protocol in protocols:
                started = time.perf_counter()
                kind = asyncio.run(run_case(case, answers, category, model, protocol, dump))
                seconds[protocol] += time.perf_counter() - started
                kinds[protocol][kind or "passed"] += 1
                if verbose and kind:
                    print(f"    {case['id']} ({protocol}): {kind}", file=sys.stderr)
        for protocol in protocols:
            print(
                row(
                    f"{category} {protocol}",
                    kinds[protocol],
                    seconds[protocol] / max(len(samples[category]), 1),
                ),
                flush=True,
            )
            total[protocol] += kinds[protocol]
    for protocol in protocols:
        print(row(f"all ({protocol})", total[protocol], None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-category", type=int, default=10, metavar="N", help="Cases per category.")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the sample.")
    parser.add_argument("--categories", default="", help="Comma-separated categories (default: all live_*).")
    parser.add_argument(
        "--held-out", action="store_true", help="Run the held-out non-live categories (report, never tune)."
    )
    parser.add_argument(
        "--protocol",
        default="both",
        help="xml, native, list, decide, json, comma-separated (xml,decide,list), or both (xml,native).",
    )
    parser.add_argument("--model", default="local", help='A model spec as Agent takes it ("local", ...).')
    parser.add_argument("--max-tokens", type=int, default=None, help="Token limit per answer (the model's).")
    parser.add_argument("--verbose", action="store_true", help="List each failing case's id on stderr.")
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="Run each case through every protocol in turn (their shared prompt prefix is read once).",
    )
    parser.add_argument(
        "--dump",
        metavar="FILE",
        help="Write each case's id, result, calls and raw answer to FILE (JSON lines).",
    )
    args = parser.parse_args(argv)
    allowed = HELD_OUT if args.held_out else LIVE  # a held-out category only runs labelled as one
    categories = [c.strip() for c in args.categories.split(",") if c.strip()] or list(allowed)
    unknown = [c for c in categories if c not in allowed]
    if unknown:
        held_out = "" if args.held_out else " (the held-out ones only with --held-out)"
        parser.error(f"unknown categories {', '.join(unknown)}; choose from {', '.join(allowed)}{held_out}")
    options = {"temperature": 0, "seed": 0, "num_predict": args.max_tokens}
    model = resolve_model(args.model, options=options)
    dump = open(args.dump, "w") if args.dump else None  # noqa: SIM115 - closed at the end
    if dump is not None:
        model = Recording(model)
    protocols = ["xml", "native"] if args.protocol == "both" else args.protocol.split(",")
    unknown = [p for p in protocols if p not in PROTOCOLS and p not in BASELINES]
    if unknown:
        parser.error(f"unknown protocol(s) {', '.join(unknown)}; choose from {', '.join(PROTOCOLS)}, or both")
    samples = {c: load(c, args.per_category, args.seed) for c in categories}
    label = "HELD-OUT (report only, never tune on these)" if args.held_out else "development (live_*)"
    print(f"BFCL v4, {label}: model {model.name}, {args.per_category} per category, seed {args.seed}, temp 0")
    if args.interleave:
        interleaved(categories, samples, model, protocols, args.verbose, dump)
        protocols = []  # done
    for protocol in protocols:
        print(f"\nprotocol {protocol}")
        total, seconds, count = Counter(), 0.0, 0
        for category in categories:
            sample = samples[category]
            kinds, per_case = asyncio.run(run_category(category, sample, model, protocol, args.verbose, dump))
            print(row(category, kinds, per_case), flush=True)
            total += kinds
            seconds += per_case * sum(kinds.values())
            count += sum(kinds.values())
        print(row(f"all ({protocol})", total, seconds / max(count, 1)))
    if dump is not None:
        dump.close()
    import resource  # POSIX; the model file's mapped pages count as they are read

    print(
        f"peak memory (max RSS) of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
