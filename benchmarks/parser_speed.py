"""Throughput of the streamed `<tool_call>` parser (MB/s) on 1 MB and 10 MB answers.

    python benchmarks/parser_speed.py                  # this checkout
    python benchmarks/parser_speed.py --before REV     # and git revision REV, side by side

Three answers, each fed in chunks of 4 characters (about a token, what a model streams) and of
64: plain text with a few ``<`` in it; one call whose string argument is the whole size (with
quotes, backslashes and the tags inside, escaped, as a model copying a web page writes it); and
a think block followed by a short answer. MB/s is the answer's size over the time of all
``feed`` calls and ``close``, best of three. Linear cost shows as the same MB/s at 1 and 10 MB.
With ``--before``, REV's parser is measured in a subprocess from ``git archive REV``, in the same
run, turn about with this checkout's, since the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = {"1 MB": 1_000_000, "10 MB": 10_000_000}
CHUNKS = (4, 64)


def answers(size: int) -> dict[str, str]:
    line = "The value of a < b is computed line by line, and some text follows it here.\n"
    text = (line * (size // len(line) + 1))[:size]
    piece = 'page says "save <tool_call>{\\"name\\": \\"x\\"}</tool_call>" at C:\\\\dir\n'
    argument = (piece * (size // len(piece) + 1))[:size]
    call = "<tool_call>" + json.dumps({"name": "note", "arguments": {"text": argument}}) + "</tool_call>"
    think = "<think>" + text + "</think>\nDone."
    return {"text": text, "call": call, "think": think}


def measure(parser_class: type, text: str, chunk: int) -> float:
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    best = float("inf")
    for _ in range(3):
        parser = parser_class()
        started = time.perf_counter()
        for piece in pieces:
            parser.feed(piece)
        parser.close()
        best = min(best, time.perf_counter() - started)
    return len(text) / best / 1e6


def run_here() -> dict[str, float]:
    from meowgent_nb.protocols.parsing import ToolCallParser

    figures = {}
    for size_name, size in SIZES.items():
        for kind, text in answers(size).items():
            for chunk in CHUNKS:
                figures[f"{kind:5} {size_name:>5} chunks of {chunk:>2}"] = measure(
                    ToolCallParser, text, chunk
                )
    return figures


def run_revision(rev: str) -> dict[str, float]:
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "archive", rev, "meowgent_nb"], cwd=root, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        code = f"import sys, json; sys.path.insert(0, {tmp!r}); sys.path.insert(1, {str(root / 'benchmarks')!r})\n"
        code += "import parser_speed; print(json.dumps(parser_speed.run_here()))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--before", metavar="REV", help="also measure the parser of this git revision")
    options = arguments.parse_args()
    before = run_revision(options.before) if options.before else None
    now = run_here()
    header = f"{'answer':32} {'MB/s now':>9}"
    if before:
        header += f" {'MB/s ' + options.before[:10]:>16} {'now/before':>11}"
    print(header)
    for name, figure in now.items():
        row = f"{name:32} {figure:9.2f}"
        if before:
            row += f" {before[name]:16.2f} {figure / before[name]:11.2f}"
        print(row)


if __name__ == "__main__":
    main()
