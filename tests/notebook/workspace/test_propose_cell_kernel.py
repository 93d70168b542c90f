"""``propose_cell`` in a real kernel, clicked as JupyterLab clicks: Insert below puts the code in
the ``%%agent`` cell's reply as a ``set_next_input`` payload (two inserted proposals in order, in
the one payload the frontends read); Not now, ``input()`` and a headless run insert nothing;
Stop ends the wait."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.support.kernel_driver import Kernel, Run, clicking, running_kernel

SETUP = """
%load_ext meowgent_nb
from meowgent_nb import ScriptedModel
from meowgent_nb.notebook.workspace import propose_cell_tool
from meowgent_nb.testing import tool_call
propose_cell = propose_cell_tool()
def proposing(*codes, answer="Done."):
    return ScriptedModel([*(tool_call("propose_cell", code=code) for code in codes), answer])
"""
FIRST = "df.groupby('city').temp.mean()"
SECOND = "df.plot(x='city', y='temp')"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "propose-cell", SETUP)


def payloads(run: Run) -> list[dict[str, Any]]:
    return run.reply["payload"]


def transcript(run: Run) -> list[str]:
    return run.panel_texts[-1].splitlines()


def test_insert_below_puts_the_code_in_the_cell_s_reply(kernel):
    kernel.ok(f"model = proposing({FIRST!r})")
    run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=clicking(("Insert below", 0)))
    assert payloads(run) == [{"source": "set_next_input", "text": FIRST, "replace": False}]
    assert transcript(run)[:2] == [
        f"[tool] propose_cell(code={FIRST!r}) -> done",
        "  inserted below the agent's cell",
    ]
    shown = kernel.ok("print(get_ipython().meowgent.last_result.proposed_cells)")
    assert (
        shown.stdout
        == f'[ProposedCell(code={FIRST!r}, inserted=True, outcome="inserted below the agent\'s cell", problem=None)]\n'
    )


def test_two_inserted_proposals_go_in_one_new_cell_in_order(kernel):
    kernel.ok(f"model = proposing({FIRST!r}, {SECOND!r})")

    def insert_each(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        shown = run.buttons.get("Insert below", [])
        while len(insert_each.clicked) < len(shown):
            insert_each.clicked.append(shown[len(insert_each.clicked)])
            kernel.click(insert_each.clicked[-1])

    insert_each.clicked = []
    run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=insert_each)
    assert payloads(run) == [{"source": "set_next_input", "text": f"{FIRST}\n\n{SECOND}", "replace": False}]
    assert len(insert_each.clicked) == 2


def test_not_now_inserts_nothing_and_tells_the_model(kernel):
    kernel.ok(f"model = proposing({FIRST!r})")
    run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=clicking(("Not now", 0)))
    assert payloads(run) == []
    assert transcript(run)[:2] == [
        f"[tool] propose_cell(code={FIRST!r}) -> done",
        "  not inserted: the person chose Not now",
    ]


def test_a_headless_run_inserts_nothing_and_the_transcript_keeps_the_proposal(kernel):
    kernel.ok(f"model = proposing({FIRST!r})")
    run = kernel.ok("%%agent --model-object model --new\nwhat next?", allow_stdin=False)
    assert payloads(run) == [] and "Insert below" not in run.buttons
    assert transcript(run) == [
        f"[tool] propose_cell(code={FIRST!r}) -> done",
        "  proposed; nobody to insert it in a headless run",
        "  proposed cell:",
        f"    {FIRST}",
        "Done.",
    ]
    shown = kernel.ok("print([c.code for c in get_ipython().meowgent.last_result.proposed_cells])")
    assert shown.stdout == f"[{FIRST!r}]\n"


def test_stop_ends_the_wait_and_nothing_is_inserted(kernel):
    kernel.ok(f"model = proposing({FIRST!r})")

    def stop(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if "Insert below" in run.buttons and "Stop" in run.buttons and not stop.done:
            stop.done = True
            kernel.click(run.buttons["Stop"][-1])

    stop.done = False
    run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=stop)
    assert payloads(run) == []
    assert transcript(run)[0] == f"[tool] propose_cell(code={FIRST!r}) -> interrupted while running"


@pytest.mark.parametrize(("answer", "inserted"), [("y", [FIRST]), ("", [])])
def test_a_frontend_without_widgets_asks_with_input(kernel, answer, inserted):
    kernel.ok(f"model = proposing({FIRST!r})")
    prompts = []

    def reply(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and not prompts:
            request = kernel.kc.get_stdin_msg(timeout=30)
            prompts.append(request["content"]["prompt"])
            kernel.kc.input(answer)

    run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=reply, frontend="console")
    assert prompts == ["Insert below? [y/N] "]
    assert f"The agent proposes this cell:\n{FIRST}\n" in run.stdout
    assert [p["text"] for p in payloads(run)] == inserted


def test_the_wait_is_the_approval_timeout_not_the_tool_s_time_limit(kernel):
    # A click after the tool's 1 s limit still counts (the person's time stands still); no click
    # at all ends at the approval timeout, inserting nothing.
    kernel.ok(
        f"model = proposing({FIRST!r})\n%config AgentMagics.tool_timeout = 1\n%config AgentMagics.approval_timeout = 3"
    )
    try:

        def late(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
            if "Insert below" in run.buttons and not late.done:
                late.done = True
                time.sleep(1.5)
                kernel.click(run.buttons["Insert below"][0])

        late.done = False
        run = kernel.ok("%%agent --model-object model --new\nwhat next?", hook=late)
        assert [p["text"] for p in payloads(run)] == [FIRST]
        kernel.ok(f"model = proposing({FIRST!r})")
        run = kernel.ok("%%agent --model-object model --new\nwhat next?")
        assert payloads(run) == []
        assert transcript(run)[:2] == [
            f"[tool] propose_cell(code={FIRST!r}) -> done",
            "  not inserted: no answer within 3 s",
        ]
    finally:
        kernel.ok("%config AgentMagics.tool_timeout = 30\n%config AgentMagics.approval_timeout = 600")
