"""Under pytest-xdist, every file with a ``real_model`` test runs on one worker, before the rest;
the browser tests on the other.

With ``--dist loadfile`` alone, each such file went to whichever worker was free, and the
real-model tests took turns on one lock (two llama.cpp models at once share the memory bandwidth,
and each took 2-3x as long): a worker whose next test was a real-model one sat idle, waiting for
the other's (70 s at a time in a full run here). Here those files are one work unit, handed out
first, so one worker runs them back to back while the other runs everything else; the lock in
tests/conftest.py stays as the guard for runs that schedule otherwise.

The browser tests (tests/notebook/browser/) are one unit too, handed out second, so the other
worker runs them back to back: they reuse one Chromium and its pages across the package (its
conftest), and, the most costly tests per file, they no longer come last. pytest-xdist hands out
the files with the most tests first, so files of two to four browser tests each were the last
units of a run, and a worker ran them alone at its end (the last quarter of the tests took half
of a run's time).

Which files hold real-model tests is known only where tests are collected: each worker writes
the list (`write_real_model_files`), the controller's scheduler reads it when it splits the
collection into work units, which it does after every worker has collected.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from xdist.scheduler import LoadFileScheduling

REAL_MODEL_UNIT = "real_model tests (one worker, first)"
"""The work unit every file with a real-model test belongs to."""
BROWSER_UNIT = "browser tests (one worker, second)"
"""The work unit of every file in `BROWSER_FOLDER`."""
BROWSER_FOLDER = "tests/notebook/browser/"


def files_path(run: str) -> Path:
    """Where the workers of test run ``run`` (pytest-xdist's testrunuid) list the real-model files."""
    return Path(tempfile.gettempdir()) / f"meowgent-real-model-files-{run}.txt"


def write_real_model_files(run: str, files: Iterable[str]) -> None:
    """List ``files`` (node id prefixes: ``tests/x.py``) for the controller; whole or not at all,
    as both workers write the same list."""
    path = files_path(run)
    fresh = path.with_name(f"{path.name}.{os.getpid()}")
    fresh.write_text("".join(f"{name}\n" for name in sorted(set(files))), encoding="utf-8")
    os.replace(fresh, path)


class RealModelFirst(LoadFileScheduling):
    """``--dist loadfile``, with every real-model file in one unit that is handed out first."""

    _files: frozenset[str] | None = None

    def real_model_files(self) -> frozenset[str]:
        """The files the workers listed (read once, after collection; none if no list was written)."""
        if self._files is None:
            runs = {node.workerinput["testrunuid"] for node in self.assigned_work}
            names: set[str] = set()
            for run in runs:
                path = files_path(run)
                if path.exists():
                    names.update(path.read_text(encoding="utf-8").split("\n"))
                    path.unlink(missing_ok=True)
            self._files = frozenset(names - {""})
        return self._files

    def _split_scope(self, nodeid: str) -> str:
        scope = super()._split_scope(nodeid)
        if scope in self.real_model_files():
            return REAL_MODEL_UNIT
        return BROWSER_UNIT if scope.startswith(BROWSER_FOLDER) else scope

    def _assign_work_unit(self, node) -> None:
        for unit in (BROWSER_UNIT, REAL_MODEL_UNIT):  # the real-model unit first, then the browser's
            if unit in self.workqueue:
                self.workqueue.move_to_end(unit, last=False)
        super()._assign_work_unit(node)
