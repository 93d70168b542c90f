"""The regression gate: ``%tools eval --baseline FILE`` and `assert_eval_baseline` (issue 36).

The first run records each case's outcome to FILE; a later run fails naming the cases that got
worse. The last tests replay the embedded model's recorded answers (``gate.cassette.json``): a
docstring edit that dropped the unit symbols is caught, with no model.
"""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError

from meowgent_nb import EvalCase, ScriptedModel, evaluate, tool
from meowgent_nb.evals._tool_block import tool_digests
from meowgent_nb.evals.baseline import BaselineError, EvalRegression, check_baseline
from meowgent_nb.recording.cassette import cassette_model
from meowgent_nb.testing import assert_eval_baseline
from tests.evals import gate_tools
from tests.support.tool_calls import call


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(name="add")
def add_vaguer(a: int, b: int) -> int:
    """Add."""
    return a + b


CASES = [
    EvalCase("What is 1 plus 2?", "add", {"a": 1, "b": 2}, "sums"),
    EvalCase("Add 3 and 4", "add", {"a": 3, "b": 4}, "sums"),
    EvalCase("Hello!", None, category="chat"),
]
GOOD = [call("add", a=1, b=2), call("add", a=3, b=4), "Hi!"]


def run(answers, tool=add, cases=CASES, repeat=1):
    return evaluate(cases, tools=[tool], model=ScriptedModel(answers), repeat=repeat)


def test_the_first_run_records_each_cases_outcome_with_the_model_and_the_tools_digests(tmp_path):
    path = tmp_path / "evals" / "baseline.json"  # its folder is made too
    report = run(["No.", call("add", a=3, b=4), "Hi!"])
    check = check_baseline(report, path)
    assert (check.recorded, check.line()) == (True, f"baseline recorded to {path}: 3 cases, 2 passed")
    assert json.loads(path.read_text()) == {
        "format": "meowgent-eval-baseline/1",
        "model": "scripted",
        "repeat": 1,
        "tools": {"add": tool_digests([add])["add"]},
        "cases": [
            {"prompt": "What is 1 plus 2?", "category": "sums", "tool": "add", "arguments": {"a": 1, "b": 2},
             "runs": 1, "passes": 0, "reason": "expected add, chose none"},
            {"prompt": "Add 3 and 4", "category": "sums", "tool": "add", "arguments": {"a": 3, "b": 4},
             "runs": 1, "passes": 1, "reason": ""},
            {"prompt": "Hello!", "category": "chat", "tool": None, "arguments": {}, "runs": 1, "passes": 1, "reason": ""},
        ],
    }  # fmt: skip
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert report.baseline is check
    assert report.to_text().split("\n\n")[1] == f"baseline recorded to {path}: 3 cases, 2 passed"


def test_the_same_outcomes_again_pass_and_say_so(tmp_path):
    path = tmp_path / "baseline.json"
    check_baseline(run(GOOD), path)
    written = path.read_bytes()
    check = check_baseline(run(GOOD), path)
    assert (check.recorded, check.worse, check.better, check.line()) == (
        False,
        [],
        [],
        f"baseline {path}: 0 worse, 0 better",
    )
    assert path.read_bytes() == written  # compared, never rewritten


def test_a_docstring_edit_that_made_a_case_fail_is_named_with_why_and_what_changed(tmp_path):
    path = tmp_path / "baseline.json"
    check_baseline(run([call("add", a=1, b=2), call("add", a=3, b=5), "Hi!"]), path)  # the second fails
    worse = run([call("add", a=1, b=20), call("add", a=3, b=4), "Hi!"], tool=add_vaguer)
    with pytest.raises(EvalRegression) as caught:
        check_baseline(worse, path)
    assert str(caught.value) == (
        f"1 case got worse than the baseline {path}:\n"
        "- 'What is 1 plus 2?': 1 of 1 runs passed before, 0 of 1 now: argument b: expected 2, got 20\n"
        "  better: 'Add 3 and 4': 0 of 1 runs passed before, 1 of 1 now\n"
        "  changed since the baseline (description or schema): add\n"
        f"Fix the tool's description or schema; or, if the change is meant, delete {path} and run again to record a new baseline."
    )
    assert isinstance(caught.value, AssertionError)  # a failed assertion in a plain pytest test
    assert caught.value._render_traceback_()[0].startswith("\x1b[31mEvalRegression\x1b[0m: 1 case got worse")
    assert worse.baseline is caught.value.check
    assert worse.to_text().split("\n\n")[1] == f"baseline {path}: 1 worse, 1 better; changed since: add"


@pytest.mark.parametrize(
    ("before", "now", "verdict"),
    [
        ([True, True, True], [True, False, True], "worse"),  # pass^3 lost: it flips now
        ([True, False, True], [False, False, True], "worse"),  # failed both times, but fewer runs pass
        ([False, False, True], [True, False, True], "better"),
        ([True, False, True], [False, True, True], "same"),  # other runs, the same share
    ],
)
def test_with_repeats_a_smaller_share_of_passing_runs_is_worse(tmp_path, before, now, verdict):
    path = tmp_path / "baseline.json"
    answers = lambda runs: [call("add", a=1, b=2 if ok else 0) for ok in runs]  # noqa: E731
    check_baseline(run(answers(before), cases=CASES[:1], repeat=3), path)
    report = run(answers(now), cases=CASES[:1], repeat=3)
    if verdict == "worse":
        with pytest.raises(EvalRegression) as caught:
            check_baseline(report, path)
        assert str(caught.value).splitlines()[1] == (
            f"- 'What is 1 plus 2?': {sum(before)} of 3 runs passed before, {sum(now)} of 3 now:"
            " argument b: expected 2, got 0"
        )
    else:
        check = check_baseline(report, path)
        assert (len(check.worse), len(check.better)) == (0, verdict == "better")


def test_a_baseline_of_one_run_compares_with_a_run_of_three_by_share(tmp_path):
    path = tmp_path / "baseline.json"
    check_baseline(run(GOOD[:1], cases=CASES[:1]), path)  # 1 of 1
    with pytest.raises(EvalRegression) as caught:  # 2 of 3 is a smaller share
        check_baseline(run([call("add", a=1, b=2)] * 2 + ["No."], cases=CASES[:1], repeat=3), path)
    assert "1 of 1 runs passed before, 2 of 3 now: expected add, chose none" in str(caught.value)


def test_a_case_is_known_by_its_prompt_tool_and_arguments(tmp_path):
    path = tmp_path / "baseline.json"
    check_baseline(run(GOOD), path)
    # The second case expects other arguments now: a new case, and the old one is gone.
    cases = [CASES[0], EvalCase("Add 3 and 4", "add", {"a": 3, "b": 40}), CASES[2], EvalCase("Bye", None)]
    report = evaluate(cases, tools=[add], model=ScriptedModel([GOOD[0], "No.", "Hi!", "Bye!"], name="other"))
    check = check_baseline(report, path)
    assert (check.worse, check.better, check.added, check.removed) == (
        [],
        [],
        ["Add 3 and 4", "Bye"],
        ["Add 3 and 4"],
    )
    assert check.line() == f"baseline {path}: 0 worse, 0 better, 2 new, 1 gone"
    assert check.details() == [
        "new (not in the baseline): 'Add 3 and 4'",
        "new (not in the baseline): 'Bye'",
        "gone (in the baseline only): 'Add 3 and 4'",
        "the baseline was recorded with the model 'scripted'; this run used 'other'",
    ]


def test_a_baseline_of_other_cases_is_an_error_not_a_pass(tmp_path):
    # Two evals sharing one file: the second would compare nothing and pass whatever happened.
    path = tmp_path / "baseline.json"
    check_baseline(run(GOOD[:2], cases=CASES[:2]), path)
    with pytest.raises(BaselineError) as caught:
        check_baseline(run(["No."], cases=CASES[2:]), path)
    assert str(caught.value) == (
        f"The eval baseline {path} holds none of this run's cases (1; it holds 2 others): give each list of cases"
        " a baseline file of its own, or delete this one to record these cases."
    )


def test_the_same_prompt_twice_is_two_cases_in_order(tmp_path):
    path = tmp_path / "baseline.json"
    twice = [CASES[2], CASES[2]]
    check_baseline(run(["Hi!", call("add", a=1, b=1)], cases=twice), path)  # pass, fail
    with pytest.raises(EvalRegression) as caught:
        check_baseline(run([call("add", a=1, b=1), "Hi!"], cases=twice), path)  # fail, pass
    assert str(caught.value).splitlines()[:3] == [
        f"1 case got worse than the baseline {path}:",
        "- 'Hello!': 1 of 1 runs passed before, 0 of 1 now: expected no tool, chose add",
        "  better: 'Hello!': 0 of 1 runs passed before, 1 of 1 now",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "Cannot read the eval baseline {path}: Expecting property name enclosed in double quotes: line 1 column 2 (char 1). Delete it to record a new one.",
        ),
        (
            '{"cases": []}',
            "{path} is not an eval baseline (its format is None, not 'meowgent-eval-baseline/1'): give another file, or delete it to record a new baseline there.",
        ),
        (
            "[1, 2]",
            "{path} is not an eval baseline (its format is 'list', not 'meowgent-eval-baseline/1'): give another file, or delete it to record a new baseline there.",
        ),
        (
            "passes=x",
            "The eval baseline {path} was changed by hand and cannot be read: cases.0.passes: Input should be a valid integer, unable to parse string as an integer. Undo the edit, or delete it to record a new baseline.",
        ),
        (
            "passes=5",
            "The eval baseline {path} was changed by hand and cannot be read: cases.0: Value error, passes (5) is more than runs (1). Undo the edit, or delete it to record a new baseline.",
        ),
        (
            "runs=0",
            "The eval baseline {path} was changed by hand and cannot be read: cases.0.runs: Input should be greater than or equal to 1. Undo the edit, or delete it to record a new baseline.",
        ),
        (
            "extra",
            "The eval baseline {path} was changed by hand and cannot be read: cases.0.note: Extra inputs are not permitted. Undo the edit, or delete it to record a new baseline.",
        ),
    ],
)
def test_a_file_that_is_no_baseline_names_the_field_and_the_fix(tmp_path, text, message):
    path = tmp_path / "baseline.json"
    check_baseline(run(GOOD), path)
    data = json.loads(path.read_text())
    if text == "passes=x":
        data["cases"][0]["passes"] = "x"
    elif text == "passes=5":
        data["cases"][0]["passes"] = 5
    elif text == "runs=0":
        data["cases"][0]["runs"] = 0
    elif text == "extra":
        data["cases"][0]["note"] = "mine"
    path.write_text(json.dumps(data) if "=" in text or text == "extra" else text)
    with pytest.raises(BaselineError) as caught:
        check_baseline(run(GOOD), path)
    assert str(caught.value) == message.format(path=path)


# --- from a recorded cassette: the embedded model's answers, no model ------------------------------


def replayed():
    return cassette_model(
        str(gate_tools.CASSETTE), "replay", None, name=gate_tools.MODEL, options=gate_tools.OPTIONS
    )


WORSE = (
    "- 'Convert 30 centimetres to inches.': 1 of 1 runs passed before, 0 of 1 now: argument from_unit:"
    " expected 'cm', got 'centimeters'; argument to_unit: expected 'in', got 'inches'"
)


def test_a_worsened_docstring_is_caught_from_a_recorded_baseline(tmp_path):
    path = tmp_path / "tools.baseline.json"
    cases, weather = gate_tools.CASES, gate_tools.get_weather
    first = assert_eval_baseline(cases, path, tools=[weather, gate_tools.convert], model=replayed())
    assert (first.baseline.recorded, [row.passed for row in first.rows]) == (True, [False, True, True])
    assert (
        assert_eval_baseline(
            cases, path, tools=[weather, gate_tools.convert], model=replayed()
        ).baseline.worse
        == []
    )
    with pytest.raises(EvalRegression) as caught:
        assert_eval_baseline(cases, path, tools=[weather, gate_tools.convert_worse], model=replayed())
    assert str(caught.value).splitlines() == [
        f"1 case got worse than the baseline {path}:",
        WORSE,
        "  changed since the baseline (description or schema): convert",
        f"Fix the tool's description or schema; or, if the change is meant, delete {path} and run again to record a new baseline.",
    ]


def test_tools_eval_baseline_fails_the_cell_after_showing_the_report(ip, tmp_path, capsys):
    path = tmp_path / "tools.baseline.json"
    ip.run_line_magic("config", "AgentMagics.cassette_mode = 'replay'")
    for name, value in gate_tools.OPTIONS.items():
        ip.run_line_magic("config", f"AgentMagics.{name} = {value!r}")
    ip.user_ns.update(
        get_weather=gate_tools.get_weather, convert=gate_tools.convert, g_cases=gate_tools.CASES
    )
    line = f"eval g_cases -m {gate_tools.MODEL} --cassette {gate_tools.CASSETTE} --baseline {path}"
    recorded = ip.run_line_magic("tools", line)
    assert recorded.lines() == [f"baseline recorded to {path}: 3 cases, 2 passed"]
    ip.user_ns["convert"] = gate_tools.convert_worse  # the docstring edit
    capsys.readouterr()
    with pytest.raises(EvalRegression) as caught:
        ip.run_line_magic("tools", line)
    assert str(caught.value).splitlines()[1] == WORSE
    shown = capsys.readouterr().out  # the report, shown before the error
    assert f"baseline {path}: 1 worse, 0 better; changed since: convert" in shown
    assert (
        "Convert 30 centimetres to inches.  parameters     convert      convert      FAIL: argument from_unit"
        in shown
    )


def test_tools_eval_baseline_that_is_no_baseline_is_a_usage_error(ip, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"format": "mine"}')
    ip.user_ns.update(b_add=add, b_model=ScriptedModel(GOOD), b_cases=CASES)
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", f"eval b_cases --model-object b_model --baseline {path}")
    assert str(caught.value) == (
        f"%tools eval --baseline: {path} is not an eval baseline (its format is 'mine', not"
        " 'meowgent-eval-baseline/1'): give another file, or delete it to record a new baseline there."
    )
