"""``python -m meowgent_nb``: the package's commands, for a terminal.

- ``demo [NOTEBOOK]``: run the real-model course notebook headless and print each ``%%agent`` cell as
  a person would read it in JupyterLab: the cell, the model, the transcript and the footer. From a
  clone's root it runs the clone's ``notebooks/05_real_model.ipynb`` in place; anywhere else, a copy
  of the course installed with the package, in a temporary folder. The model answers live unless
  ``MEOWGENT_CASSETTE_MODE`` says otherwise; nothing is saved unless ``--output`` names a file.
- ``course [FOLDER]``: copy the course (notebooks, cassettes, rules file, MCP server) into a folder
  for a learner to open, never replacing a file of theirs without asking.
- ``trace CASSETTE [--otlp URL | --json FILE]``: the runs a cassette recorded, as the
  OpenTelemetry spans a traced run makes (`meowgent_nb.testing.cassette_spans`): printed as a
  tree, sent over OTLP/HTTP to a trace viewer, or written to a file as OTLP JSON lines.
- ``--version``, ``--help``.

Importing this module does nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from html.parser import HTMLParser
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TextIO

from ._version import __version__
from .course import CopiedCourse, copy_course, course_files

__all__ = ["COURSE_FOLDER", "DEMO_NOTEBOOK", "NOTEBOOK", "agent_cell_text", "main"]

DEMO_NOTEBOOK = "05_real_model.ipynb"
"""The course notebook the demo runs."""
NOTEBOOK = Path("notebooks") / DEMO_NOTEBOOK
"""Where the demo's notebook is in a clone: run from the clone's root, the demo runs this file in place."""
COURSE_FOLDER = Path("meowgent_nb_course")
"""Where ``course`` copies the course when no folder is named."""


class _Classes(HTMLParser):
    """The text inside the first element of each of some CSS classes, in a transcript's HTML."""

    def __init__(self, classes: Sequence[str]):
        super().__init__()
        self.wanted = set(classes)
        self.found: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []  # (tag, the wanted class it opened, if any)
        self._texts: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        fresh = sorted(c for c in classes & self.wanted if c not in self.found and c not in self._texts)
        hit = fresh[0] if fresh else None
        if hit is not None:
            self._texts[hit] = []
        if tag not in ("br", "img", "hr", "input", "meta", "link"):
            self._open.append((tag, hit))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            opened, hit = self._open.pop()
            if hit is not None:
                self.found[hit] = "".join(self._texts.pop(hit)).strip()
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        for texts in self._texts.values():
            texts.append(data)


def _transcript_output(cell: Any) -> dict[str, Any]:
    """The data of the cell's last transcript display (``{}`` when it shows none)."""
    for output in reversed(cell.get("outputs", [])):
        data = output.get("data", {})
        if str(data.get("text/html", "")).startswith('<div class="meowgent-transcript">'):
            return dict(data)
    return {}


def agent_cell_text(cell: Any) -> str:
    """One executed ``%%agent`` cell as plain text: its source, the model, the transcript, the footer."""
    data = _transcript_output(cell)
    parts = [str(cell.get("source", "")).strip()]
    # What the cell printed besides its transcript: e.g. that the embedded model answers instead of Ollama's.
    parts += [
        str(o.get("text", "")).strip("\n")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream"
    ]
    if not data:
        parts.append("(this cell showed no transcript)")
        return "\n".join(parts) + "\n"
    shown = _Classes(("meowgent-model", "meowgent-footer"))
    shown.feed(str(data.get("text/html", "")))
    if "meowgent-model" in shown.found:
        parts.append(f"model: {shown.found['meowgent-model']}")
    parts.append(str(data.get("text/plain", "")).strip("\n"))
    if "meowgent-footer" in shown.found:
        parts.append(shown.found["meowgent-footer"])
    return "\n".join(parts) + "\n"


def demo(notebook: Path, output: Path | None, out: TextIO, *, shown: Path | None = None) -> int:
    """Run ``notebook`` and print its agent cells; 0 when every cell ran, 1 when one failed.

    ``shown`` is how the notebook is named in what is printed (default: ``notebook`` itself).
    """
    try:
        from nbclient.exceptions import CellExecutionError

        from .testing import run_notebook
    except ImportError as error:
        print(
            f"The demo runs the notebook with nbclient, which is missing ({error}): it is one of"
            " meowgent_nb's dependencies, so reinstall the package: pip install --force-reinstall meowgent-nb",
            file=sys.stderr,
        )
        return 1
    if not notebook.is_file():
        print(
            f"There is no notebook {notebook}: name an .ipynb file that exists, or run the course's"
            " real-model notebook: python -m meowgent_nb demo",
            file=sys.stderr,
        )
        return 1
    env: dict[str, str] = {}
    mode = os.environ.get("MEOWGENT_CASSETTE_MODE")
    if mode is None:
        env["MEOWGENT_CASSETTE_MODE"] = mode = "off"
    how = "the model answers live" if mode == "off" else f"cassette mode {mode!r}"
    name = notebook if shown is None else shown
    print(
        f"Running {name} headless ({how}; MEOWGENT_CASSETTE_MODE={mode}). A local model's"
        " first load takes a while; each %%agent cell is printed when the notebook has run.\n",
        file=out,
        flush=True,
    )
    started = time.perf_counter()
    try:
        run = run_notebook(notebook, env=env)
    except CellExecutionError as error:
        print(f"A cell of {name} failed:\n{error}", file=sys.stderr)
        return 1
    for cell in run.cells:
        print(f"--- cell {cell.index + 1} " + "-" * 50, file=out)
        print(agent_cell_text(run.notebook.cells[cell.index]), file=out)
    took = time.perf_counter() - started
    cells = len(run.cells)
    print(f"{cells} %%agent cell{'s' * (cells != 1)} ran in {took:.0f} s.", end=" ", file=out)
    if output is not None:
        import nbformat

        nbformat.write(run.notebook, output)
        print(f"The executed notebook is {output}; open it in JupyterLab.", file=out)
    else:
        print("Nothing was saved (--output FILE.ipynb saves the executed notebook).", file=out)
    return 0


def demo_installed(output: Path | None, out: TextIO) -> int:
    """Run the course's real-model notebook from a temporary copy of the course installed with the package."""
    try:
        files = course_files()
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="meowgent-demo-") as folder:
        copy_course(Path(folder))
        print(
            f"The course's {DEMO_NOTEBOOK}, installed with meowgent_nb {__version__}"
            f" ({files[DEMO_NOTEBOOK].parent}), runs in a temporary copy of the course.",
            file=out,
        )
        return demo(Path(folder) / DEMO_NOTEBOOK, output, out, shown=Path(DEMO_NOTEBOOK))


NEEDED_BY_COURSE = {
    "llama_cpp": ("the embedded model", "meowgent-nb[course]"),
    "pandas": ("notebook 08 looks at a DataFrame", "meowgent-nb[course]"),
    "jupyterlab": ("to open the notebooks in JupyterLab", "jupyterlab"),
}
"""What the course uses beyond the package's own dependencies, why, and what installs it."""


def course(folder: Path, overwrite: bool, out: TextIO) -> int:
    """Copy the course into ``folder`` and say what was written, kept and left as it was."""
    asking = not overwrite and sys.stdin is not None and sys.stdin.isatty()

    def replace(path: Path) -> bool:
        if overwrite:
            return True
        if not asking:
            return False
        answer = input(f"{path} differs from the course's. Replace it with the course's? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    try:
        done = copy_course(folder, replace=replace)
    except (FileNotFoundError, NotADirectoryError) as error:
        print(error, file=sys.stderr)
        return 1
    _say_copied(done, overwrite=overwrite, asked=asking, out=out)
    return 0


def _say_copied(done: CopiedCourse, *, overwrite: bool, asked: bool, out: TextIO) -> None:
    where = done.folder
    print(f"The meowgent_nb {__version__} course, in {where}{os.sep}:", file=out)
    for name in done.written:
        print(f"  wrote {name}", file=out)
    if done.unchanged:
        print(
            f"  {len(done.unchanged)} file{'s' * (len(done.unchanged) != 1)} already there, the same as the course's",
            file=out,
        )
    for name in done.kept:
        print(f"  kept your {name}: it differs from the course's", file=out)
    if done.kept and not asked:
        print(
            "  (--overwrite replaces the files kept with the course's; or move them away and run this again)",
            file=out,
        )
    missing = {name: need for name, need in NEEDED_BY_COURSE.items() if find_spec(name) is None}
    if missing:
        needs = "; ".join(f"{name} ({why})" for name, (why, _) in missing.items())
        install = " ".join(sorted({f'"{what}"' for _, what in missing.values()}))
        print(f"The course also needs {needs}: pip install {install}", file=out)
    print(f"Open it:  jupyter lab {where}", file=out)
    print(
        f"Check it: cd {where} && pytest --nbval   (each notebook against its saved outputs, from its cassettes)",
        file=out,
    )


def trace(cassette: Path, otlp: str | None, json_file: Path | None, out: TextIO) -> int:
    """Turn ``cassette``'s runs into spans: sent to ``otlp``, written to ``json_file``, else
    printed as a tree; 0 when done, 1 when the cassette or the OpenTelemetry SDK is missing."""
    from .recording import CassetteError

    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from .agent.tracing.json_lines import JsonLinesExporter, service
    except ImportError as error:
        from .agent.tracing import INSTALL

        print(
            f"trace needs the OpenTelemetry SDK and its OTLP exporter ({error.name} is missing): {INSTALL}",
            file=sys.stderr,
        )
        return 1
    from .testing import cassette_spans

    kept = InMemorySpanExporter()
    provider = TracerProvider(resource=service())
    provider.add_span_processor(SimpleSpanProcessor(kept))
    if otlp is not None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=otlp)))
    if json_file is not None:
        json_file.write_bytes(b"")
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(json_file)))
    try:
        runs = cassette_spans(cassette, provider)
    except CassetteError as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        provider.shutdown()
    spans = kept.get_finished_spans()
    counted = f"{runs} run{'s' * (runs != 1)}, {len(spans)} spans"
    if otlp is not None:
        print(f"{cassette}: {counted}, sent over OTLP/HTTP to {otlp}.", file=out)
    elif json_file is not None:
        print(f"{cassette}: {counted}, written to {json_file} as OTLP JSON lines.", file=out)
    else:
        print(f"{cassette}: {counted}:", file=out)
        _print_tree(spans, out)
    return 0


def _print_tree(spans: Sequence[Any], out: TextIO) -> None:
    """Each span on a line, under its parent, in the order they began (names through `visible`:
    a cassette's tool names reach the terminal, and an escape code there would be obeyed)."""
    from ._visible import visible

    children: dict[int | None, list[Any]] = {}
    for span in sorted(spans, key=lambda span: span.start_time or 0):
        children.setdefault(span.parent.span_id if span.parent is not None else None, []).append(span)

    def show(parent: int | None, depth: int) -> None:
        for span in children.get(parent, []):
            print("  " * depth + visible(span.name), file=out)  # a cassette's names, escapes shown
            show(span.context.span_id, depth + 1)

    show(None, 0)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """The command line: ``python -m meowgent_nb {demo,course,trace} ...``, ``--version``, ``--help``."""
    parser = argparse.ArgumentParser(
        prog="python -m meowgent_nb",
        description="meowgent_nb: tool-using agents on local models, inside Jupyter notebooks.",
        epilog="examples:\n"
        "  python -m meowgent_nb demo                     the real-model course notebook, answered live\n"
        "  python -m meowgent_nb course my_course         the course in my_course/, to open in JupyterLab\n"
        "  python -m meowgent_nb trace run.cassette.json  a recorded run's spans, as a tree\n"
        "  python -m meowgent_nb course --help            a command's own options",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"meowgent_nb {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, title="commands", metavar="{demo,course,trace}"
    )
    run = commands.add_parser(
        "demo",
        help="run the real-model course notebook headless and print each %%%%agent cell's transcript",
        description="Run the real-model course notebook headless and print each %%%%agent cell's transcript."
        f" From a clone's root: {NOTEBOOK}; elsewhere: the course installed with the package, in a"
        " temporary copy. The model answers live (Ollama, else the embedded model) unless"
        " MEOWGENT_CASSETTE_MODE=replay.",
    )
    run.add_argument(
        "notebook",
        nargs="?",
        type=Path,
        help=f"the notebook to run (default: {NOTEBOOK} in a clone, else the installed course's {DEMO_NOTEBOOK})",
    )
    run.add_argument("-o", "--output", type=Path, help="also save the executed notebook to this file")
    copy = commands.add_parser(
        "course",
        help="copy the course's notebooks into a folder to open in JupyterLab",
        description="Copy the course (notebooks, their cassettes, the rules file, the MCP server they"
        " start) into FOLDER, made if missing. A file of yours that differs from the course's is"
        " kept unless you agree to replace it (asked in a terminal) or pass --overwrite.",
    )
    copy.add_argument(
        "folder",
        nargs="?",
        type=Path,
        default=COURSE_FOLDER,
        help=f"where to copy it (default: {COURSE_FOLDER})",
    )
    copy.add_argument(
        "--overwrite", action="store_true", help="replace files that differ from the course's, without asking"
    )
    spans = commands.add_parser(
        "trace",
        help="a cassette's runs as OpenTelemetry spans: a tree, to a trace viewer, to a file",
        description="Turn the runs a cassette recorded into the OpenTelemetry spans a traced run"
        " makes (invoke_agent, chat, execute_tool, with the recorded decisions; no content, and"
        " the times are when the spans were made). Without --otlp or --json, print them as a tree.",
    )
    spans.add_argument("cassette", type=Path, help="the cassette file (a .cassette.json beside a notebook)")
    where = spans.add_mutually_exclusive_group()
    where.add_argument(
        "--otlp",
        metavar="URL",
        help="send them over OTLP/HTTP to URL, a collector's traces endpoint (Phoenix's:"
        " http://127.0.0.1:6006/v1/traces)",
    )
    where.add_argument("--json", type=Path, metavar="FILE", help="write them to FILE as OTLP JSON lines")
    args = parser.parse_args(argv)
    stream = sys.stdout if out is None else out
    if args.command == "trace":
        return trace(args.cassette, args.otlp, args.json, stream)
    if args.command == "course":
        return course(args.folder, args.overwrite, stream)
    if args.notebook is None and not NOTEBOOK.is_file():
        return demo_installed(args.output, stream)
    return demo(NOTEBOOK if args.notebook is None else args.notebook, args.output, stream)


if __name__ == "__main__":
    sys.exit(main())
