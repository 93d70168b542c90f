"""tests/user_project/ as a user's own project checks it: its notebooks, no conftest.py of ours,
under ``pytest --nbval``, ``pytest --nbmake`` and papermill, each run from a copy of the folder.

Every notebook of the folder is run (add one and it is checked too). ``scripted_agent`` uses a
`ScriptedModel`; ``mcp_recorded`` calls an MCP server's tool that was recorded (``--record``) in
``mcp_recorded.cassette.json``, and replays with the server absent (its ``weather_server.py`` is
not in the folder); ``replayed_agent`` replays ``replayed_agent.cassette.json``, recorded once with
the embedded model (to record it again, in tests/user_project/ with the ``local`` extra:
``OLLAMA_HOST=127.0.0.1:9 MEOWGENT_CASSETTE_MODE=record jupyter nbconvert --to notebook --execute
--inplace replayed_agent.ipynb``). Nothing here reaches a model: OLLAMA_HOST is a closed port and
MEOWGENT_GGUF a file that is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FOLDER = Path(__file__).with_name("user_project")
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))


def code_cells(path: Path) -> int:
    return sum(cell["cell_type"] == "code" for cell in json.loads(path.read_text())["cells"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the folder, outside this repository (so no conftest.py or pytest settings of ours apply)."""
    copy = tmp_path / "user_project"
    shutil.copytree(FOLDER, copy)
    assert not list(copy.rglob("conftest.py"))
    return copy


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_") and k != "OLLAMA_HOST"}
    env |= {"MEOWGENT_GGUF": str(folder / "no-model.gguf"), "OLLAMA_HOST": "127.0.0.1:9"}
    done = subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


def test_the_folder_has_the_notebooks_these_tests_run():
    assert {"mcp_recorded.ipynb", "replayed_agent.ipynb", "scripted_agent.ipynb"} <= {
        path.name for path in NOTEBOOKS
    }
    assert not list(FOLDER.rglob("conftest.py"))
    assert not (FOLDER / "weather_server.py").exists()  # the recorded MCP server is not here to start


def test_nbval_compares_every_output_with_no_conftest(project):
    done = run(project, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval")
    assert done.stdout.splitlines()[-1].startswith(f"{sum(map(code_cells, NOTEBOOKS))} passed in ")


def test_nbmake_runs_every_notebook(project):
    done = run(project, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbmake")
    assert done.stdout.splitlines()[-1].startswith(f"{len(NOTEBOOKS)} passed in ")


def test_papermill_runs_every_notebook(project):
    # One process for all the notebooks, as a CI script would loop over them.
    script = (
        "import pathlib, papermill\n"
        "out = pathlib.Path('out'); out.mkdir()\n"
        "for path in sorted(pathlib.Path('.').glob('*.ipynb')):\n"
        "    papermill.execute_notebook(str(path), str(out / path.name), progress_bar=False)\n"
    )
    run(project, "-c", script)
    ran = sorted((project / "out").glob("*.ipynb"))
    assert [path.name for path in ran] == [path.name for path in NOTEBOOKS]
    outputs = {path.name: json.loads(path.read_text()) for path in ran}
    plain = [
        "".join(output["data"]["text/plain"])
        for cell in outputs["scripted_agent.ipynb"]["cells"]
        for output in cell.get("outputs", [])
        if "data" in output
    ]
    assert plain == [
        "[tool] add(a=2, b=3) -> done\n  5\n2 + 3 = 5.",
        "AgentResult(text='2 + 3 = 5.', turns=2, stopped='answer', calls=['add: ok'])",
    ]
    mcp = [
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        for c in outputs["mcp_recorded.ipynb"]["cells"]
        for o in c.get("outputs", [])
    ]
    assert "[('weather_forecast', 'ok', 'Sunny in Paris, 21 C')]" in mcp  # the recorded result, replayed
