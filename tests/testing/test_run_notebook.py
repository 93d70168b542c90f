"""meowgent_nb.testing.run_notebook: a notebook run headless, its agent cells returned as data,
and the notebook itself run exactly as without the helper."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from meowgent_nb.testing import AgentCell, ToolRun, run_notebook

PROJECT = Path(__file__).resolve().parents[1] / "user_project"


def test_a_replayed_notebooks_cells_as_data(tmp_path, run_notebook):  # the plugin's fixture
    for name in ("replayed_agent.ipynb", "replayed_agent.cassette.json"):
        shutil.copy(PROJECT / name, tmp_path / name)
    saved = (tmp_path / "replayed_agent.ipynb").read_text()
    run = run_notebook(tmp_path / "replayed_agent.ipynb", env={"MEOWGENT_CASSETTE_MODE": "replay"})
    assert run.cells == (
        AgentCell(
            index=2,
            source="%%agent --new -o result\nUse the add tool: what is 19 + 23?",
            prompt="Use the add tool: what is 19 + 23?",
            answer="The sum of 19 and 23 is 42.",
            turns=2,
            stopped="answer",
            results=(ToolRun("add", {"a": 19, "b": 23}, "ok", "42"),),
            transcript="[tool] add(a=19, b=23) -> done\n  42\nThe sum of 19 and 23 is 42.",
        ),
    )
    assert run.answers == ["The sum of 19 and 23 is 42."]
    assert run.calls == [("add", {"a": 19, "b": 23})]
    assert [r.output for r in run.results] == ["42"]
    # The notebook ran as it would without the helper: same counts, same outputs; nothing saved.
    code = [cell for cell in run.notebook.cells if cell.cell_type == "code"]
    reference = [cell for cell in nbformat.reads(saved, as_version=4).cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == [1, 2, 3]
    assert [[o.get("data", {}).get("text/plain") for o in c.outputs] for c in code] == [
        [o.get("data", {}).get("text/plain") for o in c.outputs] for c in reference
    ]
    assert (tmp_path / "replayed_agent.ipynb").read_text() == saved


def test_several_agent_cells_a_denial_and_a_failing_cell(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Two cells"),
        nbformat.v4.new_code_cell(
            "%load_ext meowgent_nb\nfrom meowgent_nb import tool\nfrom meowgent_nb.testing import scripted_model, tool_call\n\n"
            "@tool(approval=True)\ndef delete(path: str) -> str:\n    return 'deleted ' + path\n\n"
            "model = scripted_model(tool_call('delete', path='a.txt'), 'It was not deleted.', 'Hello {name}.')\n"
            "name = 'Ada'"
        ),
        nbformat.v4.new_code_cell("%%agent --model-object model\nDelete a.txt."),
        nbformat.v4.new_code_cell("print('between')"),
        nbformat.v4.new_code_cell("%%agent --model-object model\n# NBVAL_IGNORE_OUTPUT\nGreet {name}."),
        nbformat.v4.new_code_cell("1 / 0"),
    ]
    nbformat.write(nb, tmp_path / "two.ipynb")
    with pytest.raises(CellExecutionError) as error:
        run_notebook(tmp_path / "two.ipynb")
    assert "ZeroDivisionError" in str(error.value)
    run = run_notebook(tmp_path / "two.ipynb", allow_errors=True, env={"MEOWGENT_APPROVE": "deny"})
    assert [(c.index, c.prompt, c.answer) for c in run.cells] == [
        (2, "Delete a.txt.", "It was not deleted."),
        (4, "Greet Ada.", "Hello {name}."),
    ]
    assert [(r.name, r.kind) for r in run.results] == [("delete", "denied")]
    assert run.cells[0].transcript.startswith(
        "[tool] delete(path='a.txt') -> denied (by policy: approve='deny')\n"
    )
    assert run.notebook.cells[5].outputs[0]["ename"] == "ZeroDivisionError"
    assert not json.loads((tmp_path / "two.ipynb").read_text())["cells"][2]["outputs"]  # nothing saved
