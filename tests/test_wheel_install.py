"""The package as people get it: the wheel built from a clean checkout, installed (not editable)
with its ``course`` extra in a fresh virtual environment, used from a folder outside the clone.

One environment for the module (``installed``): its making is timed and printed. Each test runs
the commands a person types there, with none of the clone on the path: the version, the demo (the
course installed with the package, replayed, then live on the embedded model installed with it),
a person's own notebook with an ``%%agent`` cell run in a kernel by ``pytest --nbval``, and
the course copied out by ``python -m meowgent_nb course`` checked by nbval from its cassettes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from meowgent_nb.course import course_files
from tests.support.dist import built_dist, make_venv, prepared, run_folder  # noqa: F401 - built_dist: the session's sdist and wheel
from tests.test_demo import EMBEDDED_PROTOCOL, FIRST_CELL, FOOTER, LIVE_LINE, NOTE

ROOT = Path(__file__).resolve().parents[1]


def _local_model_missing() -> str | None:
    from meowgent_nb.models.resolve import local_model_problem

    return local_model_problem()


@dataclass(frozen=True)
class Installed:
    venv: Path
    version: str
    """The wheel's version, from its file name."""

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(
        self, *args: str, cwd: Path, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """A command of the environment's (``python``, ``pytest``...), as a person runs it in ``cwd``:
        the environment's bin first on PATH, none of the clone or of our variables."""
        clean = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MEOWGENT_", "PYTEST_", "COV_")) and k not in ("PYTHONPATH", "OLLAMA_HOST")
        }
        clean["PATH"] = os.pathsep.join([str(self.venv / "bin"), clean.get("PATH", "")])
        clean["VIRTUAL_ENV"] = str(self.venv)
        clean["COLUMNS"] = "100"
        return subprocess.run(
            [str(self.venv / "bin" / args[0]), *args[1:]],
            cwd=cwd,
            env={**clean, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@pytest.fixture(scope="module")
def installed(built_dist, tmp_path_factory) -> Installed:
    folder = run_folder()
    if folder is not None and (folder / "started").exists():  # made in the background (dist.py)
        record = prepared(folder, "venv")
        venv, seconds = Path(record["venv"]), record["seconds"]
    else:
        venv = tmp_path_factory.mktemp("wheel") / "venv"
        seconds = make_venv(built_dist.wheel, venv)
    print(f"\nfresh venv with {built_dist.wheel.name}[course]: {seconds:.1f} s")
    return Installed(venv, built_dist.wheel.name.split("-")[1])


@pytest.fixture
def outside(tmp_path) -> Path:
    """An empty folder away from the clone."""
    folder = tmp_path / "work"
    folder.mkdir()
    assert ROOT not in folder.parents
    return folder


def test_the_installed_package_is_the_wheels_with_its_version(installed, outside):
    done = installed.run(
        "python",
        "-c",
        "import meowgent_nb; print(meowgent_nb.__version__); print(meowgent_nb.__file__)",
        cwd=outside,
    )
    assert done.returncode == 0, done.stderr
    version, where = done.stdout.splitlines()
    assert version == installed.version
    assert Path(where).is_relative_to(installed.venv) and "site-packages" in where
    command = installed.run("python", "-m", "meowgent_nb", "--version", cwd=outside)
    assert (command.stdout, command.stderr) == (f"meowgent_nb {installed.version}\n", "")


def test_the_demo_runs_the_installed_course_from_anywhere(installed, outside):
    done = installed.run("python", "-m", "meowgent_nb", "demo", cwd=outside, MEOWGENT_CASSETTE_MODE="replay")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no "[IPKernelApp] WARNING | Kernel is running over TCP without encryption"
    first = done.stdout.splitlines()[0]
    packaged = re.fullmatch(
        rf"The course's 05_real_model\.ipynb, installed with meowgent_nb {re.escape(installed.version)}"
        r" \((.+)\), runs in a temporary copy of the course\.",
        first,
    )
    assert packaged, first
    assert Path(packaged[1]).is_relative_to(installed.venv) and packaged[1].endswith(
        "meowgent_nb/course/notebooks"
    )
    model = f"cassette replay of qwen2.5:0.5b (05_real_model.cassette.json), {EMBEDDED_PROTOCOL}"
    shown = done.stdout[done.stdout.index("--- cell 6 ") :]
    assert shown.startswith(FIRST_CELL.format(model=model)), shown
    assert re.search(r"\n4 %%agent cells ran in \d+ s\. Nothing was saved", done.stdout), done.stdout
    assert list(outside.iterdir()) == []


@pytest.mark.real_model
@pytest.mark.skipif(_local_model_missing() is not None, reason="the local model is not installed")
def test_the_demo_answers_live_on_the_embedded_model_installed_with_it(installed, outside):
    """The installed course's real-model notebook up to its first %%agent cell (the whole one takes
    30 s alone), live: the model is the one the extra installed into the environment. Ollama is at a
    closed port, as on a machine without it."""
    assert installed.run("python", "-m", "meowgent_nb", "course", ".", cwd=outside).returncode == 0
    notebook = nbformat.read(outside / "05_real_model.ipynb", as_version=4)
    notebook.cells = notebook.cells[:6]
    nbformat.write(notebook, outside / "05_real_model.ipynb")
    done = installed.run(
        "python", "-m", "meowgent_nb", "demo", "05_real_model.ipynb", cwd=outside, OLLAMA_HOST="127.0.0.1:9"
    )
    assert done.returncode == 0, done.stderr
    assert "[IPKernelApp] WARNING" not in done.stderr, done.stderr
    out = done.stdout
    assert out.startswith(
        "Running 05_real_model.ipynb headless (the model answers live; MEOWGENT_CASSETTE_MODE=off)."
    ), out
    expected = FIRST_CELL.format(model=LIVE_LINE).replace(
        "\nmodel:", "\n" + NOTE.format(host="127.0.0.1:9") + "\nmodel:"
    )
    shown = out[out.index("--- cell 6 ") :]
    assert shown.startswith(expected), out
    assert FOOTER.search(out), out


MINE = [
    "%load_ext meowgent_nb",
    """import meowgent_nb
from meowgent_nb import tool

assert "site-packages" in meowgent_nb.__file__  # the installed package, not a clone's


@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two whole numbers.\"\"\"
    return a + b""",
    '%%agent -m local --expect "add(a=1234, b=4321)" -o result\nWhat is 1234 plus 4321? Use the add tool.',
    "assert [r.output for r in result.tool_results] == ['5555']",
]


@pytest.fixture
def mine(outside) -> Path:
    """A notebook of a person's own, with a tool and an %%agent cell on the embedded model."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in MINE])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, outside / "mine.ipynb")
    return outside / "mine.ipynb"


@pytest.mark.real_model
@pytest.mark.skipif(_local_model_missing() is not None, reason="the local model is not installed")
def test_a_persons_notebook_answers_in_a_kernel_and_passes_nbval_on_its_expected_call(installed, mine):
    """nbval runs the notebook in a kernel of the environment: the agent cell is checked on its call
    (the plugin's --expect), the next cell on the tool's result, and the report says what was called."""
    checked = installed.run(
        "pytest",
        "--nbval",
        "-p",
        "no:cacheprovider",
        "--meowgent-report",
        "report.json",
        "mine.ipynb",
        cwd=mine.parent,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.search(r"^4 passed in ", checked.stdout.splitlines()[-1].strip("= ")), checked.stdout
    assert json.loads((mine.parent / "report.json").read_text()) == [
        {
            "notebook": "mine.ipynb",
            "cell": "Cell 2",
            "expected": "add(a=1234, b=4321)",
            "actual": ["add(a=1234, b=4321) -> ok"],
            "ended": "answered",
            "outcome": "passed",
        }
    ]


# The course's notebooks whose needs only the installed package meets: the real-model notebook
# from its cassette, the MCP server started from the course's own folder, pandas from the extra.
COURSE_CHECKED = ["05_real_model.ipynb", "07_mcp_tools.ipynb", "08_notebook_workspace.ipynb"]


def test_the_course_copied_from_the_wheel_passes_nbval_from_its_cassettes(installed, outside):
    done = installed.run("python", "-m", "meowgent_nb", "course", "here", cwd=outside)
    assert done.returncode == 0, done.stderr
    here = outside / "here"
    # The same files as the clone's course, byte for byte: the clone's nbval run checks them all.
    assert {p.name: p.read_bytes() for p in here.iterdir()} == {
        name: path.read_bytes() for name, path in course_files().items()
    }
    # The extra installs what the notebooks need; JupyterLab, to open them, is named.
    assert done.stdout.splitlines()[-3:] == [
        'The course also needs jupyterlab (to open the notebooks in JupyterLab): pip install "jupyterlab"',
        "Open it:  jupyter lab here",
        "Check it: cd here && pytest --nbval   (each notebook against its saved outputs, from its cassettes)",
    ]
    checked = installed.run(
        "pytest", "--nbval", "-p", "no:cacheprovider", *COURSE_CHECKED, cwd=here, timeout=240
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr
    assert re.search(r"^\d+ passed in ", checked.stdout.splitlines()[-1].strip("= ")), checked.stdout
