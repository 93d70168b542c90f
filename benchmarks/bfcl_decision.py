"""A decision step, measured before building it: the embedded model names one offered tool, or none.

For each sampled BFCL ``live_*`` case this builds the product's own ``xml`` request (through
`Agent`, as ``bfcl.py`` does) and asks the model, under a grammar that allows only the offered
tool names and ``none``, which tool fits, in one of two framings:

- ``ask``: a last user message ("Which one of the functions above fits my last request? ...");
- ``prefix``: the assistant's answer begins "The function that fits the request: ".

It prints, per category, how often the choice is right (a tool the answers call; ``none`` for
irrelevance) and, given ``--compare DUMP`` (a ``bfcl.py --dump`` file of the same sample), how
often the product's own first turn named a right tool (or none). Only the live categories:
this is development data. Nothing here is used by the product.

    python benchmarks/bfcl_decision.py --framing prefix --per-category 5 --compare dump.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import bfcl  # run as a script beside it
from _bfcl_score import bfcl_name

from meowgent_nb.models.base import ModelChunk
from meowgent_nb.models.resolve import resolve_model

ASK = "Which one of the functions above fits my last request? Answer with just its name, or none if no function fits."
PREFIX = "The function that fits the request: "


class Decide:
    """A model that answers no request, but records which tool the embedded model chooses for it."""

    def __init__(self, model: Any, framing: str):
        self.model, self.framing, self.choice = model, framing, None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def stream(self, request: Any):
        import llama_cpp

        loaded, _ = self.model._load()  # the product's own loaded model and chat template
        messages = list(request.messages)
        if self.framing == "ask":
            messages.append({"role": "user", "content": ASK})
        prompt = self.model._render(loaded, replace(request, messages=messages))
        if self.framing == "prefix":
            prompt += PREFIX
        names = [tool.name for tool in request.offered]
        grammar = llama_cpp.LlamaGrammar.from_string(
            "root ::= " + " | ".join(json.dumps(n) for n in [*names, "none"]), verbose=False
        )
        out = loaded.llama.create_completion(prompt, grammar=grammar, max_tokens=48, temperature=0, seed=0)
        self.choice = out["choices"][0]["text"]
        yield ModelChunk(done=True)


def wanted(category: str, tools: list, answers: list | None) -> set[str]:
    if category == "live_irrelevance":
        return {"none"}
    if category == "live_relevance":
        return {tool.name for tool in tools}
    return {bfcl_name(next(iter(answer))) for answer in answers or []}


async def run(framing: str, per_category: int, compare: dict[str, dict]) -> None:
    decide = Decide(resolve_model("local", options={"temperature": 0, "seed": 0}), framing)
    chosen, product, cases = Counter(), Counter(), Counter()
    for category in bfcl.LIVE:
        for case, answers in bfcl.load(category, 15, 0)[:per_category]:
            try:
                agent, prompt = bfcl.case_agent(case, decide, "xml")
            except (TypeError, ValueError):
                continue
            await bfcl.first_turn(agent, prompt)
            right = wanted(category, agent.tools, answers)
            cases[category] += 1
            chosen[category] += decide.choice in right
            if case["id"] in compare:
                called = {name for name, _ in compare[case["id"]]["calls"]} or {"none"}
                product[category] += bool(called & right) if right != {"none"} else called == {"none"}
            print(f"    {case['id']}: chose {decide.choice}, right {sorted(right)[:3]}", file=sys.stderr)
    print(f"framing {framing!r}, {per_category} per category (right tool, or none, of cases)")
    print(f"{'category':24} {'decision':>9} {'product':>8}")
    for category in cases:
        shown = f"{product[category]}" if compare else "-"
        print(f"{category:24} {chosen[category]:>9} {shown:>8}   of {cases[category]}")
    total = sum(product.values()) if compare else "-"
    print(f"{'all':24} {sum(chosen.values()):>9} {total!s:>8}   of {sum(cases.values())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framing", choices=("ask", "prefix"), default="prefix")
    parser.add_argument("--per-category", type=int, default=5, metavar="N")
    parser.add_argument(
        "--compare", metavar="DUMP", help="A bfcl.py --dump file of the same sample (xml rows)."
    )
    args = parser.parse_args(argv)
    compare = {}
    if args.compare:
        for line in Path(args.compare).read_text().splitlines():
            record = json.loads(line)
            if record["protocol"] == "xml":
                compare[record["id"]] = record
    asyncio.run(run(args.framing, args.per_category, compare))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
