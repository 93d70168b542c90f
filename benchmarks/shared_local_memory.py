"""Private memory of an idle kernel: its own embedded model against the shared model process.

Starts real kernels (jupyter_client), has each answer one short request, then reads the PSS and
USS of each (``/proc/PID/smaps_rollup``: PSS divides shared pages, such as the model file in the
page cache, between the processes that map them; RSS would count them whole in every one). Kernels
with a `LlamaCppModel` each hold their model; kernels with a `SharedLocalModel` hold none, and one
process (started by the first) holds it for all. Linux only.

Run:  python benchmarks/shared_local_memory.py [--kernels 2] [--n-ctx 8192]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import start_new_kernel

ASK = """
import os
from meowgent_nb.models import ModelRequest, {cls}
model = {cls}(n_ctx={n_ctx}, max_tokens=8{extra})
request = ModelRequest(messages=[{{"role": "user", "content": "Say hi."}}])
async def ask():
    return "".join([c.text async for c in model.stream(request)])
print(repr(await ask()), os.getpid())
"""


def memory_mb(pid: int) -> tuple[float, float]:
    """PSS and USS (private clean + dirty pages) of ``pid``, in MB."""
    kb = {}
    for row in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = row.split(":", 1)
        kb[key] = int(value.split()[0])
    return kb["Pss"] / 1024, (kb["Private_Clean"] + kb["Private_Dirty"]) / 1024


def run(code: str) -> str:
    km, kc = start_new_kernel(kernel_name="python3")
    out: list[str] = []
    KERNELS.append((km, kc))
    reply = kc.execute_interactive(
        code, timeout=300, output_hook=lambda m: out.append(m["content"].get("text", ""))
    )
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"The kernel failed: {reply['content'].get('evalue')}")
    return "".join(out)


KERNELS: list = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2, help="kernels of each kind")
    parser.add_argument("--n-ctx", type=int, default=8192)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="msl-bench-")
    shared_extra = f", directory={folder!r}, idle_seconds=120"
    rows = []
    try:
        for kind, cls, extra in (("own", "LlamaCppModel", ""), ("shared", "SharedLocalModel", shared_extra)):
            pids = []
            for _ in range(args.kernels):
                printed = run(ASK.format(cls=cls, n_ctx=args.n_ctx, extra=extra)).split()
                pids.append(int(printed[-1]))
            rows.append((kind, pids))
        from meowgent_nb.models import SharedLocalModel

        shared = SharedLocalModel(n_ctx=args.n_ctx, directory=folder)
        process = int((shared.status() or {})["pid"])
        # Measured together, while all live: the model file's pages are shared by the same processes.
        measured = [(kind, [memory_mb(pid) for pid in pids]) for kind, pids in rows]
        server = memory_mb(process)
        shared.stop()
    finally:
        for km, kc in KERNELS:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"Idle kernels after one answer, n_ctx={args.n_ctx}, {args.kernels} of each kind, PSS / USS:")
    for kind, values in measured:
        print(f"  {kind:6} model: " + ", ".join(f"{p:,.0f} / {u:,.0f} MB" for p, u in values))
    print(f"  the shared process: {server[0]:,.0f} / {server[1]:,.0f} MB (one for all the shared kernels)")
    print(json.dumps({"own": measured[0][1], "shared": measured[1][1], "process": server}))


if __name__ == "__main__":
    main()
