"""``python -m meowgent_nb course [FOLDER]``, ``--version`` and ``--help``, as a terminal user types them.

The course is the clone's here (the package runs from the clone); tests/test_wheel_install.py runs
the same commands from a wheel installed in a fresh virtual environment.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

import meowgent_nb
from meowgent_nb.course import GETTING_STARTED, course_files, is_course_file

ROOT = Path(__file__).resolve().parents[1]
COURSE = sorted([*(p.name for p in (ROOT / "notebooks").iterdir() if is_course_file(p)), GETTING_STARTED])


def command(
    *args: str, cwd: Path, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "100"  # argparse wraps help to the terminal's width
    return subprocess.run(
        [sys.executable, "-m", "meowgent_nb", *args],
        cwd=cwd,
        env=env,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_course_is_the_clones_notebooks_and_the_getting_started_notebook():
    files = course_files()
    assert list(files) == COURSE
    assert "05_real_model.cassette.json" in files and "approvals.toml" in files and "conftest.py" in files
    assert files[GETTING_STARTED] == ROOT / "docs" / GETTING_STARTED
    assert files["01_tools.ipynb"] == ROOT / "notebooks" / "01_tools.ipynb"


def test_course_copies_every_file_and_says_what_it_wrote(tmp_path):
    done = command("course", "here", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == COURSE
    for name, source in course_files().items():
        assert (tmp_path / "here" / name).read_bytes() == source.read_bytes(), name
    lines = done.stdout.splitlines()
    assert lines[0] == f"The meowgent_nb {meowgent_nb.__version__} course, in here{os.sep}:"
    assert lines[1 : 1 + len(COURSE)] == [f"  wrote {name}" for name in COURSE]
    assert lines[-2:] == [
        "Open it:  jupyter lab here",
        "Check it: cd here && pytest --nbval   (each notebook against its saved outputs, from its cassettes)",
    ]
    assert done.stderr == ""


def test_course_never_replaces_a_learners_file_without_being_told(tmp_path):
    assert command("course", "here", cwd=tmp_path).returncode == 0
    mine = tmp_path / "here" / "03_approvals.ipynb"
    mine.write_text("my notes")
    again = command("course", "here", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert mine.read_text() == "my notes"
    lines = again.stdout.splitlines()
    assert lines[1:4] == [
        f"  {len(COURSE) - 1} files already there, the same as the course's",
        "  kept your 03_approvals.ipynb: it differs from the course's",
        "  (--overwrite replaces the files kept with the course's; or move them away and run this again)",
    ]
    replaced = command("course", "here", "--overwrite", cwd=tmp_path)
    assert replaced.stdout.splitlines()[1:3] == [
        "  wrote 03_approvals.ipynb",
        f"  {len(COURSE) - 1} files already there, the same as the course's",
    ]
    assert mine.read_bytes() == (ROOT / "notebooks" / "03_approvals.ipynb").read_bytes()


@pytest.mark.parametrize(("answer", "kept"), [("y", False), ("n", True), ("", True)])
def test_in_a_terminal_course_asks_before_replacing(tmp_path, answer, kept):
    """In a real terminal (a pty), each differing file is asked about; only "y" replaces it."""
    assert command("course", "here", cwd=tmp_path).returncode == 0
    mine = tmp_path / "here" / "approvals.toml"
    mine.write_text("# mine\n")
    leader, follower = pty.openpty()
    try:
        os.write(leader, f"{answer}\n".encode())
        done = command("course", "here", cwd=tmp_path, stdin=follower)
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0, done.stderr
    asked = (
        f"{Path('here') / 'approvals.toml'} differs from the course's. Replace it with the course's? [y/N] "
    )
    assert done.stdout.startswith(asked), done.stdout
    assert (mine.read_text() == "# mine\n") is kept
    said = "  kept your approvals.toml: it differs from the course's" if kept else "  wrote approvals.toml"
    assert said in done.stdout.splitlines()
    assert "--overwrite replaces" not in done.stdout  # the person was asked: no advice on flags


def test_course_into_a_file_says_to_name_a_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    done = command("course", "notes.txt", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "notes.txt is a file: name a folder for the course (it is made if missing)\n"


def test_course_without_a_folder_uses_its_default(tmp_path):
    done = command("course", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "meowgent_nb_course").iterdir()) == COURSE


def test_version_is_the_metadatas():
    done = command("--version", cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"meowgent_nb {meowgent_nb.__version__}\n", "")
    from importlib.metadata import version

    assert meowgent_nb.__version__ == version("meowgent-nb")


def test_help_lists_the_commands_and_each_has_its_own():
    done = command("--help", cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m meowgent_nb [-h] [--version] {demo,course,trace} ...\n")
    assert done.stdout.endswith(
        "commands:\n  {demo,course,trace}\n"
        "    demo               run the real-model course notebook headless and print each %%agent cell's\n"
        "                       transcript\n"
        "    course             copy the course's notebooks into a folder to open in JupyterLab\n"
        "    trace              a cassette's runs as OpenTelemetry spans: a tree, to a trace viewer, to a\n"
        "                       file\n\n"
        "examples:\n"
        "  python -m meowgent_nb demo                     the real-model course notebook, answered live\n"
        "  python -m meowgent_nb course my_course         the course in my_course/, to open in JupyterLab\n"
        "  python -m meowgent_nb trace run.cassette.json  a recorded run's spans, as a tree\n"
        "  python -m meowgent_nb course --help            a command's own options\n"
    ), done.stdout
    course = command("course", "--help", cwd=ROOT)
    assert course.stdout.startswith("usage: python -m meowgent_nb course [-h] [--overwrite] [folder]\n")
    nothing = command(cwd=ROOT)
    assert nothing.returncode == 2
    assert nothing.stderr.endswith("error: the following arguments are required: {demo,course,trace}\n")
