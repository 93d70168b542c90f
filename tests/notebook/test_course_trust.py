"""The course passes under nbval because its test configuration trusts its rules file, visibly
(notebooks/conftest.py); without that setting the file's allow rule decides nothing."""

from __future__ import annotations

from pathlib import Path

from meowgent_nb.testing import run_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_without_the_trust_setting_the_course_rules_file_allows_nothing():
    run = run_notebook(NOTEBOOKS / "03_approvals.ipynb", env={"MEOWGENT_TRUST_RULES": ""})
    (cell,) = [cell for cell in run.cells if cell.prompt == "Delete old.log."]
    assert cell.transcript.split("\nThe tool said")[0] == (
        "[tool] delete_file(name='old.log') -> denied (by policy: MEOWGENT_APPROVE=deny)\n"
        "  [a rule in approvals.toml would allow this; the file is not trusted (%agent trust)]\n"
        "  Denied: no person to approve (headless run)"
    )
    (listing,) = [cell.outputs[0]["text"] for cell in run.notebook.cells if cell.source == "%agent rules"]
    assert listing.splitlines()[-1] == (
        "  1. delete_file name=*.log -> allow   (approvals.toml) (not trusted: %agent trust)"
    )


def test_the_course_trusts_its_file_in_its_test_configuration_and_no_cell_trusts_it():
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("course_conftest", NOTEBOOKS / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert conftest.RULES_FILE == NOTEBOOKS / "approvals.toml"
    code = [
        (path.name, "".join(cell["source"]))
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
        for cell in json.loads(path.read_text())["cells"]
        if cell["cell_type"] == "code"
    ]
    words = ("MEOWGENT_TRUST_RULES", "%agent trust", "trust_rules", "MEOWGENT_CONFIG_DIR")
    assert [(name, source) for name, source in code if any(word in source for word in words)] == []
