"""The pytest plugin shipped with the package (pytest_meowgent_nb.py): nbval's sanitize rules,
the real_model marker from notebook metadata, agent cells checked on their expected calls and the
--meowgent-report table, and what it leaves alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

import pytest_meowgent_nb as plugin

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
OURS = get_sanitize_patterns((ROOT / "meowgent_nb" / "nbval_sanitize.cfg").read_text(encoding="utf-8"))


# --- our rules -----------------------------------------------------------------------------------


def test_the_package_rules_are_the_transcripts_eight():
    assert [regex.split("class=")[1][:30] if "class=" in regex else regex for regex, _ in OURS] == [
        '"meowgent-timeline"[\\s\\S]*?</s',
        '"meowgent-duration"[^>]*>)[^<]',
        '"meowgent-footer"[^>]*>[^<]*?)',
        '"meowgent-footer"[^>]*>[^<]*?)',
        '"meowgent-model">)[^<]*</span>',
        '"meowgent-thought-time">)[^<]*',
        '"meowgent-elapsed">)[^<]*</spa',
        '"meowgent-media"[^>]*? src=")d',
    ]
    assert OURS[1] == (r'(<span class="meowgent-duration"[^>]*>)[^<]*</span>', r"\1DURATION</span>")


def test_an_image_in_a_card_is_not_compared_but_the_card_around_it_is():
    # A figure's PNG bytes change with the matplotlib and FreeType that drew it (notebook 8's plot).
    regex, replace = OURS[-1]
    card = '<pre>Value: 1</pre><img class="meowgent-media" alt="an image from the tool" style="x" src="data:image/png;base64,iVBO+/9=">'
    assert re.sub(regex, replace, card) == (
        '<pre>Value: 1</pre><img class="meowgent-media" alt="an image from the tool" style="x" src="IMAGE">'
    )


def test_nbval_reads_every_rule_of_the_package_file_and_each_compiles():
    # nbval reads past a line it cannot read; in our own file every 'regex:' line is a rule.
    lines = (ROOT / "meowgent_nb" / "nbval_sanitize.cfg").read_text(encoding="utf-8").splitlines()
    assert sum(line.startswith(("regex:", "replace:")) for line in lines) == 2 * len(OURS) == 16
    for regex, replace in OURS:
        assert re.compile(regex).sub(replace, "") == ""


# --- pytest_configure: what nbval is given -------------------------------------------------------


def sanitize_option(pytester: pytest.Pytester, *args: str) -> str | None:
    config = pytester.parseconfigure(*args)
    try:
        return config.option.nbval_sanitize_with
    finally:
        config._ensure_unconfigure()


def test_nbvals_option_is_passed_through_untouched(pytester):
    assert sanitize_option(pytester) is None
    assert sanitize_option(pytester, "--nbval") is None
    assert sanitize_option(pytester, "--nbval-lax", "--nbval-sanitize-with", "missing.cfg") == "missing.cfg"
    with pytest.warns(DeprecationWarning):
        assert sanitize_option(pytester, "--nbval", "--sanitize-with", "old.cfg") == "old.cfg"


def test_without_nbval_installed_the_plugin_still_loads_and_does_nothing_of_nbvals(pytester):
    config = pytester.parseconfigure("-p", "no:nbval")
    try:
        assert not hasattr(config.option, "nbval_sanitize_with")
        assert config.pluginmanager.has_plugin("meowgent_nb")
    finally:
        config._ensure_unconfigure()


def test_the_plugin_is_the_packages_pytest11_entry_point():
    from importlib.metadata import entry_points

    assert [(e.name, e.value) for e in entry_points(group="pytest11") if e.value == "pytest_meowgent_nb"] == [
        ("meowgent_nb", "pytest_meowgent_nb")
    ]


def test_the_plugin_adds_no_option_and_no_marker_to_a_project_without_our_metadata(pytester):
    notebook(pytester.path / "plain.ipynb")
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    seen = {}
    for flag in ("no:meowgent_nb", "meowgent_nb"):
        config = pytester.parseconfigure("-p", flag, "--nbval")
        try:
            seen[flag] = (
                sorted(vars(config.option)),
                sorted(config._parser._inidict),
                config.getini("markers"),
            )
        finally:
            config._ensure_unconfigure()
    # Two options of ours (--meowgent-report, --meowgent-trace, off unless given); no ini key, no marker.
    ours, theirs = seen["meowgent_nb"], seen["no:meowgent_nb"]
    assert (sorted(set(ours[0]) - set(theirs[0])), ours[1:]) == (
        ["meowgent_report", "meowgent_trace"],
        theirs[1:],
    )
    done = pytester.runpytest(
        "--nbval", "--nbval-current-env", "--strict-markers", "--markers", "-p", "no:cacheprovider"
    )
    assert not [line for line in done.outlines if line.startswith("@pytest.mark.real_model")]
    collected = pytester.runpytest(
        "--nbval", "--collect-only", "-q", "-m", "real_model", "-p", "no:cacheprovider"
    )
    assert collected.outlines[-1].startswith("no tests collected (2 deselected)")


def test_the_plugin_module_imports_nothing_of_the_package():
    code = (
        "import sys, pytest_meowgent_nb; print(sorted(m for m in sys.modules if m.startswith('meowgent_nb')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout == "[]\n"


# --- notebooks that need a real model ------------------------------------------------------------


def notebook(path: Path, metadata: dict | None = None) -> Path:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.metadata.update(metadata or {})
    nb.cells = [nbformat.v4.new_code_cell("1 + 1")]
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize(
    ("metadata", "needs"),
    [
        ({}, False),
        ({"meowgent_nb": {}}, False),
        ({"meowgent_nb": {"real_model": False}}, False),
        ({"meowgent_nb": {"real_model": True}}, True),
        ({"meowgent_nb": {"real_model": True, "other": 1}}, True),
    ],
)
def test_a_notebook_says_in_its_metadata_that_it_needs_a_real_model(tmp_path, metadata, needs):
    assert plugin.needs_real_model(notebook(tmp_path / "n.ipynb", metadata)) is needs


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            {"meowgent_nb": {"real_model": "yes"}},
            "'meowgent_nb.real_model' must be true or false, got \"yes\"",
        ),
        ({"meowgent_nb": {"real_model": 1}}, "'meowgent_nb.real_model' must be true or false, got 1"),
        ({"meowgent_nb": {"real_model": None}}, "'meowgent_nb.real_model' must be true or false, got null"),
        ({"meowgent_nb": True}, "'meowgent_nb' must be an object such as {\"real_model\": true}, got true"),
        (
            {"meowgent_nb": ["real_model"]},
            '\'meowgent_nb\' must be an object such as {"real_model": true}, got ["real_model"]',
        ),
    ],
)
def test_a_wrong_metadata_value_is_an_error_naming_the_notebook(tmp_path, metadata, message):
    path = notebook(tmp_path / "n.ipynb", metadata)
    with pytest.raises(pytest.UsageError) as error:
        plugin.needs_real_model(path)
    assert str(error.value) == f"{path}: the notebook metadata {message}"


def test_an_unreadable_notebook_is_left_to_its_collector(tmp_path):
    (tmp_path / "broken.ipynb").write_text("{not json")
    (tmp_path / "list.ipynb").write_text("[]")
    assert plugin.needs_real_model(tmp_path / "broken.ipynb") is False
    assert plugin.needs_real_model(tmp_path / "list.ipynb") is False
    (tmp_path / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)  # json: RecursionError
    assert plugin.needs_real_model(tmp_path / "deep.ipynb") is False


@pytest.fixture
def no_model(pytester, monkeypatch):
    """pytester in a folder with no model: no GGUF file, no Ollama (a closed port)."""
    for name in list(os.environ):
        if name.startswith("MEOWGENT_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    monkeypatch.setenv("MEOWGENT_GGUF", str(pytester.path / "no-model.gguf"))
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    return pytester


def test_without_a_model_a_real_model_notebook_is_skipped_saying_why(no_model):
    notebook(no_model.path / "live.ipynb", {"meowgent_nb": {"real_model": True}})
    notebook(no_model.path / "plain.ipynb")
    # --strict-markers: the marker is registered when the first such notebook is collected.
    done = no_model.runpytest("--nbval", "-rs", "--strict-markers", "-p", "no:cacheprovider", "live.ipynb")
    done.assert_outcomes(skipped=1)
    reason = next(line for line in done.outlines if line.startswith("SKIPPED"))
    assert reason.startswith("SKIPPED [1] live.ipynb: no model to run this notebook on: ")
    assert str(no_model.path / "no-model.gguf") in reason
    deselected = no_model.runpytest(
        "--nbval", "-m", "not real_model", "--collect-only", "-q", "-p", "no:cacheprovider"
    )
    assert deselected.outlines[:2] == ["plain.ipynb::Cell 0", ""]
    assert "1/2 tests collected (1 deselected)" in deselected.outlines[-1]


def test_a_wrong_metadata_value_stops_the_run(no_model):
    path = notebook(no_model.path / "odd.ipynb", {"meowgent_nb": {"real_model": "sometimes"}})
    done = no_model.runpytest("--nbval", "-p", "no:cacheprovider")
    assert done.ret == pytest.ExitCode.USAGE_ERROR
    assert done.errlines == [
        f"ERROR: {path}: the notebook metadata 'meowgent_nb.real_model' must be true or false, got \"sometimes\"",
        "",
    ]


# --- a real nbval run: --nbval-lax, a user's own sanitize file ----------------------------------

# The plugins a real run here uses (nbval, and xdist for -n), named instead of autoloading every one
# installed (hypothesis, anyio, pytest-httpserver, ...): 1.1-1.2 s of CPU less in each of the
# file's 13 pytest processes (1.6-1.8 s against 2.8-3.0 s for one that runs no notebook).
PLUGINS = ("-p", "nbval", "-p", "xdist")


def run_env() -> dict[str, str]:
    """The environment of a real run: no plugin autoloaded, none of our settings, not CI (there
    pytest writes each failure's whole message after FAILED, not one line of it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_") and k != "CI"}
    return {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_nbval_lax_compares_a_marked_transcript_with_both_files_rules(tmp_path):
    # --nbval-lax compares only the cells marked NBVAL_CHECK_OUTPUT: a marked %%agent cell's
    # transcript (its text/plain has no times; its HTML's times are our rules' to replace), and a
    # cell whose varying output only the user's own rule replaces. A changed answer still fails.
    nb = json.loads((ROOT / "tests" / "user_project" / "scripted_agent.ipynb").read_text())
    agent = next(cell for cell in nb["cells"] if "".join(cell["source"]).startswith("%%agent"))
    agent["source"] = ["%%agent --model-object model -o result\n", "# NBVAL_CHECK_OUTPUT\n", "What is 2 + 3?"]
    nb["cells"].append(
        nbformat.v4.new_code_cell(
            "# NBVAL_CHECK_OUTPUT\nimport random\nprint(f'seed {random.random()}')",
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="seed 0.5\n")],
            execution_count=4,
        )
    )
    (tmp_path / "same.ipynb").write_text(json.dumps(nb))
    agent["outputs"][0]["data"]["text/plain"][-1] = "2 + 3 = 6."
    (tmp_path / "changed.ipynb").write_text(json.dumps(nb))
    (tmp_path / "mine.cfg").write_text("regex: seed [0-9.e-]+\nreplace: seed N\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *PLUGINS,
            "-p",
            "meowgent_nb",
            "-q",
            "-p",
            "no:cacheprovider",
            "--color=no",
            "--nbval-lax",
            "--nbval-sanitize-with",
            "mine.cfg",
        ],
        cwd=tmp_path,
        env=run_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert lines[-1].startswith("1 failed, 7 passed in "), done.stdout
    failed = [line for line in lines if line.startswith("FAILED ")]
    assert len(failed) == 1 and failed[0].startswith("FAILED changed.ipynb::Cell 1 - "), done.stdout
    assert lines.count("  - 2 + 3 = 5.") == 1 and lines.count("  + 2 + 3 = 6.") == 1  # given, saved


# --- a user's own sanitize file: read by nbval alone, the run ends as without the plugin --------

# A notebook whose cells print "KEY 12345" and were saved with "KEY 99999": a cell passes only if
# nbval read a rule that replaces its key's number. Which cells pass tells which rules nbval read.
RULES_READ_PAST = [  # one file: a BOM, CRLF line ends, and each shape nbval reads past
    "\ufeffregex: bom \\d+",
    "replace: bom N",  # the BOM is part of the first line: not a rule
    "",
    "",
    "regex: nospace \\d+",
    "replace:nospace N",  # 'replace:' needs its space
    "regex: empty \\d+",
    "replace:",
    "regex: comment \\d+",
    "# ids vary",
    "replace: comment N",
    "regex: twice \\d+",
    "replace: twice N",
    "replace: twice M",  # the first replace counts
    "regex: blank \\d+",
    "",
    "replace: blank N",
    "regex: alone \\d+",  # no replace: the next rule is read
    "regex: after \\d+",
    "replace: after N",
    "replace: orphan N",
    "",
    "",
]
CELLS_READ_PAST = {
    "bom": "failed",
    "nospace": "failed",
    "empty": "failed",
    "comment": "failed",
    "twice": "passed",
    "blank": "failed",
    "alone": "failed",
    "after": "passed",
    "orphan": "failed",
}


def sanitize_project(folder: Path, keys: list[str], content: bytes | None) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    for number, key in enumerate(keys):
        output = nbformat.v4.new_output("stream", name="stdout", text=f"{key} 99999\n")
        nb.cells.append(
            nbformat.v4.new_code_cell(f"print('{key} 12345')", outputs=[output], execution_count=number + 1)
        )
    nbformat.write(nb, folder / "nb.ipynb")
    if content is not None:
        (folder / "mine.cfg").write_bytes(content)


def run_pytest(folder: Path, *args: str) -> tuple[int, dict[str, str], str]:
    """One real pytest run: its exit code, each test's outcome, its output (times taken out).
    Ours is loaded unless ``args`` say ``-p no:meowgent_nb``."""
    ours = () if "no:meowgent_nb" in args else ("-p", "meowgent_nb")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *PLUGINS,
            *ours,
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            "--color=no",
            *args,
        ],
        cwd=folder,
        env={**run_env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = re.sub(r" in \d+\.\d+s", " in Ts", done.stdout + done.stderr)
    out = re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", out)  # reprs in tracebacks
    outcomes = {
        found[2]: found[1].lower()
        for found in re.finditer(r"^(PASSED|FAILED|ERROR|SKIPPED) (.+?)(?: - .*)?$", out, re.MULTILINE)
    }
    return done.returncode, outcomes, out


def with_and_without_plugin(folder: Path, *args: str) -> tuple[tuple, tuple]:
    return run_pytest(folder, *args), run_pytest(folder, "-p", "no:meowgent_nb", *args)


NBVAL = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "mine.cfg")


def test_a_file_nbval_reads_past_gives_the_run_nbval_gives_it_without_the_plugin(tmp_path):
    sanitize_project(tmp_path, list(CELLS_READ_PAST), "\r\n".join(RULES_READ_PAST).encode())
    ours, theirs = with_and_without_plugin(tmp_path, *NBVAL)
    assert ours == theirs
    assert ours[:2] == (1, {f"nb.ipynb::Cell {n}": v for n, v in enumerate(CELLS_READ_PAST.values())}), ours[
        2
    ]


@pytest.mark.parametrize(
    ("content", "summary"),
    [
        (None, "ERROR nb.ipynb::Cell 0 - FileNotFoundError: [Errno 2] No such file or directory: 'mine.cfg'"),
        (
            "regex: id \\d+\nreplace: id N\n# caf\xe9\n".encode("latin-1"),
            "ERROR nb.ipynb::Cell 0 - UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 33:"
            " invalid continuation byte",
        ),
        (
            b"regex: id (\\d+\nreplace: id N\n",
            "FAILED nb.ipynb::Cell 0 - pytest plugin exception: missing ), unterminated subpattern at position 3",
        ),
    ],
    ids=["missing", "latin-1", "a bad regex"],
)
def test_a_file_nbval_cannot_read_fails_as_it_does_without_the_plugin(tmp_path, content, summary):
    sanitize_project(tmp_path, ["id"], content)
    ours, theirs = with_and_without_plugin(tmp_path, *NBVAL)
    assert ours == theirs
    assert ours[:2] == (1, {"nb.ipynb::Cell 0": summary.split()[0].lower()}), ours[2]
    assert ours[2].splitlines()[-2:] == [summary, f"1 {'error' if 'ERROR' in summary else 'failed'} in Ts"]


def test_a_missing_sanitize_file_is_not_read_when_no_notebook_runs(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_x():\n    pass\n")
    ours, theirs = with_and_without_plugin(tmp_path, "--nbval", "--nbval-sanitize-with", "missing.cfg")
    assert ours == theirs
    assert ours[:2] == (0, {"test_plain.py::test_x": "passed"}), ours[2]


def test_our_rules_come_first_and_a_users_rule_on_the_same_regex_replaces_ours(tmp_path):
    # Durations on a transcript's card are ours to replace; the user's own rules see the result.
    html = '<span class="meowgent-duration" title="t">{}</span>'
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    for number, (shown, saved) in enumerate([("12 ms", "3.5 s"), ("7 ms", "1 s")]):
        code = f"from IPython.display import HTML\nHTML({html.format(shown)!r})"
        data = {"text/html": html.format(saved), "text/plain": "<IPython.core.display.HTML object>"}
        output = nbformat.v4.new_output("execute_result", data=data, execution_count=number + 1)
        nb.cells.append(nbformat.v4.new_code_cell(code, outputs=[output], execution_count=number + 1))
    nbformat.write(nb, tmp_path / "nb.ipynb")
    # Theirs: our rule's regex with another replacement, then a rule that only matches that one's.
    (tmp_path / "mine.cfg").write_text(
        f"regex: {OURS[1][0]}\nreplace: \\1MINE 1</span>\nregex: MINE \\d\nreplace: x\n"
    )
    # Checked in-process, on what nbval holds when the first cell runs.
    (tmp_path / "conftest.py").write_text(
        "def pytest_runtest_call(item):\n    print('RULES', list(item.parent.sanitize_patterns.items()))\n"
    )
    code, outcomes, out = run_pytest(tmp_path, *NBVAL, "-s")
    assert (code, outcomes) == (0, {"nb.ipynb::Cell 0": "passed", "nb.ipynb::Cell 1": "passed"}), out
    rules = [line for line in out.splitlines() if line.startswith("RULES ")]
    assert (
        rules[0]
        == f"RULES {[OURS[0], (OURS[1][0], chr(92) + '1MINE 1</span>'), *OURS[2:], ('MINE ' + chr(92) + 'd', 'x')]}"
    )


# --- agent cells with expected calls: checked on their calls, and the report --------------------

AGENTS_SETUP = '''%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool

@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"

@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

from meowgent_nb.testing import tool_call as call

def model(*calls):
    return ScriptedModel([*calls, "Words that change with every model."])

paris, london = call("get_weather", city="Paris"), call("get_weather", city="London")
oslo, delete = call("get_weather", city="Oslo"), call("delete_file", path="old.txt")
met, argument, order = model(paris, delete), model(london, delete), model(delete, paris)
missing, extra, words, plain = model(paris), model(paris, oslo, delete), model(paris, delete), model()
'''
EXPECT = "get_weather(city='Paris') then delete_file(path='old.txt')"
CELLS = [  # model, what the first line adds, metadata, a marker line
    ("met", f'--expect "{EXPECT}"', None, ""),
    ("argument", f'--expect "{EXPECT}"', None, ""),
    ("order", "", {"meowgent": {"expect": EXPECT}}, ""),
    ("missing", f'--expect "{EXPECT}"', None, ""),
    ("extra", f'--expect "{EXPECT}"', None, ""),
    ("words", f'--expect "{EXPECT}"', None, "# NBVAL_CHECK_OUTPUT\n"),
    ("plain", "", None, "# NBVAL_IGNORE_OUTPUT\n"),
    ("met", '--expect "get_weather(city=)"', None, ""),  # cannot be read: the cell fails before the run
]
SIDE_BY_SIDE = {
    2: [
        "ExpectationNotMet: Expectation not met: call 1 get_weather had city='London', expected city='Paris'.",
        "       expected                     actual",
        "  1    get_weather(city='Paris')    1 get_weather(city='London') -> ok   ✗ wrong city",
        "  2    delete_file(path='old.txt')  2 delete_file(path='old.txt') -> ok  ✓",
        "  end  (any)                        answered                             ✓",
    ],
    3: [
        "ExpectationNotMet: Expectation not met: call 1 delete_file came before call 2 get_weather, expected the other order.",
        "       expected                     actual",
        "  1    get_weather(city='Paris')    2 get_weather(city='Paris') -> ok    ✗ out of order",
        "  2    delete_file(path='old.txt')  1 delete_file(path='old.txt') -> ok  ✗ out of order",
        "  end  (any)                        answered                             ✓",
    ],
    4: [
        "ExpectationNotMet: Expectation not met: delete_file(path='old.txt') was not called.",
        "       expected                     actual",
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok  ✓",
        "  2    delete_file(path='old.txt')  -                                  ✗ missing",
        "  end  (any)                        answered                           ✓",
    ],
    5: [
        "ExpectationNotMet: Expectation not met: call 2 get_weather(city='Oslo') -> ok was not expected"
        " (end the calls with ', ...' to allow others).",
        "       expected                     actual",
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok    ✓",
        "  2    delete_file(path='old.txt')  3 delete_file(path='old.txt') -> ok  ✓",
        "       -                            2 get_weather(city='Oslo') -> ok     ✗ not expected",
        "  end  (any)                        answered                             ✓",
    ],
}
REPORT = [
    "| notebook | cell | expected | actual | ended | outcome |",
    "|---|---|---|---|---|---|",
    f"| agents.ipynb | Cell 1 | {EXPECT} | get_weather(city='Paris') -> ok; delete_file(path='old.txt') -> ok | answered | passed |",
    f"| agents.ipynb | Cell 2 | {EXPECT} | get_weather(city='London') -> ok; delete_file(path='old.txt') -> ok | answered | failed |",
    f"| agents.ipynb | Cell 3 | {EXPECT} | delete_file(path='old.txt') -> ok; get_weather(city='Paris') -> ok | answered | failed |",
    f"| agents.ipynb | Cell 4 | {EXPECT} | get_weather(city='Paris') -> ok | answered | failed |",
    f"| agents.ipynb | Cell 5 | {EXPECT} | get_weather(city='Paris') -> ok; get_weather(city='Oslo') -> ok;"
    " delete_file(path='old.txt') -> ok | answered | failed |",
    f"| agents.ipynb | Cell 6 | {EXPECT} | get_weather(city='Paris') -> ok; delete_file(path='old.txt') -> ok | answered | failed |",
    "| agents.ipynb | Cell 7 | - | (no calls) | answered | passed |",
    "| agents.ipynb | Cell 8 | get_weather(city=) | (did not run) | - | failed |",
]


def agents_notebook(folder: Path) -> None:
    """Agent cells whose saved words are not what the model says now: only their calls count."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell(AGENTS_SETUP, execution_count=1)]
    for number, (model, line, metadata, marker) in enumerate(CELLS, 2):
        said = nbformat.v4.new_output("stream", name="stdout", text="Some words a model said once.\n")
        cell = nbformat.v4.new_code_cell(
            f"%%agent --new --model-object {model} {line}\n{marker}Go.",
            outputs=[said],
            execution_count=number,
        )
        cell.metadata.update(metadata or {})
        nb.cells.append(cell)
    nbformat.write(nb, folder / "agents.ipynb")


def test_agent_cells_are_checked_on_their_calls_and_reported(tmp_path):
    # -n 1: the cells run on an xdist worker; the report is written once, by the controller.
    agents_notebook(tmp_path)
    code, outcomes, out = run_pytest(
        tmp_path, "--nbval", "--nbval-current-env", "-n", "1", "--meowgent-report", "report.md"
    )
    failed = {f"agents.ipynb::Cell {n}": "failed" for n in (2, 3, 4, 5, 6, 8)}
    assert (code, outcomes) == (
        1,
        {
            "agents.ipynb::Cell 0": "passed",
            "agents.ipynb::Cell 1": "passed",
            **failed,
            "agents.ipynb::Cell 7": "passed",
        },
    ), out
    plain = re.sub(r"\x1b\[\d+m", "", out).splitlines()
    for number, lines in SIDE_BY_SIDE.items():
        at = plain.index(f"Cell {number}: Cell execution caused an exception")
        start = plain.index(lines[0], at)
        assert plain[start : start + len(lines) + 1] == [*lines, "(the full traceback: %agent traceback)"]
    # A cell whose run never got to the check fails, with what IPython wrote of its error.
    at = plain.index("Cell 8: The %%agent cell stopped before its calls could be checked")
    assert plain[plain.index("Traceback:", at) + 1 : plain.index("Traceback:", at) + 4] == [
        "UsageError: %%agent --expect: Cannot read 'get_weather(city=)' as a call: invalid syntax.",
        "  get_weather(city=)",
        "                   ^",
    ]
    # The cell that asks for its words to be compared is: they changed.
    assert plain[plain.index("Cell 6: Cell outputs differ") - 1] == "Notebook cell execution failed"
    assert (tmp_path / "report.md").read_text().splitlines() == REPORT


def test_the_report_as_json_keeps_each_rows_fields():
    rows = [
        {
            "notebook": "b.ipynb",
            "cell": "Cell 10",
            "expected": None,
            "actual": None,
            "ended": None,
            "outcome": "failed",
        },
        {
            "notebook": "b.ipynb",
            "cell": "Cell 9",
            "expected": "f",
            "actual": ["f() -> ok"],
            "ended": "answered",
            "outcome": "passed",
        },
    ]
    assert json.loads(plugin.report_text(rows, json_file=True)) == rows[::-1]  # in the notebooks' order
    assert plugin.report_text(rows).splitlines()[2:] == [
        "| b.ipynb | Cell 9 | f | f() -> ok | answered | passed |",
        "| b.ipynb | Cell 10 | - | (did not run) | - | failed |",
    ]
