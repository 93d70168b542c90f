"""Where a tool raised: the line of the tool's own code on its card, its whole traceback on request.

A tool's exception is kept on its `ToolResult`; its traceback runs through the agent's code into
the tool's, and on into the libraries the tool calls. `raised_lines` names the innermost line of
the tool's own code (a notebook cell, as IPython names it: "Cell In[3], line 4"; or a file) with
that line's code, for the card. `tool_tracebacks` gives ``%agent traceback`` every traceback of a
run, from the tool's own first frame on, in IPython's formatting.
"""

from __future__ import annotations

import functools
import os
import sysconfig
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ...tools.calls import ToolResult

__all__ = ["raised_at", "raised_lines", "tool_tracebacks"]

_OURS = str(Path(__file__).resolve().parents[2]) + os.sep  # the meowgent_nb package


@functools.cache
def _libraries() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    found = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    return (_OURS, *(str(Path(path).resolve()) + os.sep for path in found))


def _ours(filename: str) -> bool:
    return os.path.realpath(filename).startswith(_OURS)


def _library(filename: str, libraries: tuple[str, ...]) -> bool:
    if filename.startswith("<frozen "):
        return True
    if filename.startswith("<"):  # a cell (``<ipython-input-3-...>``), exec'd text: the person's
        return False
    return os.path.realpath(filename).startswith(libraries)


def _tool_traceback(error: BaseException) -> TracebackType | None:
    """``error``'s traceback from its first frame outside meowgent_nb (the agent calling the
    tool); None when it was raised in meowgent_nb itself (an MCP server's error, say)."""
    tb = error.__traceback__
    while tb is not None and _ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def raised_at(error: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the tool's own code in ``error``'s traceback: the last one outside
    meowgent_nb, the standard library and installed packages; None when there is none."""
    libraries = _libraries()
    frames = traceback.extract_tb(_tool_traceback(error))
    own = [frame for frame in frames if not _library(frame.filename, libraries)]
    return own[-1] if own else None


def _place(filename: str, lineno: int | None) -> str:
    """ "Cell In[3], line 4" for a notebook cell (IPython's words, in IPython 8 and 9, terminal
    and kernel alike), else "/path/to/tools.py, line 4"."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    named = shell.compile.format_code_name(filename) if shell is not None else None
    where = f"{named[0]} {named[1]}" if named is not None else filename
    return where if lineno is None else f"{where}, line {lineno}"


def raised_lines(result: ToolResult) -> list[str]:
    """Where the tool of ``result`` raised, as its card shows it: ``raised at Cell In[3], line 4,
    in shout:`` and ``----> 4 return txet.upper()``; no lines for a result no tool code raised."""
    if result.kind != "error" or result.exception is None:
        return []
    frame = raised_at(result.exception)
    if frame is None:
        return []
    place = f"raised at {_place(frame.filename, frame.lineno)}, in {frame.name}"
    code = (frame.line or "").strip()
    return [f"{place}:", f"----> {frame.lineno} {code}"] if code else [place]


def tool_tracebacks(results: Sequence[ToolResult], label: Any) -> str | None:
    """Every traceback of ``results`` whose tool raised, newest first, each under its call as
    ``label(call)`` writes it, in IPython's formatting (with its colours); None when none raised."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    parts = []
    for result in reversed(results):
        error = result.exception
        if result.kind != "error" or error is None:
            continue
        tb = _tool_traceback(error) or error.__traceback__
        if shell is not None:
            formatter = shell.InteractiveTB
            text = formatter.stb2text(formatter.structured_traceback(type(error), error, tb, tb_offset=0))
        else:  # pragma: no cover - the magics run in a shell
            text = "".join(traceback.format_exception(type(error), error, tb))
        parts.append(f"{label(result.call)} raised:\n{text.rstrip()}\n")
    return "\n".join(parts) if parts else None
