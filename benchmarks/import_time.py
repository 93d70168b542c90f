"""Time of ``import meowgent_nb`` and ``%load_ext meowgent_nb`` in a fresh kernel.

Starts a real IPython kernel (jupyter_client) several times; in each, times the import and the
extension load with ``time.perf_counter`` inside the kernel, and lists which heavy modules the
two steps pulled in (ollama, httpx, ipywidgets, llama_cpp should load only when used).
Goal: <= 150 ms for both together.

Run:  python benchmarks/import_time.py
"""

from __future__ import annotations

import json
import statistics

from jupyter_client.manager import start_new_kernel

RUNS = 5
HEAVY = ["ollama", "httpx", "ipywidgets", "llama_cpp", "pandas", "pygments"]
CODE = f"""
import sys, time, json
_before = set(sys.modules)
_t0 = time.perf_counter()
import meowgent_nb
_t1 = time.perf_counter()
get_ipython().run_line_magic("load_ext", "meowgent_nb")
_t2 = time.perf_counter()
print(json.dumps({{"import": _t1 - _t0, "load_ext": _t2 - _t1,
                  "heavy": [m for m in {HEAVY!r} if m in sys.modules and m not in _before]}}))
"""


def one_run() -> dict:
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        lines: list[str] = []
        client.execute_interactive(CODE, output_hook=lambda msg: _collect(msg, lines), timeout=60)
        return json.loads(lines[-1])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _collect(msg: dict, lines: list[str]) -> None:
    if msg["msg_type"] == "stream":
        lines.extend(msg["content"]["text"].splitlines())
    elif msg["msg_type"] == "error":
        raise RuntimeError("\n".join(msg["content"]["traceback"]))


def main() -> None:
    runs = [one_run() for _ in range(RUNS)]
    imports = [r["import"] * 1000 for r in runs]
    loads = [r["load_ext"] * 1000 for r in runs]
    totals = [a + b for a, b in zip(imports, loads)]
    print(f"fresh kernels: {RUNS}; medians (min..max), ms")
    print(
        f"  import meowgent_nb       {statistics.median(imports):6.1f}  ({min(imports):.1f}..{max(imports):.1f})"
    )
    print(f"  %load_ext meowgent_nb    {statistics.median(loads):6.1f}  ({min(loads):.1f}..{max(loads):.1f})")
    print(f"  both                     {statistics.median(totals):6.1f}  (goal <= 150 ms)")
    print(
        f"  heavy modules loaded by the two steps: {sorted(set().union(*(r['heavy'] for r in runs))) or 'none'}"
    )
    print("goal", "met" if statistics.median(totals) <= 150 else "MISSED")


if __name__ == "__main__":
    main()
