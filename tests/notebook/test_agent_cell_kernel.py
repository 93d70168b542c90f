"""`%%agent` cells in a real kernel: the input transformer's await, clicks, headless runs, interrupts."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.support.kernel_driver import Kernel, Run, clicking, running_kernel, shown

SETUP = '''
%load_ext meowgent_nb
import json, os, pathlib, time
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    pathlib.Path(path).write_text(text)
    return f"wrote {path}"

@tool(timeout=60)
def slow(seconds: float) -> str:
    """Sleep a while."""
    time.sleep(seconds)
    return "slept"

def answers(name, **arguments):
    call = json.dumps({"name": name, "arguments": arguments})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", "All done."])

def last():
    magics = get_ipython().magics_manager.registry["AgentMagics"]
    for r in magics.last_result.tool_results:
        print(r.kind, "|", r.output)
    print(magics.last_result.text)
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "agent-cell", SETUP)


def final_text(run: Run) -> str:
    """The transcript's last text/plain (the panel's displays are the widget ones)."""
    texts = [
        c["data"]["text/plain"]
        for c in run.of_type("display_data", "update_display_data")
        if not c["data"]["text/plain"].startswith("Approval needed")
    ]
    return texts[-1]


def final_html(run: Run) -> str:
    """The transcript's last text/html."""
    return [c["data"].get("text/html", "") for c in run.of_type("display_data", "update_display_data")][-1]


def test_an_agent_cell_waits_for_the_click_and_runs_the_approved_call(kernel):
    kernel.ok("model = answers('write_file', path='cell.txt', text='hi')")
    run = kernel.ok("%%agent --model-object model --new\nWrite hi to cell.txt", hook=clicking(("Approve", 0)))
    assert (
        kernel.ok("last(); print(open('cell.txt').read())").stdout == "ok | wrote cell.txt\nAll done.\nhi\n"
    )
    assert final_text(run) == (
        "[tool] write_file(path='cell.txt', text='hi') -> done (approved by you)\n  wrote cell.txt\nAll done."
    )


def test_deny_and_always_allow_across_two_cells(kernel):
    kernel.ok("model = answers('write_file', path='no.txt', text='x')")
    kernel.ok("%%agent --model-object model --new\nWrite", hook=clicking(("Deny", 0)))
    out = kernel.ok("last(); print(os.path.exists('no.txt'))").stdout
    assert out == "denied | Denied: the person did not approve this call.\nAll done.\nFalse\n"

    kernel.ok("model = answers('write_file', path='a1.txt', text='x')")
    kernel.ok("%%agent --model-object model --new\nWrite", hook=clicking(("Always allow", 0)))
    kernel.ok("model = answers('write_file', path='a2.txt', text='x')")
    second = kernel.ok("%%agent --model-object model --new\nWrite again")
    assert list(second.buttons) == ["Stop"]  # no approval buttons the second time
    assert kernel.ok("last()").stdout == "ok | wrote a2.txt\nAll done.\n"


def test_a_headless_cell_does_not_block(kernel):
    kernel.ok("model = answers('write_file', path='headless.txt', text='x')")
    run = kernel.ok("%%agent --model-object model --new\nWrite", allow_stdin=False)
    assert kernel.ok("last()").stdout == ("denied | Denied: no person to approve (headless run)\nAll done.\n")
    assert final_text(run).startswith(
        "[tool] write_file(path='headless.txt', text='x') -> denied (by policy: MEOWGENT_APPROVE=deny)\n"
    )


def test_an_interrupt_during_a_slow_tool_stops_the_cell_promptly(kernel):
    kernel.ok("model = answers('slow', seconds=20)")
    started: dict[str, Any] = {}

    def interrupt_once_running(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if "meowgent-status-running" in shown(run, msg) and not started:
            started["at"] = time.monotonic()
            k.km.interrupt_kernel()

    run = kernel.execute("%%agent --model-object model --new\nSleep", hook=interrupt_once_running)
    stopped_after = time.monotonic() - started["at"]
    assert run.reply["status"] == "error"  # the cell fails, so Run All stops here
    assert run.reply["ename"] == "RunInterrupted"
    assert run.reply["traceback"] == [
        "\x1b[31mRunInterrupted\x1b[0m: stopped by an interrupt after 1 turn, 1 tool call. The conversation keeps"
        " what was said; the next %%agent cell continues it (--new starts over).",
    ]  # one line, and the transcript above it does not say it again
    assert final_text(run) == "[tool] slow(seconds=20) -> interrupted while running"
    assert "stopped by an interrupt" not in final_html(run)
    assert stopped_after < 5, stopped_after
    history = kernel.ok(
        "for m in get_ipython().magics_manager.registry['AgentMagics'].messages: print(m['role'], '|', m['content'])"
    ).stdout
    assert history == (
        "user | Sleep\n"
        'assistant | <tool_call>{"name": "slow", "arguments": {"seconds": 20}}</tool_call>\n'
        'user | <tool_response name="slow">\nError: interrupted before it finished.\n</tool_response>\n'
        "Use these results to answer the user's question in plain text.\n"
    )
    assert kernel.ok("print(1 + 1)").stdout == "2\n"


def test_an_interrupt_during_a_slow_tool_stops_an_awaited_agent_run_promptly(kernel):
    # README's way for Python code in a cell: `await agent.arun(...)`, without the magic's help.
    kernel.ok("from meowgent_nb import Agent\nagent = Agent(answers('slow', seconds=20), tools=[slow])")
    interrupted: dict[str, float] = {}

    def interrupt_a_second_later(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and "go" in msg["content"]["text"] and not interrupted:

            def interrupt() -> None:
                interrupted["at"] = time.monotonic()
                k.km.interrupt_kernel()

            threading.Timer(1.0, interrupt).start()

    run = kernel.execute(
        "print('go', flush=True)\nr = await agent.arun('Sleep')", hook=interrupt_a_second_later
    )
    stopped_after = time.monotonic() - interrupted["at"]
    assert run.reply["status"] == "error"
    assert run.reply["ename"] in ("KeyboardInterrupt", "CancelledError")
    assert stopped_after < 5, stopped_after  # the tool sleeps 20 s; before the fix the cell waited for it
    history = kernel.ok("for m in agent.messages[1:]: print(m['role'], '|', m['content'])").stdout
    assert history == (
        'assistant | <tool_call>{"name": "slow", "arguments": {"seconds": 20}}</tool_call>\n'
        'user | <tool_response name="slow">\nError: interrupted before it finished.\n</tool_response>\n'
        "Use these results to answer the user's question in plain text.\n"
    )
    assert kernel.ok("print(1 + 1)").stdout == "2\n"


def test_a_model_error_is_its_message_in_one_place_and_the_traceback_is_kept(kernel):
    kernel.ok(
        "from meowgent_nb import FunctionModel, ModelError\n"
        "def unreachable(messages, tools):\n"
        "    raise ModelError('Cannot reach the Ollama server at http://127.0.0.1:9: start it with `ollama serve`.')\n"
        "broken = FunctionModel(unreachable)"
    )
    run = kernel.execute("%%agent --model-object broken --new\nHi")
    assert run.reply["status"] == "error"  # the cell still fails, for nbval and papermill
    assert (run.reply["ename"], run.reply["evalue"]) == (
        "ModelError",
        "Cannot reach the Ollama server at http://127.0.0.1:9: start it with `ollama serve`.",
    )
    assert run.reply["traceback"] == [
        "\x1b[31mModelError\x1b[0m: Cannot reach the Ollama server at http://127.0.0.1:9: start it with `ollama serve`.",
        "(the full traceback: %agent traceback)",
    ]
    full = kernel.ok("%agent traceback").stdout
    assert full.startswith("Traceback (most recent call last):\n")
    assert "in unreachable\n" in full
    assert full.endswith(
        "meowgent_nb.models.base.ModelError: Cannot reach the Ollama server at http://127.0.0.1:9: start it with"
        " `ollama serve`.\n"
    )


def test_a_local_tools_pil_image_shows_in_its_card_and_the_model_reads_its_placeholder(kernel):
    kernel.ok(
        "from PIL import Image\n"
        "@tool\n"
        "def red_square() -> Image.Image:\n"
        '    """Draw a red square."""\n'
        "    return Image.new('RGB', (2, 2), 'red')\n"
        "import base64, io\n"
        "buffer = io.BytesIO(); red_square.invoke({}).save(buffer, format='PNG')\n"
        "model = answers('red_square')"
    )
    encoded = kernel.ok("print(base64.b64encode(buffer.getvalue()).decode())").stdout.strip()
    run = kernel.ok("%%agent --model-object model --new\nDraw")
    assert final_text(run) == "[tool] red_square() -> done\n  [image: image/png]\nAll done."
    assert f'src="data:image/png;base64,{encoded}"' in final_html(run)
    assert kernel.ok("last()").stdout == "ok | [image: image/png]\nAll done.\n"
