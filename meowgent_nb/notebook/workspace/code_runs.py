"""``run_code``: the model's code, run in the person's namespace as a cell runs, on its tool thread.

The code is read as the kernel reads a cell: IPython's ``!cmd`` / ``%magic`` / ``%%magic`` syntax
transformed first (`TransformerManager`; it needs a running IPython), top-level ``await``
allowed, the body executed and a last expression evaluated for its value. Names it binds stay in
the namespace. It runs on the call's tool thread, so the cell's loop stays free for Stop, other
approvals and the live view; what it prints and displays, and the pyplot figures it leaves
open, are captured for that thread alone (`_captured`) and come back as a `CodeRun`.

Stop, the call's time limit and the kernel's interrupt end the call (`RunningCall.on_end`); the
code still running is then ended by an exception raised in its thread
(``PyThreadState_SetAsyncExc``). Code blocked inside C (``time.sleep``, a socket read) ends when
that call returns.
"""

from __future__ import annotations

import ast
import asyncio
import ctypes
import hashlib
import inspect
import linecache
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...agent.running_call import RUNNING_CALL, Ending
from ...tools import Tool, tool
from ...tools.media import McpImage, bundle_image
from ...tools.output import counted, output_text
from ...tools.values import value_view
from ._captured import Captured, captured
from .risk import code_risk

__all__ = ["STDERR_CHARS", "STDOUT_CHARS", "VALUE_TOKENS", "CodeRun", "run_code_tool"]

STDOUT_CHARS = 2000
"""Characters of what the code printed that the model reads (its start and its end)."""
STDERR_CHARS = 1000
"""Characters of what it printed to stderr that the model reads."""
VALUE_TOKENS = 300
"""The budget of the view of its last expression's value (see `tools.values.value_view`)."""
_OUTPUT_CHARS = 500  # of each displayed output's text
_OUTPUTS = 20  # displayed outputs whose text the model reads
_ERROR_CHARS = 1500
_FRAMES = 5  # of the code's own, in a traceback
_IMAGE_KINDS = ("image/png", "image/jpeg")


@dataclass(frozen=True)
class CodeRun:
    """What one ``run_code`` call did: what ran, what it printed and displayed, its value or error."""

    code: str
    """The code that ran, as the person approved it."""
    stdout: str = ""
    stderr: str = ""
    value: str | None = None
    """The view of the last expression's value (as a model is shown a variable); None when the
    code does not end in an expression, or it is None."""
    outputs: tuple[Mapping[str, Any], ...] = ()
    """The MIME bundles the code displayed (``display()``, ``plt.show()``), in order."""
    media: tuple[McpImage, ...] = ()
    """The images among them, the figures it left open and its value's: the card shows them and
    a model that reads images is given them."""
    figures: int = 0
    """Pyplot figures it left open: rendered to PNG (in ``media``) and closed, as the inline
    backend does at a cell's end."""
    widgets: int = 0
    """Widgets it displayed: they are in the cell's own output, not here."""
    error: str | None = None
    """The exception (its last lines of the code's own traceback), a syntax error, or why the
    code did not finish; None when it finished."""
    ended: Ending = "done"
    """``done``, or ``timeout`` / ``stopped`` when the call's end stopped the code."""
    duration: float = 0.0
    """Seconds it ran."""

    @property
    def text(self) -> str:
        """What the model reads: each part bounded, images as placeholders, no timings."""
        parts = []
        if self.stdout:
            parts.append("Printed:\n" + output_text(self.stdout.rstrip("\n"), STDOUT_CHARS))
        if self.stderr:
            parts.append("Printed to stderr:\n" + output_text(self.stderr.rstrip("\n"), STDERR_CHARS))
        for bundle in self.outputs[:_OUTPUTS]:
            parts.append("Displayed: " + _bundle_text(bundle))
        if len(self.outputs) > _OUTPUTS:
            parts.append(f"... and {counted(len(self.outputs) - _OUTPUTS, 'more display')}, not read here")
        if self.figures:
            parts.append(f"Left open and shown: {counted(self.figures, 'figure')} ([image: image/png] each)")
        if self.widgets:
            parts.append(
                f"Displayed {counted(self.widgets, 'widget')} in the cell's output: a widget cannot be"
                " shown in a tool's result."
            )
        if self.value is not None:
            parts.append("Value:\n" + self.value)
        if self.error is not None:
            parts.append(self.error)
        return "\n".join(parts) or "Ran; it printed and displayed nothing, and its last line has no value."

    def _repr_llm_(self) -> str:
        return self.text


class _StopCode(BaseException):
    """Raised in a run's thread when its call ends: Stop, the time limit, the kernel's interrupt."""


class _Stoppable:
    """The thread running one piece of code, and whether an exception was sent to stop it.

    The exception is sent only while the code runs; the run clears one still pending as it
    finishes, so it never lands after the code (in the next tool the thread runs).
    """

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.lock = threading.Lock()
        self.state = "waiting"
        self.ending: Ending | None = None

    def stop(self, how: Ending) -> None:
        if how == "done":
            return
        with self.lock:
            if self.ending is not None or self.state == "finished":
                return
            self.ending = how
            if self.state == "running":
                _raise_in(self.thread, _StopCode)

    def start(self) -> None:
        with self.lock:
            self.state = "running"
            if self.ending is not None:
                raise _StopCode

    def finish(self) -> None:
        with self.lock:
            if self.state == "running" and self.ending is not None:
                _raise_in(self.thread, None)  # one sent and not yet raised is withdrawn
            self.state = "finished"


def _raise_in(thread: int, exception: type[BaseException] | None) -> None:
    target = None if exception is None else ctypes.py_object(exception)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), target)


class _NeedsIPython(Exception):
    pass


def _prepared(code: str, filename: str) -> tuple[Any, Any]:
    """The body's and the last expression's code objects (the latter None).

    Raises:
        SyntaxError: The code (transformed) does not compile.
        _NeedsIPython: It uses IPython's syntax and no IPython runs.
    """
    try:
        tree = ast.parse(code, filename)
    except SyntaxError as plain:
        from IPython.core.inputtransformer2 import TransformerManager

        python = TransformerManager().transform_cell(code)
        if python.rstrip() == code.rstrip():
            raise plain from None
        tree = ast.parse(python, filename)
        from IPython.core.getipython import get_ipython

        if get_ipython() is None:
            raise _NeedsIPython(
                "the code uses IPython's ! or % syntax, which needs a running IPython (a notebook or"
                " ipython); outside one, write it in Python (subprocess.run([...]) for a command)."
            ) from None
    last = None
    if tree.body and isinstance(end := tree.body[-1], ast.Expr):
        tree.body.pop()
        last = ast.Expression(end.value)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    value = None if last is None else compile(last, filename, "eval", flags=flags, dont_inherit=True)
    return body, value


def _run(namespace: dict[str, Any], code: str) -> CodeRun:
    """Run ``code`` in ``namespace`` on this thread, capturing what it prints and displays."""
    filename = f"<run_code-{hashlib.sha1(code.encode('utf-8', 'replace')).hexdigest()[:8]}>"
    # As IPython keeps a cell's lines: tracebacks, here and in later cells, show the code's lines.
    # (Each line ends in a newline, or the caret under a last line's error is a column off.)
    lines = [line if line.endswith("\n") else line + "\n" for line in code.splitlines(keepends=True)]
    linecache.cache[filename] = (len(code), None, lines, filename)
    started = time.perf_counter()
    try:
        body, last = _prepared(code, filename)
    except SyntaxError as error:
        text = "".join(traceback.format_exception_only(type(error), error))
        return CodeRun(code, error="The code does not compile:\n" + text.rstrip())
    except _NeedsIPython as error:
        return CodeRun(code, error=f"Error: {error}")
    stoppable = _Stoppable()
    running = RUNNING_CALL.get()
    if running is not None:
        running.on_end.append(stoppable.stop)
        if running.ended is not None:  # it ended before the listener was in place
            stoppable.stop(running.ended)
    value: Any = None
    error_text: str | None = None
    with captured() as seen:
        loop: asyncio.AbstractEventLoop | None = None
        try:
            try:
                stoppable.start()
                for compiled in (body, last):
                    if compiled is None:
                        continue
                    value = eval(compiled, namespace)
                    if compiled.co_flags & inspect.CO_COROUTINE:
                        loop = loop or asyncio.new_event_loop()
                        value = loop.run_until_complete(value)
                seen.value = value
            finally:
                stoppable.finish()
        except _StopCode:
            stoppable.finish()
            value = None
        except BaseException as raised:  # noqa: BLE001 - the code's failure is what the model reads
            value, error_text = None, _error_text(raised, filename)
        finally:
            if loop is not None:
                loop.close()
    duration = time.perf_counter() - started
    ended = stoppable.ending or "done"
    if ended != "done":
        what = "its time limit ran out" if ended == "timeout" else "the run was stopped"
        error_text = f"Not finished: {what} while the code ran; what it did until then stays done."
    return _made(code, seen, value, error_text, ended, duration)


def _made(
    code: str, seen: Captured, value: Any, error: str | None, ended: Ending, duration: float
) -> CodeRun:
    # One image per display (PNG, else JPEG), as tools.media reads any MIME bundle.
    media = [image for image in map(bundle_image, seen.outputs) if image is not None]
    media.extend(McpImage(png, "image/png") for png in seen.figures)
    shown = None
    if value is not None:
        # As a cell shows it: a string in quotes, so the model tells '1' from 1.
        view = value_view(repr(value) if type(value) is str else value, tokens=VALUE_TOKENS)
        shown = view.text
        media.extend(view.images)
    return CodeRun(
        code,
        stdout=seen.stdout.getvalue(),
        stderr=seen.stderr.getvalue(),
        value=shown,
        outputs=tuple(seen.outputs),
        media=tuple(media),
        figures=len(seen.figures),
        widgets=seen.widgets,
        error=error,
        ended=ended,
        duration=duration,
    )


def _error_text(error: BaseException, filename: str) -> str:
    """The exception's line, after the last lines of the code's own frames (with their text)."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    lines = traceback.format_list(frames[-_FRAMES:]) + traceback.format_exception_only(type(error), error)
    text = "Raised (the code's own lines of the traceback):\n" + "".join(lines).rstrip()
    return output_text(text, _ERROR_CHARS)


def _bundle_text(bundle: Mapping[str, Any]) -> str:
    placeholders = [f"[image: {kind}]" for kind in _IMAGE_KINDS if kind in bundle]
    text = next((bundle[k] for k in ("text/markdown", "text/plain") if isinstance(bundle.get(k), str)), None)
    if text is None:
        kinds = ", ".join(sorted(k for k in bundle if k not in _IMAGE_KINDS))
        text = f"[output of type {kinds}]" if kinds and not placeholders else ""
    return " ".join([*placeholders, output_text(text, _OUTPUT_CHARS)]).strip()


def _risk(values: dict[str, Any]) -> str:
    return code_risk(values["code"]).label


def run_code_tool(namespace: Mapping[str, Any], *, timeout: float | None = None) -> Tool:
    """The ``run_code`` tool over ``namespace``: the model's code, run as a cell, each call approved.

    Each call asks the person (a rule they set may allow it); its ``risk`` fact is
    `code_risk`'s label of the code, for rules such as ``run_code risk=read-only -> allow``.

    Args:
        namespace: The person's names (``get_ipython().user_ns``, or ``globals()`` in a script):
            the code reads them and the names it binds stay there.
        timeout: Seconds a call may run; None: the agent's ``tool_timeout``.

    Returns:
        The tool; its value is a `CodeRun`.

    Raises:
        TypeError: ``namespace`` is not a dict.
    """
    if not isinstance(namespace, dict):
        raise TypeError(
            f"run_code needs the namespace as a dict of names to values, not {type(namespace).__name__};"
            " pass get_ipython().user_ns or globals()"
        )

    def run_code(code: str) -> CodeRun:
        """Run Python code in the person's notebook, as a cell: variables it defines persist.

        Each call waits for the person's approval. IPython's ! and % syntax works.

        Args:
            code: The code to run.

        Returns:
            What it printed and displayed, the value of its last line, or the error it raised.
        """
        return _run(namespace, code)

    return tool(
        run_code,
        approval="always",
        code_argument="code",
        timeout=timeout,
        read_only=False,
        facts={"risk": _risk},
    )
