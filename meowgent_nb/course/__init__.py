"""The course that ships with the package: its notebooks, their cassettes, the rules file and the MCP server they use.

In a clone the course is the clone's ``notebooks/`` folder (with ``docs/getting-started.ipynb``);
in an installed wheel it is ``meowgent_nb/course/notebooks/``, copied there from the same files
when the wheel is built (``setup.py``). `course_files` finds them either way; `copy_course`
copies them into a folder for a learner to open, never replacing a file of theirs without being
told to (``python -m meowgent_nb course FOLDER``).

This wing reads and copies files only: it imports nothing of the package above the bottom modules.
"""

from __future__ import annotations

import filecmp
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GETTING_STARTED", "CopiedCourse", "copy_course", "course_files", "is_course_file"]

GETTING_STARTED = "getting-started.ipynb"
"""The docs' getting-started page as a notebook: in a clone, ``docs/getting-started.ipynb``."""

_PACKAGED = Path(__file__).resolve().with_name("notebooks")  # in a wheel: course/notebooks/
_CLONE = Path(__file__).resolve().parents[2]  # in a clone: the folder with notebooks/ and docs/
_SUFFIXES = (".ipynb", ".json", ".toml", ".py")


def is_course_file(path: Path) -> bool:
    """Whether a file of the course folder belongs to the course: its notebooks, cassettes, rules
    and Python files, and nothing a run or an editor leaves (checkpoints, caches, hidden files).

    ``setup.py`` applies the same rule when it copies the course into the wheel.
    """
    return path.is_file() and path.suffix in _SUFFIXES and not path.name.startswith((".", "_"))


def course_files() -> dict[str, Path]:
    """Each file of the course by the name it has in a learner's folder, sorted by name.

    Raises:
        FileNotFoundError: Neither an installed course nor a clone's ``notebooks/`` is there (a
            wheel built without its course, or a source tree without its notebooks).
    """
    if _PACKAGED.is_dir():
        found = {p.name: p for p in _PACKAGED.iterdir() if is_course_file(p)}
    elif (_CLONE / "notebooks").is_dir():
        found = {p.name: p for p in (_CLONE / "notebooks").iterdir() if is_course_file(p)}
        start = _CLONE / "docs" / GETTING_STARTED
        if start.is_file():
            found[GETTING_STARTED] = start
    else:
        found = {}
    if not any(name.endswith(".ipynb") for name in found):
        raise FileNotFoundError(
            f"The course's notebooks are not installed with meowgent_nb (looked in {_PACKAGED} and"
            f" {_CLONE / 'notebooks'}): reinstall the package from its wheel or sdist, not from a"
            " copy of the meowgent_nb folder alone."
        )
    return dict(sorted(found.items()))


@dataclass
class CopiedCourse:
    """What `copy_course` did with each file, by name."""

    folder: Path
    written: list[str] = field(default_factory=list)
    """New files, and files of the learner's that they agreed to replace."""
    unchanged: list[str] = field(default_factory=list)
    """Already there, the same as the course's."""
    kept: list[str] = field(default_factory=list)
    """Already there and different: the learner's own, left as it was."""


def copy_course(folder: Path, *, replace: Callable[[Path], bool] = lambda path: False) -> CopiedCourse:
    """Copy the course into ``folder`` (made if missing).

    Args:
        folder: Where the learner wants the course.
        replace: Asked once for each file that is already there and differs from the course's;
            the file is replaced only when it answers True. By default nothing is replaced.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file: name a folder for the course (it is made if missing)")
    folder.mkdir(parents=True, exist_ok=True)
    done = CopiedCourse(folder)
    for name, source in course_files().items():
        target = folder / name
        if target.exists():
            if target.is_file() and filecmp.cmp(source, target, shallow=False):
                done.unchanged.append(name)
                continue
            if target.is_dir() or not replace(target):
                done.kept.append(name)
                continue
        shutil.copyfile(source, target)
        done.written.append(name)
    return done
