"""While a ``%%agent`` cell runs, the kernel's last status is busy, as JupyterLab's status bar shows it.

JupyterLab (>= 4.4) asks for a subshell when the cell's first widget shows and sends the button
clicks to it; the kernel answers each with busy, then idle. The status bar shows the last status
whatever its parent, so without more it said "Idle" while the cell ran. Here a real kernel is
driven the same way (tests/support/kernel_driver.py), and the status bar is read off IOPub in order.
"""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import Run, clicking, running_kernel

SETUP = '''
%load_ext meowgent_nb
import json, pathlib
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    pathlib.Path(path).write_text(text)
    return f"wrote {len(text)} characters to {path}"

def answers(path):
    call = json.dumps({"name": "write_file", "arguments": {"path": path, "text": "hi"}})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", "Written."])
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "busy", SETUP)


def statuses(run: Run) -> list[tuple[str, str]]:
    """(state, "cell" or the request type it answers) of every status on IOPub during the run, in order."""
    cell = run.messages[0]["parent_header"]["msg_id"]
    return [
        (
            m["content"]["execution_state"],
            "cell" if m["parent_header"]["msg_id"] == cell else m["parent_header"]["msg_type"],
        )
        for m in run.timeline
        if m["msg_type"] == "status"
    ]


def bar_when_the_answer_shows(run: Run) -> str:
    """What JupyterLab's status bar said when the finished transcript arrived: the last status before it."""
    cell = run.messages[0]["parent_header"]["msg_id"]
    last = max(
        i
        for i, m in enumerate(run.timeline)
        if m["msg_type"] == "update_display_data" and m["parent_header"]["msg_id"] == cell
    )
    return [m["content"]["execution_state"] for m in run.timeline[:last] if m["msg_type"] == "status"][-1]


def test_the_kernel_stays_busy_through_a_subshell_and_a_click_and_the_approval_works(kernel):
    kernel.ok("model = answers('busy.txt')")
    run = kernel.ok(
        "%%agent --model-object model --new\nWrite it", hook=clicking(("Approve", 0), subshell=True)
    )
    seen = statuses(run)
    assert seen[0] == ("busy", "cell") and seen[-1] == ("idle", "cell")
    foreign_idles = [i for i, (state, parent) in enumerate(seen) if state == "idle" and parent != "cell"]
    # ipykernel 7.4 handles a click sent to a subshell without a status; the subshell's request has one.
    assert [seen[i][1] for i in foreign_idles] == ["create_subshell_request"]
    assert all(seen[i + 1] == ("busy", "cell") for i in foreign_idles), (
        seen
    )  # the bar is back at Busy at once
    assert bar_when_the_answer_shows(run) == "busy"
    assert (
        kernel.ok("print(pathlib.Path('busy.txt').read_text())").stdout == "hi\n"
    )  # the click still ran the tool


def test_after_the_cell_other_requests_go_idle_as_usual(kernel):
    kernel.ok("model = answers('after.txt')")
    kernel.ok("%%agent --model-object model --new --approve allow\nWrite it")
    assert (
        kernel.create_subshell()
    )  # a control request with no cell running: nothing is added to its statuses
    run = kernel.ok("1 + 1")
    assert statuses(run) == [
        ("busy", "create_subshell_request"),
        ("idle", "create_subshell_request"),
        ("busy", "cell"),
        ("idle", "cell"),
    ]
