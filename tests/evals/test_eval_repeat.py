"""``repeat``: each case asked N times; pass^N, the pass count per case, and the flips (issue 36)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from meowgent_nb import EvalCase, EvalReport, FunctionModel, ScriptedModel, evaluate, tool
from meowgent_nb.evals.evaluation import EvalRow
from meowgent_nb.recording.cassette import cassette_model
from tests.support.tool_calls import call


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


CASES = [
    EvalCase("What is 1 plus 2?", "add", {"a": 1, "b": 2}, "sums"),
    EvalCase("Add 3 and 4", "add", {"a": 3, "b": 4}, "sums"),
    EvalCase("Hello!", None, category="chat"),
    EvalCase("Sum 5 and 6", "add", {"a": 5}, "sums"),
]
# Three runs of each case, case by case.
ANSWERS = [
    call("add", a=1, b=2), call("add", a=1, b=2), call("add", a=1, b=2),  # 3 of 3
    call("add", a=3, b=4), call("add", a=3, b=5), call("add", a=3, b=4),  # 2 of 3: a flip
    "Hi!", call("add", a=0, b=0), "Hello.",  # 2 of 3: a flip
    "No.", "No.", "No.",  # 0 of 3
]  # fmt: skip

TEXT = """\
prompt             category  expected  chosen  passes  result
What is 1 plus 2?  sums      add       add     3/3     pass
Add 3 and 4        sums      add       add     2/3     FAIL: argument b: expected 4, got 5
Hello!             chat      (none)    add     2/3     FAIL: expected no tool, chose add
Sum 5 and 6        sums      add       (none)  0/3     FAIL: expected add, chose none

pass^3: 1 of 4 cases passed all 3 runs; 2 flipped (passed in some runs, failed in others): 'Add 3 and 4', 'Hello!'

category       cases  passed  accuracy
sums           3      1       33%
chat           1      0       0%
tool cases     3      1       33%
no-tool cases  1      0       0%
all            4      1       25%

metric                                             count  of  rate
tool choice (of tool cases)                        6      9   67%
argument accuracy (of right tool named)            5      6   83%
execution success (of calls)                       7      7   100%
hallucination (of calls)                           0      7   0%
called when no tool was needed (of no-tool cases)  1      3   33%

tools block: ~162 tokens (estimated: 648 characters / 4)"""


def test_each_case_runs_n_times_and_passes_only_when_every_run_passes():
    model = ScriptedModel(ANSWERS)
    report = evaluate(CASES, tools=[add], model=model, repeat=3)
    assert len(model.requests) == 12
    # each case's three runs were asked one after the other, as the same request
    assert [r.messages[-1]["content"] for r in model.requests] == [c.prompt for c in CASES for _ in range(3)]
    assert report.passes == [3, 2, 2, 0]
    assert [row.passed for row in report.rows] == [True, False, False, False]
    assert [[row.passed for row in runs] for runs in report.runs] == [
        [True, True, True], [True, False, True], [True, False, True], [False, False, False]
    ]  # fmt: skip
    # a failed case shows its first failed run, so the row says why
    assert [row.arguments for row in report.rows[:2]] == [{"a": 1, "b": 2}, {"a": 3, "b": 5}]
    assert [row.prompt for row in report.flips] == ["Add 3 and 4", "Hello!"]
    assert report.to_text() == TEXT
    assert repr(report) == "EvalReport(cases=4, passed=1)"


def test_the_summary_counts_pass_k_per_case_and_every_run_for_the_call_figures():
    summary = evaluate(CASES, tools=[add], model=ScriptedModel(ANSWERS), repeat=3).summary()
    assert summary["all"] == {"cases": 4, "passed": 1, "accuracy": 0.25}
    assert summary["by_category"]["sums"] == {"cases": 3, "passed": 1, "accuracy": 1 / 3}
    assert (summary["repeat"], summary["runs"], summary["flips"]) == (
        3,
        {"cases": 12, "passed": 7, "accuracy": 7 / 12},
        ["Add 3 and 4", "Hello!"],
    )
    assert summary["tool_choice"] == {"cases": 9, "passed": 6, "accuracy": 6 / 9}
    assert summary["called_without_need"] == {"count": 1, "of": 3, "rate": 1 / 3}


def test_the_html_has_a_passes_column_and_says_pass_k_in_its_title():
    html = evaluate(CASES, tools=[add], model=ScriptedModel(ANSWERS), repeat=3).to_html()
    assert html.startswith(
        '<div class="meowgent-eval-report"><strong>Tool eval: 1 of 4 passed all 3 runs</strong>'
    )
    assert '<th style="text-align: left">arguments</th><th style="text-align: left">passes</th>' in html
    assert (
        '<td style="text-align: left">2/3</td><td style="text-align: left"><span class="meowgent-eval-fail"'
        in html
    )
    assert (
        '<div class="meowgent-eval-line">pass^3: 1 of 4 cases passed all 3 runs; 2 flipped (passed in some runs,'
        " failed in others): &#x27;Add 3 and 4&#x27;, &#x27;Hello!&#x27;</div>"
    ) in html


def test_every_run_is_handed_on_as_it_finishes():
    seen = []
    evaluate(CASES[:2], tools=[add], model=ScriptedModel(ANSWERS[:6]), repeat=3,
             on_row=lambda row, done, total: seen.append((row.prompt, row.passed, done, total)))  # fmt: skip
    assert seen == [
        ("What is 1 plus 2?", True, 1, 6), ("What is 1 plus 2?", True, 2, 6), ("What is 1 plus 2?", True, 3, 6),
        ("Add 3 and 4", True, 4, 6), ("Add 3 and 4", False, 5, 6), ("Add 3 and 4", True, 6, 6),
    ]  # fmt: skip


def test_repeated_runs_are_recorded_and_replay_run_for_run_from_a_cassette(tmp_path):
    answers = iter(ANSWERS)
    path = str(tmp_path / "repeat.cassette.json")
    live = cassette_model(path, "record", lambda: FunctionModel(lambda m, t: next(answers)), name="m")
    recorded = evaluate(CASES, tools=[add], model=live, repeat=3)
    replayed = evaluate(CASES, tools=[add], model=cassette_model(path, "replay", None, name="m"), repeat=3)
    assert recorded.passes == replayed.passes == [3, 2, 2, 0]
    assert replayed.to_text() == TEXT


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, "3"])
def test_repeat_must_be_a_positive_whole_number(bad):
    with pytest.raises(ValueError) as caught:
        evaluate(CASES, tools=[add], model=ScriptedModel(ANSWERS), repeat=bad)
    assert str(caught.value) == f"repeat must be a whole number of at least 1; got {bad!r}"


def test_a_report_made_by_hand_needs_whole_runs_per_case():
    row = EvalRow("p", "", None, None, {}, True, "", 0.0)
    assert EvalReport([row, row], repeat=2).passes == [2]
    with pytest.raises(ValueError) as caught:
        EvalReport([row, row, row], repeat=2)
    assert str(caught.value) == "repeat must be a whole number of at least 1 dividing the 3 rows; got 2"


def test_tools_eval_magic_repeat(ip):
    ip.user_ns.update(r_add=add, r_model=ScriptedModel(ANSWERS), r_cases=CASES)
    report = ip.run_line_magic("tools", "eval r_cases --model-object r_model --repeat 3")
    assert report.to_text() == TEXT
    with pytest.raises(UsageError) as error:
        ip.run_line_magic("tools", "eval r_cases --model-object r_model --repeat 0")
    assert str(error.value) == "%tools eval --repeat: give a number of runs per case of at least 1; got 0"
