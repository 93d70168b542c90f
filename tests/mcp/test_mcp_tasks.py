"""Tools that run as MCP tasks (2025-11-25), against tests/mcp_servers/task_server.py in its task mode.

The server answers the task requests on the wire (the SDK has no server side for them): a task
that completes, one that fails with a hostile message, one that never ends (cancelled when the
call is given up), and one answered at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from meowgent_nb import Agent, Approved, ScriptedModel
from meowgent_nb.mcp import McpServerError, McpToolbox, McpToolError
from meowgent_nb.mcp.client._tasks import _interval
from tests.support.tool_calls import call

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "task_server.py")
STEPS = [
    "working: queued",
    "working: frame 1 of 3",
    "working: frame 2 of 3",
    "working: frame 3 of 3",
    "completed: all frames done",
]


@pytest.fixture(scope="module")
def box():
    with McpToolbox("tasks", [sys.executable, SERVER, "tasks"], approval={"render": False}) as box:
        yield box


class Watcher:
    """Approves every call and keeps what its cards were told."""

    def __init__(self):
        self.lines = []

    async def approve(self, requests):
        return [Approved("by the test") for _ in requests]

    def progress(self, running, progress):
        self.lines.append(progress.text())


def cancelled(box) -> list[str]:
    return json.loads(box["tasks_cancelled"].run({}))


def test_a_session_that_can_run_tasks_offers_the_tools_that_need_them(box):
    assert box.names == [
        "tasks_render",
        "tasks_resize",
        "tasks_crop",
        "tasks_rotate",
        "tasks_render_fails",
        "tasks_render_hangs",
        "tasks_render_at_once",
        "tasks_render_odd",
        "tasks_cancelled",
    ]
    assert box.skipped == {}
    assert [name for name, tool in box._tools.items() if tool.runs_as_task] == [
        "tasks_render",
        "tasks_render_fails",
        "tasks_render_hangs",
        "tasks_render_at_once",
        "tasks_render_odd",
    ]
    assert box["tasks_resize"].run({"degrees": 90}) == "resize by 90"  # "optional": a plain call


def test_a_task_runs_to_its_result_and_its_status_lines_reach_the_card_in_order(box):
    watcher = Watcher()
    agent = Agent(ScriptedModel([call("tasks_render", degrees=90), "done"]), tools=box, approver=watcher)
    result = agent.run("render it")
    assert [r.output for r in result.tool_results] == ["rendered by 90"]
    assert watcher.lines[0] == "working: queued"
    assert all(line in STEPS for line in watcher.lines)  # nothing else, and in the server's order:
    assert watcher.lines == sorted(watcher.lines, key=STEPS.index)
    assert len(watcher.lines) == len(set(watcher.lines))  # a status already told is not told again


def test_the_same_task_in_plain_python_returns_its_value_with_nothing_to_show(box):
    assert box["tasks_render"].run({"degrees": 7}) == "rendered by 7"


def test_a_failed_task_is_the_tools_error_with_the_servers_message_on_one_bounded_line(box):
    with pytest.raises(McpToolError) as caught:
        box["tasks_render_fails"].run({"degrees": 1})
    message = str(caught.value)
    assert message.startswith(
        "the task of render_fails failed on the server: <b>out of memory</b> frame 2 " + "x" * 100
    )
    assert message.endswith("x\u2026")
    assert (
        "\n" not in message and len(message) == len("the task of render_fails failed on the server: ") + 200
    )


def test_a_task_answered_at_once_is_used_as_it_is(box):
    assert box["tasks_render_at_once"].run({"degrees": 3}) == "rendered at once by 3"


def _wait_for_cancel(box, before: int) -> list[str]:
    for _ in range(50):
        now = cancelled(box)
        if len(now) > before:
            return now
        time.sleep(0.1)
    return cancelled(box)


def test_the_agents_time_limit_cancels_the_task_on_the_server(box):
    before = len(cancelled(box))
    agent = Agent(
        ScriptedModel([call("tasks_render_hangs", degrees=1), "done"]),
        tools=box,
        approver=Watcher(),
        tool_timeout=1,
    )
    started = time.monotonic()
    result = agent.run("render forever")
    assert time.monotonic() - started < 5
    assert result.tool_results[0].kind == "timeout"
    assert len(_wait_for_cancel(box, before)) == before + 1


def test_stop_cancels_the_task_on_the_server(box):
    before = len(cancelled(box))
    agent = Agent(
        ScriptedModel([call("tasks_render_hangs", degrees=1), "done"]), tools=box, approver=Watcher()
    )

    async def stopped_run():
        run = asyncio.ensure_future(agent.arun("render forever"))
        await asyncio.sleep(1.0)  # the task is on the server by now
        run.cancel()  # what Stop and an interrupt do to the run
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(stopped_run())
    assert len(_wait_for_cancel(box, before)) == before + 1


def test_a_closed_session_refuses_a_task_call_like_a_plain_one():
    with McpToolbox("tasks", [sys.executable, SERVER, "tasks"]) as box:
        render = box["tasks_render"]
    with pytest.raises(McpServerError) as caught:
        render.run({"degrees": 1})
    assert str(caught.value).startswith("the MCP server 'tasks' is not connected (it was closed or stopped)")


@pytest.mark.parametrize(
    ("suggested", "seconds"),
    [
        (0, 0.25),
        (-5, 0.25),
        (100, 0.25),
        (1000, 1.0),
        (2500, 2.5),
        (10**12, 5.0),
        (None, 1.0),
        ("10", 1.0),
        (True, 1.0),
        (float("nan"), 1.0),
        (float("inf"), 5.0),
    ],
)
def test_a_servers_poll_interval_is_kept_within_a_quarter_second_and_five_seconds(suggested, seconds):
    assert _interval(suggested) == seconds


def test_a_server_whose_answer_to_a_task_call_is_not_a_task_is_a_clear_error(box):
    with pytest.raises(McpServerError) as caught:
        box["tasks_render_odd"].run({"degrees": 1})
    assert str(caught.value) == (
        "the MCP server 'tasks' answered the task call to render_odd with something that is not a task:"
        " task.taskId: Input should be a valid string; task.status: Input should be 'working', 'input_required',"
        " 'completed', 'failed' or 'cancelled'; task.createdAt: Field required; task.lastUpdatedAt: Field required;"
        " task.ttl: Field required"
    )
