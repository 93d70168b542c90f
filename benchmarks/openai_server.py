"""Eval throughput: the embedded model in-process against the same GGUF behind a local server.

The same eval cases (short prompts, each read only to its first call) run three ways, side by side
in one run: `LlamaCppModel` in this process; `OpenAIModel` against llama-cpp-python's
OpenAI-compatible server (``python -m llama_cpp.server``, started here on a free port, stopped
at the end) at ``concurrency=1``; and the same at ``concurrency=4``. Printed: seconds, cases/s
and how many passed, per way. A serving engine that batches (vLLM, SGLang, llama-server with
``--parallel N``) is where concurrency is meant to pay; pointing this at one changes only the
model spec.

Rounds alternate the three ways, so the noise of a shared machine falls on all of them; each
figure is the median over the rounds.

Measured here (2 cores shared with other work, load average 1.6-2.7; 8 of 8 passing each way):
embedded 14.3 s (0.56 cases/s), server at concurrency 1 15.9 s (0.50), at concurrency 4 14.2 s
(0.57). A first single round had given 40.5 / 17.1 / 9.0 s, while other work loaded the
machine: on a shared machine only the alternating median is worth quoting. llama-cpp-python's
server does not batch (requests queue behind one lock, ``--interrupt_requests False``), so
concurrency gains it nothing, and the HTTP hop costs about a tenth.

With ``--server-defaults`` the server keeps its default ``interrupt_requests`` (on): it cuts the
answer it streams when another request arrives, and the eval reruns the cut cases one at a time
(issue 36); the note it printed is shown under the table.

Run:  python benchmarks/openai_server.py [--threads 2] [--rounds 3] [--server-defaults]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the clone: tests.support

from meowgent_nb import EvalCase, evaluate, tool
from meowgent_nb.models.llamacpp import LlamaCppModel
from meowgent_nb.models.openai import OpenAIModel
from tests.support.llama_server import NAME, llama_server

KEY = "benchmark"


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"Sunny in {city}"


@tool
def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a value between units."""
    return value


CASES = [
    EvalCase("Call get_weather for Paris.", "get_weather", {"city": "Paris"}),
    EvalCase("Call get_weather for Oslo.", "get_weather", {"city": "Oslo"}),
    EvalCase("Is it raining in Rome?", "get_weather", {"city": "Rome"}),
    EvalCase("Weather in Madrid?", "get_weather", {"city": "Madrid"}),
    EvalCase("Convert 10 miles to km.", "convert", {"value": 10}),
    EvalCase("Convert 3 kg to pounds.", "convert", {"value": 3}),
    EvalCase("How many inches is 30 cm?", "convert", {"value": 30}),
    EvalCase("Convert 5 litres to gallons.", "convert", {"value": 5}),
]
TOOLS = [get_weather, convert]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="Generation threads, in both places.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--server-defaults", action="store_true", help="Leave interrupt_requests on (its default)."
    )
    args = parser.parse_args(argv)
    import meowgent_nb.models

    meowgent_nb.models.ALLOW_MODEL_REQUESTS = True
    settings = {"temperature": 0.0, "seed": 0, "num_predict": 64}
    embedded = LlamaCppModel(n_ctx=2048, n_threads=args.threads, max_tokens=64)
    evaluate(CASES[:1], tools=TOOLS, model=embedded)  # load it first: loading is not answering
    ways = [("embedded, in-process", embedded, 1)]
    queued = [] if args.server_defaults else ["--interrupt_requests", "False"]
    with llama_server(*queued, key=KEY, threads=args.threads) as base_url:
        served = OpenAIModel(NAME, base_url=base_url, api_key=KEY, options=settings)
        evaluate(CASES[:1], tools=TOOLS, model=served)  # warm the server the same way
        ways += [("server, concurrency 1", served, 1), ("server, concurrency 4", served, 4)]
        runs: dict[str, list[tuple[float, int]]] = {label: [] for label, _, _ in ways}
        notes: set[str] = set()
        for _ in range(args.rounds):
            for label, model, concurrency in ways:
                report = evaluate(CASES, tools=TOOLS, model=model, concurrency=concurrency)
                runs[label].append((report.seconds, report.summary()["all"]["passed"]))
                notes.update(f"{label}: {note}" for note in report.notes)
        print(
            f"{len(CASES)} eval cases, {args.threads} threads, temperature 0, median of {args.rounds} rounds"
        )
        print(f"{'way':<24}{'seconds':>9}{'cases/s':>9}{'passed':>8}")
        for label, results in runs.items():
            median = statistics.median(seconds for seconds, _ in results)
            passed = "/".join(sorted({str(p) for _, p in results}))
            print(f"{label:<24}{median:>9.2f}{len(CASES) / median:>9.2f}{passed:>6}/{len(CASES)}")
        for note in sorted(notes):
            print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
