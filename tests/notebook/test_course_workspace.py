"""Course notebook 8 (the notebook as the agent's workspace), run headless: its run_code calls run
only by a rule or by the person's decisions recorded in its cassette, whatever the policy says."""

from __future__ import annotations

from pathlib import Path

from meowgent_nb.testing import run_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK = NOTEBOOKS / "08_notebook_workspace.ipynb"
TRUSTED = {"MEOWGENT_TRUST_RULES": str(NOTEBOOKS / "approvals.toml")}  # as notebooks/conftest.py does

EDITED = "sales['revenue'] = sales['units'] * sales['price']"
PLOT = "sales.groupby('region')['revenue'].sum().plot.bar(title='Revenue by region', ylabel='revenue')"


def run_code_calls(run):
    return [(r.kind, r.output.splitlines()[0]) for r in run.results if r.name == "run_code"]


def test_a_policy_that_allows_everything_still_runs_the_persons_edit_from_the_cassette():
    run = run_notebook(
        NOTEBOOK, env={**TRUSTED, "MEOWGENT_APPROVE": "allow", "MEOWGENT_CASSETTE_MODE": "replay"}
    )
    assert [(cell.prompt.splitlines()[-1], cell.stopped) for cell in run.cells] == [
        ("Which was the best month in `sales`?", "answer"),
        ("What is in my notebook? Look at my variables.", "answer"),
        ("Which region sold the most units?", "answer"),
        ("Add a revenue column.", "answer"),
        ("Plot the revenue by region.", "answer"),
        ("What should I look at next?", "answer"),
    ]
    assert run_code_calls(run) == [
        ("ok", "Value:"),
        (
            "ok",
            f'(The person changed the arguments before approving; the call ran with {{"code": "{EDITED}"}}.)',
        ),
        ("ok", "Left open and shown: 1 figure ([image: image/png] each)"),
    ]
    assert run.cells[4].answer == (
        "North earned the most (985), then West (684) and South (666.5): the plot is on the call's card."
    )


def test_with_no_recorded_decisions_only_the_rules_read_only_call_runs():
    # Live (no cassette): nobody to ask and MEOWGENT_APPROVE=allow, yet run_code never runs on a
    # policy: the column and the plot are denied, and the stand-in says it did not run them.
    run = run_notebook(
        NOTEBOOK, env={**TRUSTED, "MEOWGENT_APPROVE": "allow", "MEOWGENT_CASSETTE_MODE": "off"}
    )
    denied = (
        "Denied: run_code runs only with a person's approval or a rule that allows it (a policy cannot"
        " approve it); allow it with a rule such as `%agent allow run_code risk=read-only`."
    )
    assert run_code_calls(run) == [("ok", "Value:"), ("denied", denied), ("denied", denied)]
    assert [run.cells[3].answer, run.cells[4].answer] == ["I did not run it. " + denied] * 2
