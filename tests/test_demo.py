"""``python -m meowgent_nb demo``, the README's main job: it runs the real-model course notebook
and prints each ``%%agent`` cell's transcript (the model, the calls and results, the answer, the
tokens/s), as a terminal user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

import meowgent_nb
from meowgent_nb.__main__ import agent_cell_text
from tests.support.doc_blocks import Block, section_blocks
from tests.test_readme import README

ROOT = Path(__file__).resolve().parents[1]


def demo(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """The command as a user types it, in ``cwd``, with these of our variables and no others."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_") and k != "OLLAMA_HOST"}
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), clean.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "meowgent_nb", "demo", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=240,
    )


LIVE_MODEL = "Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp)"
NOTE = (
    "Ollama is not running at http://{host}; the embedded model Qwen2.5-Coder-0.5B-Instruct answers"
    " instead of qwen2.5:0.5b.\nTo choose the model yourself (and not be told this again): `%%agent -m local`,"
    ' `%config AgentMagics.model = "local"` or MEOWGENT_MODEL=local; later cells say "Ollama not running"'
    " in their model line."
)
EMBEDDED_PROTOCOL = "decide tool calls (the embedded models' protocol)"
"""What the model line adds where the embedded model chose the protocol (``auto``, the default)."""
LIVE_LINE = f"{LIVE_MODEL}, Ollama not running, {EMBEDDED_PROTOCOL}"  # a cell where "auto" fell back


def run_it_blocks() -> list[Block]:
    """README's "Run it" section: the main job's command, its sample output, the test command."""
    blocks = section_blocks(README.read_text(), "## Run it")
    assert [b.language for b in blocks] == ["bash", "text", "bash"], blocks
    return blocks


def test_the_readme_runs_the_demo_and_the_tests_in_two_commands():
    main, _, tests = run_it_blocks()
    assert main.code == 'pip install -e ".[test,local]" && python -m meowgent_nb demo'
    assert tests.code == 'pip install -e ".[test,local]" && pytest'
    # CI runs the README's test command exactly as a user types it, last (the type checker before it).
    assert (ROOT / ".ci" / "run").read_text().splitlines()[-1] == tests.code
    assert "--quiet" not in main.code and " -q" not in main.code  # pip shows its progress


FIRST_CELL = """\
--- cell 6 --------------------------------------------------
%%agent --new -o result
What is the weather in Paris?
model: {model}
[tool] get_weather(city='Paris') -> done
  Paris: 21 degrees celsius, sunny
"""
FOOTER = re.compile(
    r"^2 turns · 1 tool call · \d+ prompt tokens · \d+ completion tokens · [\d.]+ tokens/s · .+$", re.M
)


def test_the_demo_replayed_prints_each_agent_cell(tmp_path):
    done = demo("-o", str(tmp_path / "ran.ipynb"), MEOWGENT_CASSETTE_MODE="replay")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the kernel talks over Unix sockets: ipykernel's TCP warning does not arise
    out = done.stdout
    assert out.startswith(
        "Running notebooks/05_real_model.ipynb headless"
        " (cassette mode 'replay'; MEOWGENT_CASSETTE_MODE=replay)."
    ), out
    model = "cassette replay of qwen2.5:0.5b (05_real_model.cassette.json)"
    chosen = f"{model}, {EMBEDDED_PROTOCOL}"  # the cells that leave the protocol to the model
    first = out.index("--- cell 6 ")
    assert out[first:].startswith(FIRST_CELL.format(model=chosen) + "Paris: 21 degrees celsius, sunny\n"), out
    assert FOOTER.search(out), out
    assert (
        "--- cell 12 --------------------------------------------------\n%%agent --new -o result\n"
        f"In one sentence: why is the sky blue?\nmodel: {chosen}\n"
        "The sky is blue because it is a shade of blue.\n"
    ) in out
    assert (
        "\n%%agent --new -o result\nWhat is the weather in Paris and in Oslo?\n"
        f"model: {chosen}\n"
        "[tool] get_weather(city='Paris', unit='celsius') -> done\n  Paris: 21 degrees celsius, sunny\n"
        "[tool] get_weather(city='Oslo', unit='fahrenheit') -> done\n  Oslo: 9 degrees fahrenheit, sunny\n"
    ) in out
    assert f"\n%%agent --new --protocol json -o result\nWhat is 2.5 plus 4?\nmodel: {model}\n6.5\n" in out
    assert (out.count(f"model: {chosen}\n"), out.count(f"model: {model}\n")) == (3, 1)
    saved = tmp_path / "ran.ipynb"
    done_line = rf"\n4 %%agent cells ran in \d+ s\. The executed notebook is {re.escape(str(saved))};"
    assert re.search(done_line, out)
    # README's sample is what the demo prints (the live model's line and figures aside).
    # The sample was printed without Ollama: the cell's note that the embedded model answers is
    # lines 3 and 4, which a replay does not print.
    sample = run_it_blocks()[1].code.splitlines()
    assert "\n".join(sample[3:5]) == NOTE.format(host="127.0.0.1:11434"), sample
    del sample[3:5]
    shown = out[first:].splitlines()[: len(sample)]
    assert sample[3] == f"model: {LIVE_LINE}" and FOOTER.match(sample[-1]), sample
    assert [line for n, line in enumerate(shown) if n not in (3, len(sample) - 1)] == [
        line for n, line in enumerate(sample) if n not in (3, len(sample) - 1)
    ]
    counts = [c.execution_count for c in nbformat.read(saved, as_version=4).cells if c.cell_type == "code"]
    assert counts == list(range(1, 12))  # every code cell ran, and was saved


def test_the_sample_says_whose_get_weather_it_shows():
    """The sample is the course notebook's tool (", sunny"), not the tour's: both pages say which returns what."""
    course = nbformat.read(ROOT / "notebooks" / "05_real_model.ipynb", as_version=4)
    notebook_tool = re.search(r'return (f".*, sunny")', course.cells[1].source)
    tour_tool = re.search(r'return (f"\{city\}: 21 degrees \{unit\}")', README.read_text())
    assert notebook_tool and tour_tool
    for page in (README, ROOT / "docs" / "getting-started.md"):
        text = page.read_text()
        intro = " ".join(text[: text.index("--- cell 6 ")].rsplit("\n\n", 2)[-2].split())
        assert f"the notebook's own `get_weather` returns `{notebook_tool[1]}`" in intro, (page, intro)
        assert f"returns `{tour_tool[1]}`):" in intro, (page, intro)
        assert "  Paris: 21 degrees celsius, sunny\n" in text


def test_the_demo_elsewhere_runs_the_course_installed_with_the_package(tmp_path):
    """Away from a clone's root the demo runs the installed course's notebook, in a temporary copy:
    nothing is written where it runs, and the kernel's TCP warning never reaches the output."""
    done = demo(cwd=tmp_path, MEOWGENT_CASSETTE_MODE="replay")
    assert done.returncode == 0, done.stderr
    assert (
        done.stderr == ""
    )  # ipykernel's "[IPKernelApp] WARNING | Kernel is running over TCP..." is not there
    lines = done.stdout.splitlines()
    # Here the package is the clone's (PYTHONPATH): its course is the clone's notebooks/.
    assert lines[0] == (
        f"The course's 05_real_model.ipynb, installed with meowgent_nb {meowgent_nb.__version__}"
        f" ({ROOT / 'notebooks'}), runs in a temporary copy of the course."
    )
    assert lines[1].startswith("Running 05_real_model.ipynb headless (cassette mode 'replay';"), lines[1]
    assert "\n%%agent --new --protocol json -o result\nWhat is 2.5 plus 4?\n" in done.stdout
    assert re.search(r"\n4 %%agent cells ran in \d+ s\. Nothing was saved", done.stdout), done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_notebook_that_is_not_there_is_named_with_the_fix(tmp_path):
    done = demo("missing.ipynb", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "There is no notebook missing.ipynb: name an .ipynb file that exists, or run the course's"
        " real-model notebook: python -m meowgent_nb demo\n"
    )


def test_the_demo_without_a_model_fails_showing_the_cell_and_the_fix(tmp_path):
    # No Ollama (a closed port) and no GGUF: the first %%agent cell fails, and so does the command.
    done = demo(OLLAMA_HOST="127.0.0.1:9", MEOWGENT_GGUF=str(tmp_path / "none.gguf"))
    assert done.returncode == 1
    assert "--- cell" not in done.stdout
    failed = done.stderr[done.stderr.index("A cell of notebooks/05_real_model.ipynb failed:\n") :]
    assert "\n%%agent --new -o result\nWhat is the weather in Paris?\n" in failed, failed
    assert "\nUsageError: %%agent: " in failed and "none.gguf" in failed, failed


def test_importing_the_command_runs_nothing():
    done = subprocess.run(
        [sys.executable, "-c", "import meowgent_nb.__main__"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_cell_without_a_transcript_says_so():
    cell = nbformat.v4.new_code_cell("%%agent\nHi")
    cell.outputs = [nbformat.v4.new_output("error", ename="UsageError", evalue="x", traceback=[])]
    assert agent_cell_text(cell) == "%%agent\nHi\n(this cell showed no transcript)\n"


# The demo live on the embedded model: tests/test_wheel_install.py runs it from the installed wheel.
