"""``%tools eval`` in a real kernel: rows reach the cell while the eval still runs (issue 15).

The second case's model waits until a file exists, and only the test creates it, once it has
seen the first row in the cell: so the row was shown before the eval could end. Headless runs
(``allow_stdin`` false, as nbval sends) get the report alone, as before.
"""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import Kernel, Run

SETUP = '''
%load_ext meowgent_nb
import asyncio, json, pathlib
from meowgent_nb import EvalCase, FunctionModel, tool

@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b

from meowgent_nb.testing import tool_call as call

async def answer(messages, tools):
    prompt = messages[-1]["content"]
    if prompt == "1+2":
        return call("add", a=1, b=2)
    try:
        while not pathlib.Path("release").exists():  # the test creates it
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        pathlib.Path("cancelled").write_text(prompt)
        raise
    return "Hello." if prompt == "Hi" else call("add", a=2, b=2)

model = FunctionModel(answer)
cases = [EvalCase("1+2", "add", {"a": 1}), EvalCase("Hi", None, category="refusal"), EvalCase("2+2", "add")]
'''
REPORT = """\
prompt  category  expected  chosen  result
1+2     -         add       add     pass
Hi      refusal   (none)    (none)  pass
2+2     -         add       add     pass

category       cases  passed  accuracy
-              2      2       100%
refusal        1      1       100%
tool cases     2      2       100%
no-tool cases  1      1       100%
all            3      3       100%

metric                                             count  of  rate
tool choice (of tool cases)                        2      2   100%
argument accuracy (of right tool named)            2      2   100%
execution success (of calls)                       2      2   100%
hallucination (of calls)                           0      2   0%
called when no tool was needed (of no-tool cases)  0      1   0%

tools block: ~150 tokens (estimated: 599 characters / 4)"""
FIRST_ROW = "Tool eval: 1/3 cases done\nprompt  category  expected  chosen  result\n1+2     -         add       add     pass"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eval-kernel")
    kernel = Kernel(str(folder))
    kernel.folder = folder
    try:
        kernel.ok(SETUP)
        yield kernel
    finally:
        kernel.shutdown()


@pytest.fixture
def fresh(kernel):
    for name in ("release", "cancelled"):
        (kernel.folder / name).unlink(missing_ok=True)
    return kernel


def view_texts(run: Run) -> list[tuple[str, str]]:
    return [
        (m["msg_type"], m["content"]["data"]["text/plain"])
        for m in run.messages
        if m["msg_type"] in ("display_data", "update_display_data", "execute_result")
    ]


def release_on_first_row(kernel: Kernel, run: Run, msg: dict) -> None:
    if msg["msg_type"] == "update_display_data" and msg["content"]["data"]["text/plain"] == FIRST_ROW:
        (kernel.folder / "release").write_text("")


def test_the_first_row_shows_before_the_eval_ends(fresh):
    run = fresh.ok("%tools eval cases --model-object model", hook=release_on_first_row)
    texts = view_texts(run)
    assert texts[:2] == [("display_data", "Tool eval: 0/3 cases done"), ("update_display_data", FIRST_ROW)]
    # The eval could only go on once the test saw the first row and released the second case.
    assert texts[-2:] == [
        ("update_display_data", "Tool eval: 3/3 cases done, 3 passed"),
        ("execute_result", REPORT),
    ]
    ids = {m["content"]["transient"]["display_id"] for m in run.messages if "transient" in m["content"]}
    assert len(ids) == 1  # one view, updated in place
    result = run.of_type("execute_result")[0]["data"]["text/html"]
    assert result.startswith('<div class="meowgent-eval-report"><strong>Tool eval: 3 of 3 passed</strong>')


def test_headless_the_report_is_the_only_output(fresh):
    (fresh.folder / "release").write_text("")
    run = fresh.ok("%tools eval cases --model-object model", allow_stdin=False)
    assert view_texts(run) == [("execute_result", REPORT)]


def interrupt_on_first_row(kernel: Kernel, run: Run, msg: dict) -> None:
    if msg["msg_type"] == "update_display_data" and msg["content"]["data"]["text/plain"] == FIRST_ROW:
        kernel.km.interrupt_kernel()


def test_an_interrupt_stops_the_waiting_model_and_keeps_the_rows(fresh):
    run = fresh.execute("%tools eval cases --model-object model", hook=interrupt_on_first_row)
    assert (run.reply["status"], run.reply["ename"]) == ("error", "KeyboardInterrupt")
    assert view_texts(run)[-1] == (
        "update_display_data",
        FIRST_ROW.replace("Tool eval: 1/3 cases done", "Tool eval stopped after 1/3 cases: interrupted"),
    )
    # The model's stream was cancelled before the cell ended: nothing generates on in the background.
    assert (fresh.folder / "cancelled").read_text() == "Hi"
    assert fresh.ok("print('next cell')").stdout == "next cell\n"
