"""What one thread's code prints and displays, captured without touching other threads' output.

`captured()` routes, for the calling thread only, ``sys.stdout``, ``sys.stderr`` and the shell's
display publisher (what ``display()`` and matplotlib's inline ``plt.show()`` reach) into a
`Captured`. The routing is installed while at least one thread captures and taken away with the
last; every other thread keeps writing where it did. A displayed widget is passed through to the
cell's own output (it cannot be drawn inside a tool's value) and counted. Figures of pyplot
opened meanwhile and left open are rendered to PNG and closed, as the inline backend does at the
end of a cell.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WIDGET_VIEW", "Captured", "captured"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""The MIME type of a displayed ipywidget."""


@dataclass
class Captured:
    """What one thread printed and displayed while it captured."""

    stdout: io.StringIO = field(default_factory=io.StringIO)
    stderr: io.StringIO = field(default_factory=io.StringIO)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """The MIME bundles displayed, in order (widgets left out: they went to the cell)."""
    widgets: int = 0
    """Widgets displayed, passed through to the cell's output."""
    figures: list[bytes] = field(default_factory=list)
    """PNGs of the pyplot figures opened and left open, rendered when the capture ended."""
    value: Any = None
    """The code's value: a figure left open that is the value is closed, not rendered here (the
    value's own view shows it)."""


_lock = threading.Lock()
_by_thread: dict[int, Captured] = {}
_undo: list[Callable[[], None]] = []


class _Routed:
    """A stream that writes to the calling thread's capture, or to the stream it stands in for."""

    def __init__(self, original: Any, pick: Callable[[Captured], io.StringIO]):
        self._original, self._pick = original, pick

    def _target(self) -> Any:
        mine = _by_thread.get(threading.get_ident())
        return self._original if mine is None else self._pick(mine)

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines: Any) -> None:
        self._target().writelines(lines)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


@contextlib.contextmanager
def captured() -> Iterator[Captured]:
    """Capture what the calling thread prints and displays until the block ends (also by an exception)."""
    mine = Captured()
    before = _figure_numbers()
    ident = threading.get_ident()
    with _lock:
        if not _by_thread:
            _install()
        _by_thread[ident] = mine
    try:
        yield mine
    finally:
        try:
            mine.figures.extend(_left_open(before, mine.value))
        finally:
            with _lock:
                _by_thread.pop(ident, None)
                if not _by_thread:
                    _uninstall()


def _install() -> None:
    for name, pick in (("stdout", _stdout), ("stderr", _stderr)):
        original = getattr(sys, name)
        routed = _Routed(original, pick)
        setattr(sys, name, routed)
        _undo.append(_restorer(name, routed, original))
    shell = _shell()
    if shell is None:
        return  # without a shell, display() prints: the stream catches it
    publisher = shell.display_pub
    publish, clear = publisher.publish, publisher.clear_output

    def routed_publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        mine = _by_thread.get(threading.get_ident())
        if mine is None:
            return publish(data, metadata, *args, **kwargs)
        if isinstance(data, dict) and WIDGET_VIEW in data:
            mine.widgets += 1
            return publish(data, metadata, *args, **kwargs)
        mine.outputs.append(dict(data) if isinstance(data, dict) else {"text/plain": repr(data)})
        return None

    def routed_clear(*args: Any, **kwargs: Any) -> Any:
        mine = _by_thread.get(threading.get_ident())
        if mine is None:
            return clear(*args, **kwargs)
        mine.outputs.clear()
        return None

    publisher.publish = routed_publish  # on the instance: the class's stays as it is
    publisher.clear_output = routed_clear

    def unpatch() -> None:
        for name, patched in (("publish", routed_publish), ("clear_output", routed_clear)):
            if publisher.__dict__.get(name) is patched:
                del publisher.__dict__[name]

    _undo.append(unpatch)


def _uninstall() -> None:
    while _undo:
        _undo.pop()()


def _restorer(name: str, routed: _Routed, original: Any) -> Callable[[], None]:
    def restore() -> None:
        # Someone swapped the stream meanwhile (a %%capture): leave theirs; ours then forwards.
        if getattr(sys, name) is routed:
            setattr(sys, name, original)

    return restore


def _stdout(mine: Captured) -> io.StringIO:
    return mine.stdout


def _stderr(mine: Captured) -> io.StringIO:
    return mine.stderr


def _shell() -> Any:
    if "IPython" not in sys.modules:
        return None
    from IPython.core.getipython import get_ipython

    return get_ipython()


def _figure_numbers() -> set[int] | None:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None or "matplotlib.pyplot" not in sys.modules:
        return None
    return {manager.num for manager in helpers.Gcf.get_all_fig_managers()}


def _left_open(before: set[int] | None, value: Any) -> list[bytes]:
    """PNGs of the pyplot figures opened since ``before`` and still open, but ``value``; they are closed."""
    now = _figure_numbers()
    if now is None:
        return []
    import matplotlib.pyplot as plt
    from matplotlib._pylab_helpers import Gcf

    pictures = []
    for number in sorted(now - (before or set())):
        manager = Gcf.get_fig_manager(number)
        if manager is None:
            continue
        figure = manager.canvas.figure
        buffer = io.BytesIO()
        try:
            if figure is value:
                continue
            # As the inline backend draws a figure (its print_figure_kwargs): labels past the
            # figure's edge are kept, not cut off.
            figure.savefig(buffer, format="png", bbox_inches="tight")
            pictures.append(buffer.getvalue())
        except Exception:  # noqa: BLE001 - a figure that cannot draw itself is left out, still closed
            pass
        finally:
            plt.close(figure)
    return pictures
