"""Fuzz the cassette reader: how many hostile files it reads, and what it raises that it should not.

    python benchmarks/fuzz_cassette.py                # 10,000 examples
    python benchmarks/fuzz_cassette.py --examples N   # N examples

Each example is a cassette file (`_cassette_documents.DOCUMENTS`: random JSON-ish documents, and
a real cassette's text cut short, with a value's type swapped, a key given twice, a value nested
up to 100,000 deep, a number huge or not JSON, a byte flipped, a line end changed), loaded and
replayed as a notebook would. Only a `CassetteError` is allowed; the script prints the count of
examples, of those the reader refused with a `CassetteError`, and of each unexpected exception
type with one example (goal: 0 unexpected).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, settings

from benchmarks._cassette_documents import DOCUMENTS, read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    examples = parser.parse_args().examples
    seen: Counter[str] = Counter()
    unexpected: Counter[str] = Counter()
    first: dict[str, str] = {}
    folder = Path(tempfile.mkdtemp(prefix="fuzz-cassette-"))

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(DOCUMENTS)
    def fuzz(text: str) -> None:
        seen["examples"] += 1
        outcome = read(text, folder)
        seen[outcome] += 1
        if outcome not in ("read", "refused"):
            unexpected[outcome] += 1
            first.setdefault(outcome, text[:300])

    started = time.perf_counter()
    fuzz()
    elapsed = time.perf_counter() - started
    print(f"examples:                {seen['examples']:,} in {elapsed:.0f} s")
    print(f"read whole:              {seen['read']:,}")
    print(f"refused (CassetteError): {seen['refused']:,}")
    print(f"unexpected exceptions:   {sum(unexpected.values()):,} ({len(unexpected)} types)")
    for name, count in unexpected.most_common():
        print(f"  {name}: {count:,}, e.g. {first[name]!r}")


if __name__ == "__main__":
    main()
