"""How long showing a notebook variable to a model takes, kind by kind.

    python benchmarks/variable_views.py

`meowgent_nb.tools.values.value_view` is what ``{name}`` in a ``%%agent`` cell runs for a value
that is no string or number. The goal: a 10^7-row DataFrame's view in under 50 ms (its nulls are
counted whole only for numeric columns; a column of strings or objects counts its first 10^6
rows, and the view says so). Each figure is the best of 5 runs, with the view's cost in tokens
(estimated, 4 characters a token) and whether it was cut to the default 500-token budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy
import pandas

from meowgent_nb.tools.values import value_view

GOAL_MS = 50.0


class Huge:
    def __repr__(self) -> str:
        return "x" * 10_000_000


def values() -> dict[str, Callable[[], Any]]:
    rng = numpy.random.default_rng(0)
    rows = 10_000_000
    frame = pandas.DataFrame(
        {
            "id": numpy.arange(rows),
            "price": rng.random(rows),
            "city": rng.choice(["Paris", "Oslo", "Rome"], rows),
        }
    )
    wide = pandas.DataFrame(rng.random((1_000, 500)))
    return {
        "DataFrame 10^7 rows x 3 (int, float, str)": lambda: frame,
        "DataFrame 10^3 rows x 500": lambda: wide,
        "Series 10^7 floats": lambda: frame["price"],
        "ndarray 10^7 floats": lambda: frame["price"].to_numpy(),
        "list of 10^6 ints": lambda: list(range(1_000_000)),
        "dict of 10^6 keys": lambda: dict.fromkeys(range(1_000_000), "v"),
        "set of 10^6 ints": lambda: set(range(1_000_000)),
        "object with a 10 MB repr": Huge,
    }


def main() -> None:
    print(f"{'value':<44} {'best of 5':>10} {'tokens':>7}  cut")
    for name, make in values().items():
        value = make()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            view = value_view(value)
            best = min(best, time.perf_counter() - start)
        goal = ""
        if name.startswith("DataFrame 10^7"):
            goal = "  ok" if best * 1000 < GOAL_MS else f"  MISSED (goal < {GOAL_MS:.0f} ms)"
        print(f"{name:<44} {best * 1000:>7.1f} ms {view.tokens:>7}  {'yes' if view.cut else 'no'}{goal}")


if __name__ == "__main__":
    main()
