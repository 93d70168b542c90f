"""How fast the Stop button ends a running %%agent cell, in a real kernel driven as JupyterLab drives it.

    python benchmarks/stop_latency.py            # a slow scripted model and the embedded model
    python benchmarks/stop_latency.py --runs 5

For each model it runs a ``%%agent`` cell that streams a long answer, clicks Stop (a comm
message, as JupyterLab sends it) once the answer has begun, and prints the seconds from the
click to the kernel's idle status, and from the click to the last chunk the model produced
(near zero, or negative: nothing came after Stop, the generation stopped).
The goal in issue 15: the cell ends in under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.kernel_driver import Kernel, Run, shown

SETUP = '''
%load_ext meowgent_nb
import asyncio
from meowgent_nb.models.base import ModelChunk

import time

class Counting:
    """Passes a model's chunks on, counting them and noting when the last one came."""
    def __init__(self, inner):
        self.inner, self.name, self.chunks, self.last = inner, getattr(inner, "name", "model"), 0, 0.0
    async def stream(self, request):
        async for chunk in self.inner.stream(request):
            self.chunks, self.last = self.chunks + 1, time.perf_counter()  # CLOCK_MONOTONIC: one clock for all processes
            yield chunk

class Slow:
    name = "slow"
    async def stream(self, request):
        for i in range(10_000):
            await asyncio.sleep(0.02)
            yield ModelChunk(text=f"word{i} ")
        yield ModelChunk(done=True)
'''

MODELS = {
    "slow scripted model (a word every 20 ms)": "model = Counting(Slow())",
    "embedded model (llama.cpp)": (
        "from meowgent_nb.models.resolve import resolve_model\n"
        "model = Counting(resolve_model('local', options={'temperature': 0.1, 'num_ctx': 4096}))"
    ),
}
PROMPT = "Write a long story about a cat who learns to sail, with many chapters."


def stop_once(kernel: Kernel) -> tuple[float, float, int]:
    """Seconds from the click to idle, from the click to the model's last chunk, and chunks in all."""
    clicked: dict[str, float] = {}

    def hook(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not clicked and "meowgent-text" in shown(run, msg) and "Stop" in run.buttons:
            clicked["at"] = time.perf_counter()
            k.click(run.buttons["Stop"][0])

    kernel.ok("model.chunks = 0")
    run = kernel.ok(f"%%agent --model-object model --new --no-tools\n{PROMPT}", hook=hook)
    took = time.perf_counter() - clicked["at"]
    assert "stopped by you" in [c["data"]["text/plain"] for c in run.of_type("update_display_data")][-1]
    chunks, last = kernel.ok("print(model.chunks, model.last)").stdout.split()
    return took, float(last) - clicked["at"], int(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    kernel = Kernel(tempfile.mkdtemp(prefix="meowgent-stop-"))
    try:
        kernel.ok(SETUP)
        print(
            f"{'model':<42} {'click -> idle (s): median':>26} {'max':>6} {'click -> last chunk (s): max':>29}"
        )
        for label, code in MODELS.items():
            kernel.ok(code)
            stop_once(kernel)  # the first run loads the model; it is not counted
            results = [stop_once(kernel) for _ in range(args.runs)]
            idle = [t for t, _, _ in results]
            after = max(a for _, a, _ in results)
            print(f"{label:<42} {statistics.median(idle):>26.3f} {max(idle):>6.3f} {after:>29.3f}")
    finally:
        kernel.shutdown()


if __name__ == "__main__":
    main()
