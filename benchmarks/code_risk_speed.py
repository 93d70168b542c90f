"""How long `code_risk` takes to label code: a cell of exploration, a cell of hostile code, a
500-line notebook cell, and a 10,000-line module; and how long `list_variables` takes over a
namespace of 1,000 variables (DataFrames, arrays, lists).

    python benchmarks/code_risk_speed.py

Each figure is the best of five runs, in milliseconds. The first call also imports IPython's
input transformer, so one call runs before any is timed.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from meowgent_nb.notebook.workspace import code_risk, variables_listing

CODES = {
    "exploration (1 line)": "df.groupby('a').b.mean()",
    "hostile (4 lines)": "import base64\nexec(base64.b64decode(s))\n!rm -rf data\nos.system('id')",
    "cell (500 lines)": "\n".join(f"df{i % 7}.head({i})" for i in range(500)),
    "module (10,000 lines)": "\n".join(f"x{i} = sorted(d.items())[:{i}]" for i in range(10_000)),
}


def best_ms(function, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    code_risk("1")
    print(f"{'code_risk of':<26} {'ms':>9}  label")
    for name, code in CODES.items():
        print(f"{name:<26} {best_ms(lambda code=code: code_risk(code)):>9.2f}  {code_risk(code).label}")
    frame = pd.DataFrame({"a": range(1_000_000)})
    namespace = {f"v{i}": [frame, np.zeros((10, 10)), list(range(10)), i][i % 4] for i in range(1_000)}
    print(
        f"{'list_variables (1,000)':<26} {best_ms(lambda: variables_listing(namespace)):>9.2f}  (50 listed)"
    )
    print(f"{'  all 1,000 listed':<26} {best_ms(lambda: variables_listing(namespace, limit=1000)):>9.2f}")


if __name__ == "__main__":
    main()
