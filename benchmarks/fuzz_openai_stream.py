"""Fuzz `OpenAIModel`'s stream reading: random and mutated event streams, counted by how they end.

    python benchmarks/fuzz_openai_stream.py               # 10,000 examples
    python benchmarks/fuzz_openai_stream.py --examples 500

Each example is the bytes of one streamed answer from `tests/support/openai_sse.sse_streams` (events shaped
like Chat Completions chunks with any field absent, null or any other JSON value; odd lines; and
byte-level mutations of the whole). It goes through the real path: `OpenAIModel.stream` with the
real ``openai`` client, whose HTTP transport is an in-memory one (``httpx2.MockTransport``) that
answers with those bytes (`tests/support/openai_sse.InMemory`), so the client's own SSE decoder and JSON
reading stand in front of ours, with no socket per example (what makes 10,000 feasible in minutes). The request offers a tool,
so tool-call deltas are read and assembled too.

Prints the number of examples, how many streams were read whole and how many ended in a
`ModelError`, and every other exception type with a count and one example (the goal: none).
Run from the repository's root.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, settings

import meowgent_nb.models
from meowgent_nb import tool
from meowgent_nb.models import ModelRequest
from tests.support.openai_sse import InMemory, sse_streams, surprises


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    args = parser.parse_args()
    meowgent_nb.models.ALLOW_MODEL_REQUESTS = True
    model = InMemory("fuzz", base_url="http://fuzz.invalid/v1")
    request = ModelRequest(messages=[{"role": "user", "content": "Hi"}], tools=[get_weather])
    outcomes: Counter[str] = Counter()
    unexpected: Counter[str] = Counter()
    examples: dict[str, str] = {}

    @settings(
        max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(body=sse_streams())
    def run(body: bytes) -> None:
        model.body = body
        chunks, error = surprises(model, request)
        if error is None:
            outcomes["read whole" if chunks else "ModelError"] += 1
            return
        name = f"{type(error).__module__}.{type(error).__name__}"
        unexpected[name] += 1
        examples.setdefault(name, f"{error!r}"[:200] + f"  <- {body[:200]!r}")

    started = time.perf_counter()
    run()
    took = time.perf_counter() - started
    total = sum(outcomes.values()) + sum(unexpected.values())
    print(f"examples: {total:,} in {took:.0f} s ({took / max(total, 1) * 1000:.1f} ms each)")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count:,}")
    print(f"unexpected exception types: {len(unexpected)}")
    for name, count in unexpected.most_common():
        print(f"  {name}: {count:,}  e.g. {examples[name]}")


if __name__ == "__main__":
    main()
