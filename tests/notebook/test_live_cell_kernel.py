"""A running `%%agent` cell as a person sees it in JupyterLab, in a real kernel: Stop, buttons in the card, edits.

The kernel is driven as JupyterLab drives it (each cell's id in the execute request's metadata,
clicks and typing as comm messages); `frontend="console"` sends cells as ``jupyter console``
does. tests/notebook/browser/test_browser.py clicks the same widgets in a real JupyterLab.
"""

from __future__ import annotations

import json
import re
import time
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.support.kernel_driver import TIMEOUT, Kernel, Run, clicking, running_kernel, shown

SETUP = '''
%load_ext meowgent_nb
import asyncio, json, os, pathlib
from meowgent_nb import ScriptedModel, tool
from meowgent_nb.models.base import ModelChunk

@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    pathlib.Path(path).write_text(text)
    return f"wrote {len(text)} characters to {path}"

def answers(*paths):
    calls = "".join(
        "<tool_call>" + json.dumps({"name": "write_file", "arguments": {"path": p, "text": "hi"}}) + "</tool_call>"
        for p in paths
    )
    return ScriptedModel([calls, "All done."])

class Slow:
    """Streams a word every `delay` seconds, and counts what it was asked to stream."""
    name = "slow"
    def __init__(self, words, delay=0.1):
        self.words, self.delay, self.sent = words, delay, 0
    async def stream(self, request):
        for word in self.words:
            await asyncio.sleep(self.delay)
            self.sent += 1
            yield ModelChunk(text=word)
        yield ModelChunk(done=True, finish_reason="stop")

def magics():
    return get_ipython().magics_manager.registry["AgentMagics"]

def last():
    for r in magics().last_result.tool_results:
        print(r.kind, "|", r.output)
    print(magics().last_result.stopped, "|", magics().last_result.text)
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "live-cell", SETUP)


def final_text(run: Run) -> str:
    """The finished transcript's text/plain: the display that replaced the live widgets."""
    return [c["data"]["text/plain"] for c in run.of_type("update_display_data")][-1]


def state(run: Run, comm_id: str) -> dict[str, Any]:
    """A widget's state as the frontend last saw it: its first state and every update since."""
    return {**run.models[comm_id], **run.widget_updates.get(comm_id, {})}


def with_class(run: Run, css_class: str) -> list[str]:
    return [c for c in run.models if css_class in state(run, c).get("_dom_classes", ())]


def live_box(run: Run) -> str:
    (box,) = with_class(run, "meowgent-live")
    return box


def test_stop_while_the_model_streams_ends_the_cell_keeps_the_words_and_the_next_cell_runs(kernel):
    kernel.ok("model = Slow([f'word{i} ' for i in range(200)], delay=0.05)")
    clicked: dict[str, float] = {}

    def stop_after_some_words(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if "word3" in shown(run, msg) and not clicked:
            clicked["at"] = time.monotonic()
            k.click(run.buttons["Stop"][0])

    run = kernel.ok("%%agent --model-object model --new --no-tools\nTalk", hook=stop_after_some_words)
    assert time.monotonic() - clicked["at"] < 5  # 200 words take 10 s; Stop ends the cell at once
    sent = int(kernel.ok("print(model.sent)").stdout)
    assert 4 <= sent < 50
    words = " ".join(f"word{i}" for i in range(sent))
    assert final_text(run) == f"{words}\n[stopped by you after 1 turn, 0 tool calls]"
    assert kernel.ok("last()").stdout == f"interrupted | {words}\n"
    history = kernel.ok("m = magics().messages; print(len(m), '|', m[-1]['content'])").stdout
    assert history == f"2 | {words} \n[this answer was cut off: interrupted]\n"
    footer = [s for s in run.widget_updates.values() if "meowgent-footer" in str(s.get("value", ""))]
    assert footer == []  # the footer is in the finished transcript, which replaced the widgets
    (html,) = [c["data"]["text/html"] for c in run.of_type("update_display_data")][-1:]
    assert "stopped by you after 1 turn, 0 tool calls" in html  # the same words as text/plain
    assert kernel.ok("print(1 + 1)").stdout == "2\n"


def test_stop_while_a_call_waits_for_approval_denies_it_and_ends_the_cell(kernel):
    kernel.ok("model = answers('never.txt')")

    def stop_when_asked(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "comm_open" and "Deny" in run.buttons and "stopped" not in run.buttons:
            run.buttons["stopped"] = []
            k.click(run.buttons["Stop"][0])

    run = kernel.ok("%%agent --model-object model --new\nWrite", hook=stop_when_asked)
    assert kernel.ok("print(os.path.exists('never.txt'))").stdout == "False\n"
    assert final_text(run) == (
        "[tool] write_file(path='never.txt', text='hi') -> not run (stopped before approval)\n"
        "[stopped by you after 1 turn, 0 tool calls (1 not run)]"
    )
    out = "denied | Not run: the run was stopped before a decision.\ninterrupted | \n"
    assert kernel.ok("last()").stdout == out


def test_the_buttons_sit_under_the_waiting_card_and_approve_runs_the_call(kernel):
    kernel.ok("model = answers('first.txt', 'second.txt')")
    run = kernel.ok(
        "%%agent --model-object model --new\nWrite both", hook=clicking(("Approve", 0), ("Deny", 1))
    )
    assert kernel.ok("last()").stdout == (
        "ok | wrote 2 characters to first.txt\ndenied | Denied: the person did not approve this call.\nanswer | All done.\n"
    )
    # While waiting, the live view was: transcript up to card 1, its row, card 2, its row, the rest, Stop.
    rows = with_class(run, "meowgent-approval-row")
    box = live_box(run)
    assert len(rows) == 2
    seen = [
        [child.removeprefix("IPY_MODEL_") for child in update["children"]]
        for msg in run.messages
        if msg["msg_type"] == "comm_msg"
        and msg["content"]["comm_id"] == box
        and "children" in (update := msg["content"]["data"].get("state", {}))
    ]
    waiting = next(kids for kids in seen if rows[0] in kids and rows[1] in kids)
    kinds = [
        "row0" if k == rows[0] else "row1" if k == rows[1] else run.models[k]["_model_name"] for k in waiting
    ]
    assert kinds == ["HTMLModel", "row0", "HTMLModel", "row1", "HTMLModel", "ButtonModel"]
    values = {k: [str(run.models[k].get("value"))] for k in waiting}
    for msg in run.messages:
        if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] in values:
            values[msg["content"]["comm_id"]].append(
                str(msg["content"]["data"].get("state", {}).get("value"))
            )
    assert any("first.txt" in v and "second.txt" not in v for v in values[waiting[0]])
    assert any("second.txt" in v and "first.txt" not in v for v in values[waiting[2]])
    assert final_text(run) == (
        "[tool] write_file(path='first.txt', text='hi') -> done (approved by you)\n"
        "  wrote 2 characters to first.txt\n"
        "[tool] write_file(path='second.txt', text='hi') -> denied (by you)\n"
        "  Denied: the person did not approve this call.\n"
        "All done."
    )
    assert not [
        c["data"] for c in run.of_type("display_data") if "Approval needed" in c["data"]["text/plain"]
    ]


def editor_of(run: Run) -> str:
    """The edit box's text area now on screen (each Check puts a fresh one in its place)."""
    return [c for c, s in run.models.items() if s["_model_name"] == "TextareaModel"][-1]


def problems(run: Run) -> list[str]:
    """Every problem or preview the edit box showed, in order."""
    values = [
        str(m["content"]["data"].get("state", {}).get("value"))
        for m in [*run.messages, *run.elsewhere]
        if m["msg_type"] == "comm_msg"
    ]
    return [v for v in values if "meowgent-edit-" in v]


def _editing(*texts: str, then: tuple[str, int] | None = None, subshell: bool = False) -> Any:
    """A hook that opens the edit box and, for each text, types it and clicks Check (a fresh box
    after each); then clicks ``then``, or "Approve these arguments" once the last check passed.
    With ``subshell``, every comm message goes on a subshell of its own, as JupyterLab sends them."""
    steps: list[str] = []
    lab: list[str | None] = []

    def hook(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if "Check" not in run.buttons:
            return
        if not lab:
            lab.append(k.create_subshell() if subshell else None)
        textareas = [c for c, s in run.models.items() if s["_model_name"] == "TextareaModel"]
        if len(steps) < len(texts) and len(textareas) == len(steps) + 1:  # a fresh box for this try
            if not steps:
                k.click(run.buttons["Edit arguments"][0], lab[0])
            k.set_state(textareas[-1], lab[0], value=texts[len(steps)])
            steps.append("checked")
            k.click(run.buttons["Check"][0], lab[0])  # at once, as a person's click right after typing
        elif (
            len(steps) == len(texts) and len(textareas) == len(texts) + 1 and len(problems(run)) >= len(texts)
        ):
            steps.append("done")
            button = run.buttons[then[0]][then[1]] if then else run.buttons["Approve these arguments"][0]
            k.click(button, lab[0])

    return hook


def test_edited_arguments_are_validated_then_run_and_the_model_is_told(kernel):
    kernel.ok("model = answers('model.txt')")
    edited = json.dumps({"path": "person.txt", "text": "hello"})
    run = kernel.ok("%%agent --model-object model --new\nWrite", hook=_editing(edited))
    files = kernel.ok("print(os.path.exists('model.txt'), open('person.txt').read())").stdout
    assert files == "False hello\n"
    told = (
        '(The person changed the arguments before approving; the call ran with {"path": "person.txt",'
        ' "text": "hello"}.)\nwrote 5 characters to person.txt'
    )
    assert kernel.ok("last()").stdout == f"ok | {told}\nanswer | All done.\n"
    assert kernel.ok("print(magics().messages[2]['content'])").stdout == (
        f'<tool_response name="write_file">\n{told}\n</tool_response>\n'
        "Use these results to answer the user's question in plain text.\n"
    )
    assert final_text(run) == (
        "[tool] write_file(path='person.txt', text='hello') (edited) -> done (approved by you (edited))\n"
        "  the model asked for: path='model.txt', text='hi'\n"
        f"  {told.replace(chr(10), chr(10) + '  ')}\n"
        "All done."
    )


def test_invalid_edited_arguments_are_refused_in_the_row_and_nothing_runs(kernel):
    kernel.ok("model = answers('kept.txt')")
    bad = json.dumps({"path": "x.txt", "text": 3, "mode": "w"})
    run = kernel.ok("%%agent --model-object model --new\nWrite", hook=_editing(bad, then=("Deny", 0)))
    assert kernel.ok("print(os.path.exists('x.txt'), os.path.exists('kept.txt'))").stdout == "False False\n"
    assert problems(run) == [
        '<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">'
        "Invalid arguments for tool &#x27;write_file&#x27;:\n"
        "- text: input should be a valid string, got 3\n"
        "- mode: unknown argument; this tool takes: path, text\n"
        "Fix the arguments, then check again.</pre>"
    ]
    assert (
        kernel.ok("last()").stdout
        == "denied | Denied: the person did not approve this call.\nanswer | All done.\n"
    )


def test_edits_sent_as_jupyterlab_sends_them_are_read_in_order_each_time(kernel):
    # JupyterLab sends comm messages on a subshell of its own, and ipykernel routes a widget's
    # messages to the subshell of the request it was last changed under. A box drawn by Check
    # used to be made in the click's context, so the next text typed into it went to another
    # thread than the next Check click, and the Check could read the old text (seen in CI).
    kernel.ok("model = answers('model.txt')")
    tries = [json.dumps({"path": f"try{n}.txt", "text": n}) for n in range(3)]
    edited = json.dumps({"path": "lab.txt", "text": "typed last"})
    run = kernel.ok("%%agent --model-object model --new\nWrite", hook=_editing(*tries, edited, subshell=True))
    assert (
        kernel.ok("print(open('lab.txt').read(), os.path.exists('model.txt'))").stdout == "typed last False\n"
    )
    assert [p.split("\n")[1] for p in problems(run)[:3]] == [
        f"- text: input should be a valid string, got {n}" for n in range(3)
    ]
    assert problems(run)[3] == (
        '<pre class="meowgent-edit-preview" style="white-space: pre-wrap">'
        "will run: write_file(path=&#x27;lab.txt&#x27;, text=&#x27;typed last&#x27;)</pre>"
    )
    # Every comm message was handled by the running cell's shell, none on the subshell's thread
    # (a message handled there is bracketed by busy and idle states of its own): in their own
    # context there is only the echo of each typed text; what the clicks drew belongs to the cell.
    handled = [m["msg_type"] for m in run.elsewhere if m["parent_header"].get("msg_type") == "comm_msg"]
    assert handled == ["comm_msg"] * 4


def test_a_console_frontend_is_asked_with_input_instead_of_buttons_it_cannot_show(kernel):
    kernel.ok("model = answers('console.txt')")
    msg = kernel.kc.session.msg(
        "execute_request",
        {
            "code": "%%agent --model-object model --new\nWrite",
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": True,
            "stop_on_error": True,
        },
    )  # exactly what jupyter_console's ptshell sends: no metadata
    kernel.kc.shell_channel.send(msg)
    request = kernel.kc.get_stdin_msg(timeout=TIMEOUT)
    assert request["content"]["prompt"] == (
        "Run write_file(path='console.txt', text='hi')? [y]es / [n]o / [a]lways / [e]xact call / [r]ule"
        " / [d]eny with a reason: "
    )
    kernel.kc.input("y")
    reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
        reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    assert kernel.ok("last()").stdout == "ok | wrote 2 characters to console.txt\nanswer | All done.\n"


def test_a_refused_edit_can_be_corrected_checked_and_approved(kernel):
    kernel.ok("model = answers('first-try.txt')")
    bad, good = '{"path": "fixed.txt", "text": 5}', '{"path": "fixed.txt", "text": "ok"}'
    run = kernel.ok("%%agent --model-object model --new\nWrite", hook=_editing(bad, good))
    assert (
        kernel.ok("print(open('fixed.txt').read(), os.path.exists('first-try.txt'))").stdout == "ok False\n"
    )
    previews = [v for v in problems(run) if "meowgent-edit-preview" in v]
    assert previews == [
        '<pre class="meowgent-edit-preview" style="white-space: pre-wrap">will run:'
        " write_file(path=&#x27;fixed.txt&#x27;, text=&#x27;ok&#x27;)</pre>"
    ]


README = (
    Path(__file__).resolve().parents[2] / "docs" / "guides" / "agent-cells.md"
)  # where the texts are quoted


def readme_stop_quotes() -> list[str]:
    """Every text the agent-cells guide quotes of a run that was stopped ("stopped by ..."), line breaks joined."""
    return re.findall(r'"(stopped by [^"]*)"', " ".join(README.read_text().split()))


def test_readmes_quoted_stop_and_interrupt_texts_are_what_the_cell_shows(kernel):
    quotes = readme_stop_quotes()
    assert sorted(quote.split(" after ")[0] for quote in quotes) == [
        "stopped by an interrupt",
        "stopped by you",
    ]
    kernel.ok("model = answers('one.txt', 'two.txt')")

    def stop_when_asked(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "comm_open" and "Deny" in run.buttons and "stopped" not in run.buttons:
            run.buttons["stopped"] = []
            k.click(run.buttons["Stop"][0])

    stopped = kernel.ok("%%agent --model-object model --new\nWrite", hook=stop_when_asked)
    html = [c["data"]["text/html"] for c in stopped.of_type("update_display_data")][-1]
    kernel.ok(
        "@tool\ndef slow(seconds: float) -> str:\n    '''Sleep.'''\n    import time; time.sleep(seconds); return 'slept'\n"
        "model = ScriptedModel(['<tool_call>' + json.dumps({'name': 'slow', 'arguments': {'seconds': 3}}) + '</tool_call>', 'ok'])"
    )

    def interrupt_once_running(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if "meowgent-status-running" in shown(run, msg) and "interrupted" not in run.buttons:
            run.buttons["interrupted"] = []
            k.km.interrupt_kernel()

    interrupted = kernel.execute("%%agent --model-object model --new\nSleep", hook=interrupt_once_running)
    shows = {  # what a person reads: the transcript's text and HTML (its words), the error's line
        "stopped by you": [final_text(stopped), unescape(re.sub(r"<[^>]+>", "", html))],
        "stopped by an interrupt": [
            re.sub(r"\x1b\[[0-9;]*m", "", line) for line in interrupted.reply["traceback"]
        ],
    }
    for quote in quotes:
        for text in shows[quote.split(" after ")[0]]:
            assert quote in text, (quote, text)
    assert len(interrupted.reply["traceback"]) == 1  # said once, on one line
    assert (
        final_text(interrupted) == "[tool] slow(seconds=3) -> interrupted while running"
    )  # the transcript does not say it again
