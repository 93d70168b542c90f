"""Memory per kernel that uses the embedded model: N real kernels side by side, each answering once.

Starts N ipykernels (jupyter_client) at once; each makes its model (a Python expression, with
``resolve_model`` and ``LlamaCppModel`` in scope), answers one tiny prompt through `Agent.run`, and
stays up; then each kernel's ``/proc/PID/smaps_rollup`` is read while all are alive:

- RSS: everything resident, the shared model file counted whole in every kernel;
- PSS: each shared page divided among the kernels that map it (what the kernel costs the machine);
- USS: Private_Clean + Private_Dirty, what stopping the kernel would free.

Ways measured by default: "today" (the %%agent magic's n_ctx of 16384 allocated whole at load),
"sized to need" (the context grows from 4096 tokens as the conversation needs, up to 16384),
"q8_0 KV" (sized to need, with an 8-bit KV cache). Another way (a model served by another process)
is a `Way` of its own: `measure_kernels(n, Way.of_spec("shared", "local", env={...}))`.

Run:  python benchmarks/kernel_memory.py [N]     (N kernels per way; default 2; Linux only)
      python benchmarks/kernel_memory.py --grow  (what growing the context costs, `grow_cost`)
"""

from __future__ import annotations

import ast
import json
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "Say hi."
TIMEOUT = 600  # seconds for N kernels to load and answer on a slow shared machine


@dataclass(frozen=True)
class Way:
    """One way a kernel gets its model."""

    name: str
    model: str
    """A Python expression the kernel evaluates to its model (``resolve_model`` and ``LlamaCppModel`` in scope)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables the kernels start with, besides this process's own."""

    @classmethod
    def of_spec(
        cls,
        name: str,
        spec: str,
        *,
        options: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Way:
        """The way of a model spec, as the %%agent magic resolves it (``resolve_model(spec, options=...)``)."""
        return cls(name, f"resolve_model({spec!r}, options={dict(options or {})!r})", dict(env or {}))


@dataclass(frozen=True)
class KernelMemory:
    """One kernel's memory after it answered, in MB (2**20 bytes)."""

    way: str
    pid: int
    rss: float
    pss: float
    uss: float
    """Private_Clean + Private_Dirty."""
    seconds: float
    """From making the model to the answer, inside the kernel."""
    answer: str
    allocated_ctx: int | None
    """The model's ``allocated_ctx`` after answering, where it has one."""


TODAY = Way("today", "LlamaCppModel(n_ctx=16384, initial_ctx=16384)")
SIZED = Way.of_spec("sized to need", "local", options={"num_ctx": 16384})
Q8_0 = Way.of_spec("q8_0 KV", "local", options={"num_ctx": 16384}, env={"MEOWGENT_KV_CACHE": "q8_0"})
WAYS = (TODAY, SIZED, Q8_0)


def _code(way: Way, prompt: str) -> str:
    return f"""
import json as _json, time as _time
from meowgent_nb import Agent as _Agent
from meowgent_nb.models import LlamaCppModel
from meowgent_nb.models.resolve import resolve_model
_started = _time.perf_counter()
_model = {way.model}
_result = _Agent(_model).run({prompt!r})
_measured = _json.dumps({{
    "answer": _result.text,
    "seconds": _time.perf_counter() - _started,
    "allocated_ctx": getattr(_model, "allocated_ctx", None),
}})
"""


def smaps_rollup(pid: int) -> dict[str, float]:
    """``/proc/PID/smaps_rollup``'s kB figures, in MB, by name (Rss, Pss, Private_Dirty...)."""
    figures = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            figures[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return figures


def measure_kernels(
    n: int, way: Way, *, prompt: str = PROMPT, timeout: float = TIMEOUT
) -> list[KernelMemory]:
    """Start ``n`` kernels the ``way`` says, let each answer ``prompt`` (all at once), and read
    each one's memory while all are alive; the kernels are stopped before returning.

    Raises:
        RuntimeError: A kernel's cell failed (its error is in the message).
    """
    env = {
        **os.environ,
        **way.env,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    kernels = []
    try:
        for _ in range(n):
            kernels.append(start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env))
        sent = [
            client.execute(_code(way, prompt), user_expressions={"measured": "_measured"})
            for _, client in kernels
        ]
        replies = [_reply(client, msg_id, timeout) for (_, client), msg_id in zip(kernels, sent)]
        measured = []
        for (manager, _), reply in zip(kernels, replies):
            if reply["status"] != "ok":
                raise RuntimeError(
                    f"{way.name}: a kernel failed: {reply.get('ename')}: {reply.get('evalue')}"
                )
            values = json.loads(ast.literal_eval(reply["user_expressions"]["measured"]["data"]["text/plain"]))
            pid = manager.provisioner.pid
            memory = smaps_rollup(pid)
            measured.append(
                KernelMemory(
                    way=way.name,
                    pid=pid,
                    rss=memory["Rss"],
                    pss=memory["Pss"],
                    uss=memory["Private_Clean"] + memory["Private_Dirty"],
                    seconds=values["seconds"],
                    answer=values["answer"],
                    allocated_ctx=values["allocated_ctx"],
                )
            )
        return measured
    finally:
        for manager, client in kernels:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def _reply(client: Any, msg_id: str, timeout: float) -> dict[str, Any]:
    while True:
        message = client.get_shell_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") == msg_id:
            return message["content"]


def report(rows: Sequence[KernelMemory]) -> str:
    """A table of ``rows``, one line per kernel, then each way's mean PSS and USS."""
    lines = [
        f"{'way':<14} {'pid':>7} {'RSS MB':>7} {'PSS MB':>7} {'USS MB':>7} {'n_ctx':>6} {'s':>6}  answer"
    ]
    for row in rows:
        lines.append(
            f"{row.way:<14} {row.pid:>7} {row.rss:>7.0f} {row.pss:>7.0f} {row.uss:>7.0f}"
            f" {row.allocated_ctx or '-':>6} {row.seconds:>6.1f}  {row.answer[:40]!r}"
        )
    lines.append("")
    for way in dict.fromkeys(row.way for row in rows):
        mine = [row for row in rows if row.way == way]
        lines.append(
            f"{way:<14} per kernel: PSS {statistics.mean(r.pss for r in mine):.0f} MB,"
            f" USS {statistics.mean(r.uss for r in mine):.0f} MB ({len(mine)} kernels)"
        )
    return "\n".join(lines)


def grow_cost(words: int = 800) -> str:
    """What growing the context costs, in this process: a conversation of about ``words`` tokens
    read in a 1024-token context, the context grown to 2048 carrying over what was read, against
    reading the same tokens afresh (what growing without carrying over would cost)."""
    import asyncio
    from time import perf_counter

    from meowgent_nb.models import LlamaCppModel, ModelRequest

    model = LlamaCppModel(n_ctx=2048, initial_ctx=1024, max_tokens=8)
    request = ModelRequest(messages=[{"role": "user", "content": "word " * words + "Count the words."}])

    async def answer() -> Any:
        return [chunk async for chunk in model.stream(request)][-1].usage

    usage = asyncio.run(answer())
    loaded = model._loaded
    assert loaded is not None
    read = loaded.llama.n_tokens
    with model._lock:
        started = perf_counter()
        grown = model._sized(loaded, 2048)
        carried = perf_counter() - started
    tokens = list(grown.llama.input_ids[:read])
    grown.llama.reset()
    started = perf_counter()
    grown.llama.eval(tokens)
    afresh = perf_counter() - started
    return (
        f"growing {loaded.llama.n_ctx()} -> {grown.llama.n_ctx()} tokens with {read} read"
        f" (prompt {usage.prompt_tokens}): {carried:.2f} s carrying them over, {afresh:.2f} s reading them afresh"
    )


def main(argv: Sequence[str]) -> None:
    if argv[:1] == ["--grow"]:
        print(grow_cost())
        return
    n = int(argv[0]) if argv else 2
    rows = [row for way in WAYS for row in measure_kernels(n, way)]
    print(report(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
