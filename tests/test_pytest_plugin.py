"""The pytest plugin shipped with the package (pytest_meowgent_nb.py): nbval's sanitize rules,
the real_model marker from notebook metadata, and what it leaves alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import pytest_meowgent_nb as plugin

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
OURS = plugin.sanitize_rules((ROOT / "meowgent_nb" / "nbval_sanitize.cfg").read_text(), "ours")


# --- reading a sanitize file ---------------------------------------------------------------------


def test_the_package_rules_are_the_transcripts_seven():
    assert [regex.split("class=")[1][:30] if "class=" in regex else regex for regex, _ in OURS] == [
        '"meowgent-timeline"[\\s\\S]*?</s',
        '"meowgent-duration"[^>]*>)[^<]',
        '"meowgent-footer"[^>]*>[^<]*?)',
        '"meowgent-footer"[^>]*>[^<]*?)',
        '"meowgent-model">)[^<]*</span>',
        '"meowgent-thought-time">)[^<]*',
        '"meowgent-elapsed">)[^<]*</spa',
    ]
    assert OURS[1] == (r'(<span class="meowgent-duration"[^>]*>)[^<]*</span>', r"\1DURATION</span>")


def test_a_sanitize_file_is_read_as_nbval_reads_it():
    text = "# comment\nregex: \\d+ ms\nreplace: N ms\n\nregex: id=\\w+\nreplace: id=ID\n"
    assert plugin.sanitize_rules(text, "mine.cfg") == [("\\d+ ms", "N ms"), ("id=\\w+", "id=ID")]
    assert plugin.sanitize_rules("", "mine.cfg") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "regex:\\d+\nreplace: N\n",
            "mine.cfg line 1: a rule is two lines, 'regex: PATTERN' then 'replace: TEXT' (one space after"
            " each colon); found 'regex:\\\\d+' followed by 'replace: N'",
        ),
        (
            "regex: \\d+\n\nreplace: N\n",
            "mine.cfg line 1: a rule is two lines, 'regex: PATTERN' then 'replace: TEXT' (one space after"
            " each colon); found 'regex: \\\\d+' followed by ''",
        ),
        ("replace: N\n", "mine.cfg line 1: 'replace: N' has no 'regex: PATTERN' line right before it"),
        (
            "regex: (unclosed\nreplace: N\n",
            "mine.cfg: the rule 'regex: (unclosed' / 'replace: N' does not compile:"
            " missing ), unterminated subpattern at position 0",
        ),
        (
            "regex: (a)\nreplace: \\2\n",
            "mine.cfg: the rule 'regex: (a)' / 'replace: \\2' does not compile: invalid group reference 2 at position 1",
        ),
    ],
)
def test_a_malformed_sanitize_file_is_one_clear_error(text, message):
    with pytest.raises(pytest.UsageError) as error:
        plugin.sanitize_rules(text, "mine.cfg")
    assert str(error.value) == message


def test_merging_puts_ours_first_and_drops_the_users_copies_of_them():
    mine = [("\\d+ ms", "N ms"), OURS[0], ("x", "y"), OURS[3]]
    merged = plugin.merged_sanitize_text(OURS, mine)
    assert plugin.sanitize_rules(merged, "merged") == [*OURS, ("\\d+ ms", "N ms"), ("x", "y")]


# --- pytest_configure: what nbval is given -------------------------------------------------------


def sanitize_option(pytester: pytest.Pytester, *args: str) -> str | None:
    config = pytester.parseconfigure(*args)
    try:
        return config.option.nbval_sanitize_with
    finally:
        config._ensure_unconfigure()


def test_with_nbval_and_no_file_nbval_reads_the_package_file(pytester):
    assert sanitize_option(pytester, "--nbval") == str(ROOT / "meowgent_nb" / "nbval_sanitize.cfg")
    assert sanitize_option(pytester, "--nbval-lax") == str(ROOT / "meowgent_nb" / "nbval_sanitize.cfg")


def test_without_nbval_nothing_of_nbvals_is_touched(pytester):
    assert sanitize_option(pytester) is None
    # Not even a file that is not there is looked at.
    assert sanitize_option(pytester, "--nbval-sanitize-with", "missing.cfg") == "missing.cfg"


def test_without_nbval_installed_the_plugin_still_loads_and_does_nothing_of_nbvals(pytester):
    config = pytester.parseconfigure("-p", "no:nbval")
    try:
        assert not hasattr(config.option, "nbval_sanitize_with")
        assert config.pluginmanager.has_plugin("meowgent_nb")
        assert any(line.startswith("real_model:") for line in config.getini("markers"))
    finally:
        config._ensure_unconfigure()


def test_the_plugin_is_the_packages_pytest11_entry_point():
    from importlib.metadata import entry_points

    assert [(e.name, e.value) for e in entry_points(group="pytest11") if e.value == "pytest_meowgent_nb"] == [
        ("meowgent_nb", "pytest_meowgent_nb")
    ]


def test_the_users_file_is_kept_and_ours_added_before_it(pytester):
    mine = pytester.path / "mine.cfg"
    mine.write_text("regex: \\d+ ms\nreplace: N ms\n" + f"regex: {OURS[0][0]}\nreplace: {OURS[0][1]}\n")
    config = pytester.parseconfigure("--nbval", "--nbval-sanitize-with", str(mine))
    merged = Path(config.option.nbval_sanitize_with)
    assert merged != mine and mine.read_text().startswith("regex: \\d+ ms")  # theirs is unchanged
    assert plugin.sanitize_rules(merged.read_text(), "merged") == [*OURS, ("\\d+ ms", "N ms")]
    config._ensure_unconfigure()
    assert not merged.exists()  # the merged copy is removed when pytest ends


def test_a_missing_or_malformed_user_file_stops_pytest_with_its_name(pytester):
    with pytest.raises(pytest.UsageError, match=r"^--nbval-sanitize-with nope\.cfg: no such file$"):
        pytester.parseconfigure("--nbval", "--nbval-sanitize-with", "nope.cfg")
    (pytester.path / "bad.cfg").write_text("regex: [\nreplace: x\n")
    with pytest.raises(pytest.UsageError, match=r"^bad\.cfg: the rule 'regex: \[' / 'replace: x' does not compile"):
        pytester.parseconfigure("--nbval", "--nbval-sanitize-with", "bad.cfg")


def test_the_plugin_module_imports_nothing_of_the_package():
    code = "import sys, pytest_meowgent_nb; print(sorted(m for m in sys.modules if m.startswith('meowgent_nb')))"
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
        ({"meowgent_nb": {"real_model": "yes"}}, "'meowgent_nb.real_model' must be true or false, got \"yes\""),
        ({"meowgent_nb": {"real_model": 1}}, "'meowgent_nb.real_model' must be true or false, got 1"),
        ({"meowgent_nb": {"real_model": None}}, "'meowgent_nb.real_model' must be true or false, got null"),
        ({"meowgent_nb": True}, "'meowgent_nb' must be an object such as {\"real_model\": true}, got true"),
        ({"meowgent_nb": ["real_model"]}, "'meowgent_nb' must be an object such as {\"real_model\": true}, got [\"real_model\"]"),
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
    done = no_model.runpytest("--nbval", "-rs", "-p", "no:cacheprovider", "live.ipynb")
    done.assert_outcomes(skipped=1)
    reason = next(line for line in done.outlines if line.startswith("SKIPPED"))
    assert reason.startswith("SKIPPED [1] live.ipynb: no model to run this notebook on: ")
    assert str(no_model.path / "no-model.gguf") in reason
    deselected = no_model.runpytest("--nbval", "-m", "not real_model", "--collect-only", "-q", "-p", "no:cacheprovider")
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
    # Without CI: there pytest writes each failure's whole message after FAILED, not one line of it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_") and k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", "--nbval-lax", "--nbval-sanitize-with", "mine.cfg"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert lines[-1].startswith("1 failed, 7 passed in "), done.stdout
    failed = [line for line in lines if line.startswith("FAILED ")]
    assert len(failed) == 1 and failed[0].startswith("FAILED changed.ipynb::Cell 1 - "), done.stdout
    assert lines.count("  - 2 + 3 = 5.") == 1 and lines.count("  + 2 + 3 = 6.") == 1  # given, saved
