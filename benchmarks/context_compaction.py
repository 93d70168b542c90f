"""A 20-turn tool conversation on the embedded model, with and without compaction, side by side.

Each of 20 prompts asks the model to read one chapter of a long report (a tool returning about
650 tokens with the default 25 paragraphs) and sum it up in a few words. The conversation runs twice on the embedded model
with a 4,096-token window (``n_ctx``): once with ``context="compact"`` (the default) and once
with ``context="off"``, where the conversation is sent as it is. Printed per turn (a prompt, the
model's call and its answer after the result): the largest request's tokens (as llama.cpp counted
them) and the seconds spent reading the turn's prompts; for ``off``, the
turn where the conversation no longer fits ends that run (the embedded model refuses a prompt
longer than its window: "the conversation does not fit").

The two runs alternate prompt by prompt, so the noise of a shared machine falls on both.
``--policies compact,summarize,off`` adds the ``"summarize"`` policy as a third run; its turns'
wall seconds (also printed) include writing the summary, which the prompt seconds leave out.
``--low-water 0.4`` compacts down to that share of the window instead of `LOW_WATER` (0.6).

Run:  python benchmarks/context_compaction.py [--turns 20] [--n-ctx 4096] [--threads 2] [--paragraphs 25]
          [--policies compact,off] [--low-water 0.6]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import meowgent_nb.models
from meowgent_nb import Agent, tool
from meowgent_nb.agent import compaction
from meowgent_nb.agent.events import ContextCompacted
from meowgent_nb.models import ModelError
from meowgent_nb.models.llamacpp import LlamaCppModel

PARAGRAPHS = [
    f"Paragraph {n}: the committee met on day {n}, reviewed line {n * 7} of the budget and approved it."
    for n in range(200)
]
SHOWN = {"paragraphs": 25}


@tool
def read_chapter(number: int) -> str:
    """Read a chapter of the annual report (long)."""
    return f"Chapter {number}. " + " ".join(PARAGRAPHS[: SHOWN["paragraphs"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--paragraphs", type=int, default=25, help="of a chapter (25: about 650 tokens)")
    parser.add_argument("--policies", default="compact,off", help="comma-separated: compact, summarize, off")
    parser.add_argument("--low-water", type=float, default=compaction.LOW_WATER)
    args = parser.parse_args()
    SHOWN["paragraphs"] = args.paragraphs
    compaction.LOW_WATER = args.low_water
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    meowgent_nb.models.ALLOW_MODEL_REQUESTS = True
    agents = {
        policy: Agent(
            LlamaCppModel(n_ctx=args.n_ctx, max_tokens=32, temperature=0, n_threads=args.threads),
            tools=[read_chapter],
            context=policy,
            max_output_chars=8000,
            max_turns=3,
        )
        for policy in policies
    }
    rows: dict[str, list[tuple[int | None, float | None, float, str]]] = {policy: [] for policy in agents}
    ended: dict[str, str] = {}

    async def turn(policy: str, number: int) -> None:
        agent = agents[policy]
        note, before, started = "", len(agent.context_log), time.perf_counter()
        try:
            async for event in agent.stream(
                f"Call read_chapter with number {number}, then sum it up in five words."
            ):
                if isinstance(event, ContextCompacted):
                    note = f"{policy}: -{event.compacted.shortened} results, -{event.compacted.left_out} exchanges"
                    if event.compacted.summarized:
                        note += f", summary {event.compacted.summarized} tokens"
        except ModelError as error:
            ended[policy] = f"turn {number}: {str(error).splitlines()[0][:90]}"
            return
        usages = [r.usage for r in list(agent.context_log)[before:] if r.usage is not None]
        tokens = max((u.prompt_tokens or 0 for u in usages), default=None)  # the run's largest request
        seconds = sum(u.prompt_seconds or 0 for u in usages)  # reading every request's prompt
        rows[policy].append((tokens, seconds, time.perf_counter() - started, note))

    for number in range(1, args.turns + 1):
        for policy in agents:
            if policy not in ended:
                asyncio.run(turn(policy, number))
    header = "".join(f"  {policy + ': tokens':>17} {'s':>6} {'wall':>6}" for policy in agents)
    print(f"{'turn':>4}{header}  notes")
    for index in range(args.turns):
        cells, notes = [], []
        for policy in agents:
            if index < len(rows[policy]):
                tokens, secs, wall, note = rows[policy][index]
                cells.append(f"  {tokens or 0:>17,} {secs or 0:>6.2f} {wall:>6.1f}")
                notes += [note] if note else []
            else:
                cells.append(f"  {'-':>17} {'-':>6} {'-':>6}")
        print(f"{index + 1:>4}{''.join(cells)}  {'; '.join(notes)}")
    print(f"(compacting down to {compaction.LOW_WATER:.0%} of the window less the answer's margin)")
    for policy in agents:
        seconds = [s for _, s, _, _ in rows[policy] if s is not None]
        walls = [w for _, _, w, _ in rows[policy]]
        print(
            f"{policy}: {len(rows[policy])} turns answered, prompt reading {sum(seconds):.1f} s in all"
            f" (median {statistics.median(seconds) if seconds else 0:.2f} s a turn), wall {sum(walls):.1f} s"
            f" (median {statistics.median(walls) if walls else 0:.1f} s a turn)"
            + (f"; stopped at {ended[policy]}" if policy in ended else "")
        )


if __name__ == "__main__":
    main()
