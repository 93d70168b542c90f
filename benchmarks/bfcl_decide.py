"""The ``list`` protocol's decision, "answer in text" or "call", measured in three shapes.

Each shape is a constrained first step the product could steer, with the tool list in view. For
each sampled BFCL ``live_*`` case this builds the product's own ``list`` request (through `Agent`,
as ``bfcl.py`` does), reads the embedded model's next-token distribution and decides:

- ``argmax``: what the product does today: the likeliest first token opens a list (``[``) or not.
- ``mass``: a call when the tokens that open a list (``[`` after any spaces) together hold at
  least half the probability, else text (llama-cpp-python's ``functions | "message:"`` choice
  made over the list's own opening against every text opening).
- ``ask``: a last user message asks "Does answering my last message need a call to one of the
  functions above? Answer yes or no." and the model's ``yes`` (any case) against ``no`` decides.
- ``calibrated``: a call when the list-opening mass for the question is above the mass the same
  prompt gets with the question replaced by the content-free ``N/A`` (contextual calibration,
  Zhao et al. 2021): the question itself must make a call likelier.

The right decision is text for ``live_irrelevance`` and a call for the other categories. It prints,
per category and shape, right decisions of cases; ``--dump`` writes each case's figures. Only the
live categories: development data. Nothing here is used by the product.

    python benchmarks/bfcl_decide.py --per-category 8 --categories live_irrelevance,live_parallel
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

from meowgent_nb.models.base import ModelChunk
from meowgent_nb.models.resolve import resolve_model

ASK = "Does answering my last message need a call to one of the functions above? Answer yes or no."
BLANK = "N/A"
SHAPES = ("argmax", "mass", "ask", "calibrated")
CATEGORIES = ("live_irrelevance", "live_parallel", "live_parallel_multiple", "live_simple")


class Decide:
    """A model that answers no request, but records what each shape decides for it."""

    def __init__(self, model: Any):
        self.model = model
        self.figures: dict[str, Any] = {}
        self._texts: list[str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def _next(self, loaded: Any, request: Any, messages: list[dict]) -> Any:
        """The next-token probabilities after ``messages`` rendered as the request's prompt."""
        import numpy as np

        prompt = self.model._render(loaded, replace(request, messages=messages))
        tokens = loaded.llama.tokenize(prompt.encode(), add_bos=False, special=True)
        seen: dict[str, Any] = {}

        def capture(_ids: Any, scores: Any) -> Any:
            seen["scores"] = np.array(scores, dtype=np.float64)
            return scores

        generator = loaded.llama.generate(tokens, temp=0, logits_processor=[capture])
        next(generator)
        generator.close()
        scores = seen["scores"] - seen["scores"].max()
        return np.exp(scores) / np.exp(scores).sum()

    async def stream(self, request: Any):
        import numpy as np

        loaded, _ = self.model._load()  # the product's own loaded model and chat template
        llama = loaded.llama
        if self._texts is None:
            self._texts = [
                llama.detokenize([i], special=True).decode("utf-8", "ignore") for i in range(llama.n_vocab())
            ]
            self._opens = np.array([text.lstrip().startswith("[") for text in self._texts])
            self._yes = [i for i, text in enumerate(self._texts) if text.strip().lower() == "yes"]
            self._no = [i for i, text in enumerate(self._texts) if text.strip().lower() == "no"]
        messages = list(request.messages)
        blank = self._next(loaded, request, [*messages[:-1], {**messages[-1], "content": BLANK}])
        asked = self._next(loaded, request, [*messages, {"role": "user", "content": ASK}])
        p = self._next(loaded, request, messages)
        call, call_blank = float(p[self._opens].sum()), float(blank[self._opens].sum())
        yes, no = float(asked[self._yes].sum()), float(asked[self._no].sum())
        self.figures = {
            "top": self._texts[int(p.argmax())],
            "call": round(call, 3),
            "call_blank": round(call_blank, 3),
            "yes": round(yes, 3),
            "no": round(no, 3),
            "argmax": bool(self._opens[int(p.argmax())]),
            "mass": call >= 0.5,
            "ask": yes > no,
            "calibrated": call > call_blank,
        }
        yield ModelChunk(done=True)


async def run(categories: list[str], per_category: int, dump: Any) -> None:
    decide = Decide(resolve_model("local", options={"temperature": 0, "seed": 0}))
    right: dict[str, Counter] = {category: Counter() for category in categories}
    cases: Counter = Counter()
    for category in categories:
        for case, _answers in bfcl.load(category, per_category, 0):
            try:
                agent, prompt = bfcl.case_agent(case, decide, "list")
            except (TypeError, ValueError):
                continue
            await bfcl.first_turn(agent, prompt)
            wants_call = category != "live_irrelevance"
            cases[category] += 1
            for shape in SHAPES:
                right[category][shape] += decide.figures[shape] == wants_call
            if dump is not None:
                dump.write(json.dumps({"id": case["id"], "category": category, **decide.figures}) + "\n")
                dump.flush()
    print(f"right decisions (text for live_irrelevance, a call elsewhere), of {per_category} per category")
    print(f"{'category':24}" + "".join(f"{shape:>12}" for shape in SHAPES))
    for category in categories:
        print(
            f"{category:24}"
            + "".join(f"{right[category][shape]:>9}/{cases[category]:<2}" for shape in SHAPES)
        )
    total = sum(cases.values())
    print(
        f"{'all':24}" + "".join(f"{sum(r[shape] for r in right.values()):>9}/{total:<2}" for shape in SHAPES)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-category", type=int, default=8, metavar="N")
    parser.add_argument(
        "--categories", default=",".join(CATEGORIES), help="Comma-separated live_* categories."
    )
    parser.add_argument("--dump", metavar="FILE", help="Write each case's figures to FILE (JSON lines).")
    args = parser.parse_args(argv)
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = [c for c in categories if c not in bfcl.LIVE]
    if unknown:
        parser.error(f"unknown categories {', '.join(unknown)}; choose from {', '.join(bfcl.LIVE)}")
    dump = open(args.dump, "w") if args.dump else None  # noqa: SIM115 - closed below
    try:
        asyncio.run(run(categories, args.per_category, dump))
    finally:
        if dump is not None:
            dump.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
