"""A class on one model server: N real kernels each run one ``%%agent`` cell at the same moment.

    python benchmarks/classroom.py                          # N = 1, 6, 12; both ways; memory; 2-4 min
    python benchmarks/classroom.py --students 6 --ways defaults
    python benchmarks/classroom.py --tool                   # each student's cell offers a tool too

One llama-cpp-python server on the embedded GGUF (``python -m llama_cpp.server`` through
`meowgent_nb.models.llama_cpu`, which loads it safely on AMX CPUs; 127.0.0.1, an API key), started
two ways on the same port: ``defaults`` (as a teacher starts it: ``interrupt_requests`` on, each
new request cuts the answer it is streaming) and ``queued`` (``--interrupt_requests False``:
requests wait their turn). The kernels are real ipykernels (jupyter_client, started at once,
shared by every round), each with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` in its environment as
a hub's spawner sets them; student ``i`` asks ``%%agent -m openai:NAME --new`` a sum of its own
(temperature 0) at the same moment as the others, released by one barrier.

Printed per way and N: students served (the cell ended without an error and its answer is the
right number), the median and slowest seconds from the cell's execute request to its answer, and
the time queued: what the backend reports as ``usage.waited_seconds`` (the retry work of issue
46) where it does, else the seconds to the first answer text the cell showed (marked ``*``:
that includes reading the prompt). Then the first error each way's failures showed, and the
private memory per kernel with the embedded model (`benchmarks/kernel_memory.py`: as before
issue 46, sized to need, an 8-bit KV cache, one shared process; ``--no-memory`` skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.kernel_driver import Kernel, Run, shown
from tests.support.llama_server import NAME, free_port, llama_server

KEY = "sk-classroom-key"
WAYS = {"defaults": (), "queued": ("--interrupt_requests", "False")}
"""How the server is started: its defaults (requests interrupt each other) or queued."""

SETUP = """\
%load_ext meowgent_nb
%config AgentMagics.temperature = 0.0
from meowgent_nb import tool
import meowgent_nb.models.openai  # the client is loaded with the kernel: the cells time the server

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two whole numbers.\"\"\"
    return a + b

def classroom_report():
    import json
    result = get_ipython().magics_manager.registry["AgentMagics"].last_result
    usage = getattr(result, "usage", None)
    print(json.dumps({"text": result.text, "waited": getattr(usage, "waited_seconds", None)}))
"""
"""Run once in every kernel: the extension, temperature 0, a tool to offer, the report's reader."""


@dataclass(frozen=True)
class Answer:
    """What one student's cell did."""

    student: int
    text: str
    """The run's answer (`AgentResult.text`); "" when the cell failed."""
    shown: str
    """The transcript's last text: the answer after any lines about asking again, or the error."""
    error: str | None
    """The cell's error (``ename: evalue``), None when it ended well."""
    seconds: float
    """From the execute request to the cell's idle status."""
    first_text: float | None
    """From the execute request to the first answer text the cell showed."""
    waited: float | None
    """``usage.waited_seconds`` of the run, where the backend reports it."""


def question(student: int) -> tuple[str, str]:
    """Student ``student``'s prompt and the exact answer expected."""
    # Sums the embedded 0.5B model gets right at temperature 0 for students 0-29 (it misses some
    # of "What is {i + 2} + 3?" from 17 on).
    return f"What is {10 + student} + 10? Answer with the number only.", str(20 + student)


def start_kernels(count: int, base_url: str, folder: str) -> list[Kernel]:
    """``count`` kernels started at once, each with the server in its environment and `SETUP` run."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": KEY,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")])
        ),
    }
    for name in ("MEOWGENT_MODEL", "MEOWGENT_CASSETTE", "MEOWGENT_CASSETTE_MODE", "MEOWGENT_APPROVE"):
        env.pop(name, None)

    def start(_: int) -> Kernel:
        kernel = Kernel(folder, env=env)
        kernel.ok(SETUP)
        return kernel

    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(start, i) for i in range(count)]
    kernels = []
    errors = []
    for future in futures:
        try:
            kernels.append(future.result())
        except Exception as error:  # a kernel that did not start: stop the others, say why
            errors.append(error)
    if errors:
        stop_kernels(kernels)
        raise errors[0]
    return kernels


def stop_kernels(kernels: Sequence[Kernel]) -> None:
    with ThreadPoolExecutor(max(1, len(kernels))) as pool:
        list(pool.map(Kernel.shutdown, kernels))


def ask_at_once(kernels: Sequence[Kernel], *, tool: bool = False) -> list[Answer]:
    """Every kernel runs its student's ``%%agent`` cell at the same moment; their `Answer`s."""
    barrier = threading.Barrier(len(kernels))
    offer = "--tools add" if tool else "--no-tools"

    def ask(student: int) -> Answer:
        kernel = kernels[student]
        prompt, _ = question(student)
        first: list[float] = []

        def hook(_: Kernel, run: Run, msg: dict[str, Any]) -> None:
            if not first and "meowgent-text" in shown(run, msg):
                first.append(time.perf_counter())

        barrier.wait()
        start = time.perf_counter()
        run = kernel.execute(f"%%agent -m openai:{NAME} --new {offer}\n{prompt}", hook=hook)
        seconds = time.perf_counter() - start
        texts = [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")]
        error = None
        if run.reply["status"] != "ok":
            error = f"{run.reply.get('ename')}: {run.reply.get('evalue')}"
        report = {"text": "", "waited": None}
        if error is None:  # the session's last result is this cell's
            report = json.loads(kernel.ok("classroom_report()").stdout)
        return Answer(
            student=student,
            text=report["text"],
            shown=texts[-1] if texts else "",
            error=error,
            seconds=seconds,
            first_text=first[0] - start if first else None,
            waited=report["waited"],
        )

    with ThreadPoolExecutor(len(kernels)) as pool:
        return list(pool.map(ask, range(len(kernels))))


def served(answer: Answer) -> bool:
    """The student got the right answer, without an error."""
    return answer.error is None and answer.text.strip() == question(answer.student)[1]


def row(way: str, answers: Sequence[Answer]) -> str:
    """One line of the table."""
    times = [a.seconds for a in answers if served(a)]
    # The wait the backend reports, else the seconds to the first answer text shown (marked).
    waits = [a.waited if a.waited is not None else a.first_text for a in answers if served(a)]
    mark = "*" if any(a.waited is None for a in answers if served(a)) else ""
    waits = [w for w in waits if w is not None]
    median = f"{statistics.median(times):.1f}" if times else "-"
    slowest = f"{max(times):.1f}" if times else "-"
    queued = f"{statistics.median(waits):.1f} / {max(waits):.1f}{mark}" if waits else "-"
    count = f"{sum(map(served, answers))} of {len(answers)}"
    return f"| {way} | {len(answers)} | {count} | {median} | {slowest} | {queued} |"


def memory_lines(kernels: int) -> list[str]:
    """Private memory per kernel with the embedded model, each way `benchmarks/kernel_memory.py`
    measures (issue 46, item 3), as its report prints it."""
    # kernel_memory.py comes with the memory part of issue 46 (`measure_kernels(n, way)`, `WAYS`,
    # `report`): on a branch without it this says so instead of a figure.
    try:
        import kernel_memory  # type: ignore[import-not-found]  # beside this script, on sys.path when run
    except ImportError:
        return ["memory: benchmarks/kernel_memory.py is not there yet (issue 46, item 3)"]
    # The machine's one model process (MEOWGENT_LOCAL_SHARED), stopping 5 s after the last answer.
    shared = kernel_memory.Way.of_spec(
        "shared",
        "local",
        options={"num_ctx": 16384},
        env={"MEOWGENT_LOCAL_SHARED": "1", "MEOWGENT_SHARED_IDLE": "5"},
    )
    ways = [*kernel_memory.WAYS, shared]
    rows = [row for way in ways for row in kernel_memory.measure_kernels(kernels, way)]
    return kernel_memory.report(rows).splitlines()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--students", default="1,6,12", help="Kernels asking at once, comma-separated (1,6,12)."
    )
    parser.add_argument("--ways", default="defaults,queued", help="Server ways: defaults, queued.")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="The server's generation threads (1: on a shared 2-core machine two spin against other work).",
    )
    parser.add_argument("--tool", action="store_true", help="Offer the add tool in each cell.")
    parser.add_argument(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Private memory per kernel with the embedded model, each way (--no-memory: skip it).",
    )
    parser.add_argument("--memory-kernels", type=int, default=2, help="Kernels for --memory.")
    parser.add_argument("--log", type=Path, help="Write the server's log into this folder.")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.students.split(",")]
    ways = args.ways.split(",")
    for way in ways:
        if way not in WAYS:
            parser.error(f"--ways: {way!r} is not one of {', '.join(WAYS)}")
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    lines = [
        "| server | students | served | median s | slowest s | queued s (median / most) |",
        "|---|---|---|---|---|---|",
    ]
    failures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        kernels = start_kernels(max(counts), base_url, folder)
        print(f"{len(kernels)} kernels started in {time.perf_counter() - began:.1f} s", flush=True)
        try:
            for way in ways:
                log = args.log / f"server-{way}.log" if args.log else None
                with llama_server(*WAYS[way], key=KEY, port=port, threads=args.threads, log=log):
                    ask_at_once(
                        kernels[:1], tool=args.tool
                    )  # load the model's pages: loading is not answering
                    for count in counts:
                        answers = ask_at_once(kernels[:count], tool=args.tool)
                        lines.append(row(way, answers))
                        print(lines[-1], flush=True)
                        for answer in answers:
                            if not served(answer):
                                failures.setdefault(way, answer.error or f"answered {answer.text!r}")
        finally:
            stop_kernels(kernels)
    print()
    print(
        f"{NAME}, {args.threads} server threads, temperature 0, {'the add tool' if args.tool else 'no tools'};"
        " * = no wait reported: seconds to the first answer text shown (includes reading the prompt)"
    )
    print("\n".join(lines))
    for way, failure in failures.items():
        print(f"{way}, first failure: {failure[:400]}")
    if args.memory:
        print("\n".join(memory_lines(args.memory_kernels)))
    print(f"in all {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
