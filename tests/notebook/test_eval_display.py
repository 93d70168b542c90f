"""`run_eval`, the live view of ``%tools eval``, in a real IPython shell: what each display says.

`capture_output` records every display and display update the shell publishes, so the order and
the exact texts of the view are checked here; tests/notebook/test_eval_kernel.py checks that a
real kernel sends them to the cell while the eval still runs.
"""

from __future__ import annotations

import _thread
import asyncio
import signal
import threading

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb import EvalCase, FunctionModel, MeowgentError, ScriptedModel, tool
from meowgent_nb.notebook.views.eval_display import EvalProgress, run_eval
from tests.support.tool_calls import call


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


CASES = [EvalCase("1+2", "add", {"a": 1}), EvalCase("Hi", None, category="refusal"), EvalCase("2+2", "add")]
ROW_1 = "1+2     -         add       add     pass"
ROW_2 = "Hi      refusal   (none)    (none)  pass"
ROW_3 = "2+2     -         add       add     pass"
HEADER = "prompt  category  expected  chosen  result"


def texts(out) -> list[tuple[bool, str]]:
    return [(o.update, o.data["text/plain"]) for o in out.outputs]


def test_live_the_view_is_shown_then_updated_once_per_row_then_shrinks_to_one_line(ip):
    model = ScriptedModel([call("add", a=1, b=2), "Hello.", call("add", a=2, b=3)])
    with capture_output() as out:
        report = run_eval(CASES, tools=[add], model=model, live=True, tick=None)
    assert texts(out) == [
        (False, "Tool eval: 0/3 cases done"),
        (True, f"Tool eval: 1/3 cases done\n{HEADER}\n{ROW_1}"),
        (True, f"Tool eval: 2/3 cases done\n{HEADER}\n{ROW_1}\n{ROW_2}"),
        (True, f"Tool eval: 3/3 cases done\n{HEADER}\n{ROW_1}\n{ROW_2}\n{ROW_3}"),
        (True, "Tool eval: 3/3 cases done, 3 passed"),
    ]
    assert len({o.transient["display_id"] for o in out.outputs}) == 1  # one display, updated in place
    assert [row.passed for row in report.rows] == [True, True, True]
    first, last = out.outputs[0].data["text/html"], out.outputs[-1].data["text/html"]
    assert first.startswith(
        '<div class="meowgent-eval-live"><strong>Tool eval: 0/3 cases done</strong> <span'
    )
    assert "<code>1+2</code>" in first and "running...</span>" in first  # the case being asked
    assert last.startswith(
        '<div class="meowgent-eval-live"><strong>Tool eval: 3/3 cases done, 3 passed</strong>'
    )
    assert "<table" not in last  # the report itself is the magic's value


def test_with_repeat_the_view_counts_runs_and_shows_each_runs_row(ip):
    model = ScriptedModel([call("add", a=1, b=2), "No.", "Hello.", "Hello."])
    with capture_output() as out:
        report = run_eval(CASES[:2], tools=[add], model=model, live=True, tick=None, repeat=2)
    failed = "1+2     -         add       (none)  FAIL: expected add, chose none"
    assert texts(out) == [
        (False, "Tool eval: 0/4 runs done"),
        (True, f"Tool eval: 1/4 runs done\n{HEADER}\n{ROW_1}"),
        (True, f"Tool eval: 2/4 runs done\n{HEADER}\n{ROW_1}\n{failed}"),
        (True, f"Tool eval: 3/4 runs done\n{HEADER}\n{ROW_1}\n{failed}\n{ROW_2}"),
        (True, f"Tool eval: 4/4 runs done\n{HEADER}\n{ROW_1}\n{failed}\n{ROW_2}\n{ROW_2}"),
        (True, "Tool eval: 4/4 runs done, 3 passed"),
    ]
    assert report.passes == [1, 2]


def test_the_running_row_is_the_next_case():
    view = EvalProgress(CASES)
    assert "<code>1+2</code>" in view.to_html()
    view.add(run_eval(CASES[:1], tools=[add], model=ScriptedModel([call("add", a=1)]), live=False).rows[0])
    html = view.to_html()
    assert html.count("<tr>") == 3  # header, the finished row, the running one
    assert '<code>Hi</code></td><td style="text-align: left">refusal</td>' in html
    assert view.progress == "1/3"


def test_headless_shows_nothing_and_returns_the_same_report(ip):
    with capture_output() as out:
        report = run_eval(
            CASES, tools=[add], model=ScriptedModel([call("add", a=1), "Hi.", call("add", a=2)]), live=False
        )
    assert out.outputs == []
    assert [row.chosen for row in report.rows] == ["add", None, "add"]


def test_invalid_cases_fail_before_anything_is_shown(ip):
    with capture_output() as out, pytest.raises(ValueError) as error:
        run_eval([EvalCase("x", "mul")], tools=[add], model=ScriptedModel(), live=True)
    assert str(error.value) == "Invalid eval cases:\n- case 1: no tool named 'mul' (tools: add)"
    assert out.outputs == []


def test_a_model_error_leaves_the_finished_rows_and_says_why_it_stopped(ip):
    with capture_output() as out, pytest.raises(MeowgentError) as error:
        run_eval(CASES, tools=[add], model=ScriptedModel([call("add", a=1, b=2)]), live=True, tick=None)
    assert str(error.value).startswith("ScriptedModel 'scripted' has no answer left")
    assert texts(out)[-1] == (True, f"Tool eval stopped after 1/3 cases: ModelError\n{HEADER}\n{ROW_1}")
    assert "running..." not in out.outputs[-1].data["text/html"]


@pytest.fixture
def kernel_sigint():
    """SIGINT raises KeyboardInterrupt, as in a kernel, whatever an earlier test or the runner set.

    `_thread.interrupt_main` does nothing while SIGINT is ignored or at its default: the cell would
    then wait for a model that never answers (this test once hung to the 300-s guard in a full run).
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupt_stops_the_model_and_the_eval_thread(ip, kernel_sigint):
    cancelled = threading.Event()

    async def answer(messages, tools):
        if messages[-1]["content"] == "1+2":
            return call("add", a=1, b=2)
        _thread.interrupt_main()  # what a kernel interrupt does to the cell's thread
        try:
            await asyncio.Event().wait()  # a model that would never answer
        finally:
            cancelled.set()

    before = {t.name for t in threading.enumerate()}
    with capture_output() as out, pytest.raises(KeyboardInterrupt):
        run_eval(CASES, tools=[add], model=FunctionModel(answer), live=True, tick=None)
    assert cancelled.is_set()  # the eval's task was cancelled, so the model's stream was closed
    assert "meowgent-eval" not in {t.name for t in threading.enumerate()} - before
    assert texts(out)[-1] == (True, f"Tool eval stopped after 1/3 cases: interrupted\n{HEADER}\n{ROW_1}")
