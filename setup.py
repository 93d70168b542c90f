"""The one build step pyproject.toml cannot say: the course ships inside the wheel.

The course lives in the clone's ``notebooks/`` (and the getting-started notebook in ``docs/``),
where the docs, Binder and the tests use it. Building the package copies those files into
``meowgent_nb/course/notebooks/``, where `meowgent_nb.course.course_files` finds them once installed
(``python -m meowgent_nb demo`` and ``course``). The files copied are those
`meowgent_nb.course.is_course_file` accepts; the same rule is written here because a build cannot
import the package. Everything else about the build is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SUFFIXES = (".ipynb", ".json", ".toml", ".py")


def course_sources() -> list[Path]:
    """The course's files, as `meowgent_nb.course.is_course_file` chooses them."""
    found = [
        p
        for p in sorted((HERE / "notebooks").iterdir())
        if p.is_file() and p.suffix in SUFFIXES and not p.name.startswith((".", "_"))
    ]
    if not any(p.suffix == ".ipynb" for p in found):
        raise SystemExit(
            f"the course's notebooks are missing from {HERE / 'notebooks'}: build from a clone or the sdist"
        )
    return [*found, HERE / "docs" / "getting-started.ipynb"]


class BuildPyWithCourse(build_py):
    """build_py, then the course into the built package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the clone's own notebooks/
            return
        target = Path(self.build_lib) / "meowgent_nb" / "course" / "notebooks"
        target.mkdir(parents=True, exist_ok=True)
        for source in course_sources():
            shutil.copyfile(source, target / source.name)


setup(cmdclass={"build_py": BuildPyWithCourse})
