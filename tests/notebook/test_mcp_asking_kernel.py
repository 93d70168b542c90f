"""A server that asks back during a call, in a real kernel: its form filled and accepted (and a bad
value refused next to its field) through comm messages as JupyterLab sends them, the exact content
arriving at the server; a headless run declining; sampling approved twice or declined; the call's
time limit ending a form nobody answers. Both protocols: the 2026 one (questions inside the call's
result) and the 2025 one (questions as requests of their own)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.kernel_driver import Kernel, Run, running_kernel, shown

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "asking_server.py")
SETUP = f"""
%load_ext meowgent_nb
import sys
from meowgent_nb import ScriptedModel
from meowgent_nb.mcp.client.toolbox import McpToolbox
new = McpToolbox("new", [sys.executable, {SERVER!r}])
old = McpToolbox("old", [sys.executable, {SERVER!r}, "legacy"])
def calling(name, *after, **arguments):
    import json
    call = json.dumps({{"name": name, "arguments": arguments}})
    return ScriptedModel([f"<tool_call>{{call}}</tool_call>", *after])
"""
SIGNED_UP = {"age": 36, "email": "ada@example.org", "name": "Ada", "newsletter": True, "plan": "pro"}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "mcp-asking", SETUP)


def fields(run: Run) -> dict[int, str]:
    """The newest widget of each form field (entries are replaced as their changes arrive)."""
    latest = {}
    for comm_id, state in run.models.items():  # in the order the kernel made them
        for css in state.get("_dom_classes", ()):
            if css.startswith("meowgent-field-"):
                latest[int(css.rsplit("-", 1)[1])] = comm_id
    return latest


class FormFiller:
    """Fills the sign-up form with a bad age, clicks Accept, then fixes the age and accepts again."""

    def __init__(self, subshell: bool = False) -> None:
        self.stage = 0
        self.problems: list[str] = []
        self.subshell = subshell
        """Send every comm message on a subshell of its own, as JupyterLab does."""

    def __call__(self, kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        content = msg["content"]
        if self.stage == 0 and len(fields(run)) == 5 and "Accept" in run.buttons:
            self.stage = 1
            self.lab = kernel.create_subshell() if self.subshell else None
            entry = fields(run)
            kernel.set_state(entry[0], self.lab, value="Ada")
            kernel.set_state(entry[1], self.lab, value="thirty")
            kernel.set_state(entry[2], self.lab, value="ada@example.org")
            kernel.set_state(entry[3], self.lab, index=2)  # the drop-down: (none), free, pro
            kernel.set_state(entry[4], self.lab, value=True)
            kernel.click(run.buttons["Accept"][-1], self.lab)
        elif (
            self.stage == 1
            and msg["msg_type"] == "comm_msg"
            and "meowgent-field-problem" in str(content["data"])
        ):
            self.problems.append(str(content["data"]["state"].get("value", "")))
            if "nothing was sent" in self.problems[-1]:
                self.stage = 2
                kernel.set_state(
                    fields(run)[1], self.lab, value="36"
                )  # the fresh entry that replaced the first
                kernel.click(run.buttons["Accept"][-1], self.lab)


def clicks(*descriptions: str):
    """A hook that clicks each button, in turn, as soon as it is on screen."""
    wanted = list(descriptions)
    done: list[str] = []

    def hook(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if (
            wanted
            and msg["msg_type"] == "comm_open"
            and len(run.buttons.get(wanted[0], ())) > done.count(wanted[0])
        ):
            name = wanted.pop(0)
            kernel.click(run.buttons[name][done.count(name)])
            done.append(name)

    return hook


def final_text(run: Run) -> str:
    return run.panel_texts[-1]


@pytest.mark.parametrize(("server", "lab"), [("new", False), ("old", False), ("new", True)])
def test_the_form_is_filled_in_the_cell_and_the_server_receives_exactly_what_was_accepted(
    kernel, server, lab
):
    # lab: the changes and clicks come on a subshell, as JupyterLab sends them; each fresh entry
    # must still be handled by the cell's shell, in order with the Accept click after it.
    filler = FormFiller(subshell=lab)
    kernel.ok(f'model = calling("{server}_sign_up", "Signed up.")')
    run = kernel.ok("%%agent --model-object model --new\nSign me up", hook=filler)
    assert filler.stage == 2
    assert filler.problems[0] == (
        '<span class="meowgent-field-problem" style="color: #c62828">&#x27;thirty&#x27; is not a whole number</span>'
    )
    labels = [
        label
        for m in run.messages
        for label in re.findall(r'class="meowgent-status"[^>]*>([^<]*)<', shown(run, m))
    ]
    assert [label for i, label in enumerate(labels) if i == 0 or label != labels[i - 1]] == [
        "running",
        "waiting for you",
        "running",
        "done",  # the card while the form was open, then after
    ]
    text = final_text(run)
    assert text.splitlines()[:3] == [
        f"[tool] {server}_sign_up() -> done",
        f"  [{server} asked for input ('Please sign up <script>alert(1)</script> to continue.'): accepted, sent"
        f" name='Ada', age=36, email='ada@example.org', plan='pro', newsletter=True]",
        "  " + json.dumps({"action": "accept", "data": SIGNED_UP}, sort_keys=True),
    ]
    headers = [s["value"] for s in run.models.values() if "meowgent-elicit-head" in str(s.get("value", ""))]
    assert (
        len(headers) == 1
        and "&lt;script&gt;alert(1)&lt;/script&gt;" in headers[0]
        and "<script>" not in headers[0]
    )
    html = [
        m["content"]["data"]["text/html"] for m in run.messages if m["msg_type"] == "update_display_data"
    ][-1]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    check = kernel.ok(f"print({server}.history[-1])")
    assert (
        check.stdout
        == "Asked(kind='elicitation', what='Please sign up <script>alert(1)</script> to continue.', outcome='accept: by you')\n"
    )
    handled = [m for m in run.elsewhere if m["parent_header"].get("msg_type") == "comm_msg"]
    assert [
        m["parent_header"]["msg_id"] for m in handled if m["msg_type"] == "status"
    ] == []  # none on a subshell


def test_a_headless_run_declines_the_form_and_says_so_in_the_card(kernel):
    kernel.ok('model = calling("new_sign_up", "Not signed up.")')
    run = kernel.ok("%%agent --model-object model --new\nSign me up", allow_stdin=False)
    assert not fields(run)  # no form was made
    assert final_text(run).splitlines()[:3] == [
        "[tool] new_sign_up() -> done",
        "  [new asked for input ('Please sign up <script>alert(1)</script> to continue.'): declined,"
        " no person to answer (headless run)]",
        '  {"action": "decline", "data": null}',
    ]


@pytest.mark.parametrize("server", ["new", "old"])
def test_sampling_is_approved_then_its_answer_is_approved_and_the_server_gets_it(kernel, server):
    kernel.ok(f'model = calling("{server}_write_poem", "Soft paws at night", "Here it is.", topic="cats")')
    run = kernel.ok(
        "%%agent --model-object model --new\nA poem", hook=clicks("Let the model answer", "Send the answer")
    )
    assert final_text(run).splitlines()[:3] == [
        f"[tool] {server}_write_poem(topic='cats') -> done",
        f"  [{server} asked to use the model scripted: answer sent back: 'Soft paws at night']",
        '  {"text": "Soft paws at night", "model": "scripted", "stop": "endTurn"}',
    ]
    check = kernel.ok("print(model.requests[1].messages, model.requests[1].options)")
    assert check.stdout == (
        "[{'role': 'system', 'content': 'You write haiku.'}, {'role': 'user', 'content': 'A haiku about cats.'}]"
        " {'num_predict': 60}\n"
    )
    reviews = [s["value"] for s in run.models.values() if "asks to use the model" in str(s.get("value", ""))]
    assert len(reviews) == 2 and "at most 60 tokens" in reviews[0] and "Soft paws at night" in reviews[1]


def test_declined_sampling_never_reaches_the_model_and_the_tool_fails_saying_why(kernel):
    kernel.ok('model = calling("new_write_poem", "I could not write it.", topic="cats")')
    run = kernel.ok("%%agent --model-object model --new\nA poem", hook=clicks("Decline"))
    lines = final_text(run).splitlines()
    assert lines[:3] == [
        "[tool] new_write_poem(topic='cats') -> error",
        "  [new asked to use the model scripted: refused by you]",
        "  Error: McpServerError: the MCP server 'new' refused the call to write_poem: the sampling request was"
        " refused: by you (error -1)",
    ]
    assert lines[-1] == "I could not write it."


def test_headless_sampling_is_refused_unless_the_server_is_allowed(kernel):
    kernel.ok('model = calling("new_write_poem", "No poem.", topic="cats")')
    run = kernel.ok("%%agent --model-object model --new\nA poem", allow_stdin=False)
    assert (
        final_text(run).splitlines()[1]
        == "  [new asked to use the model scripted: refused, no person to answer (headless run)]"
    )
    kernel.ok(
        f'free = McpToolbox("free", [sys.executable, {SERVER!r}], sampling="allow")\nmodel = calling("free_write_poem", "Moon.", "Done.", topic="moon")'
    )
    run = kernel.ok("%%agent --model-object model --new --tools free_write_poem\nA poem", allow_stdin=False)
    assert final_text(run).splitlines()[:3] == [
        "[tool] free_write_poem(topic='moon') -> done",
        "  [free used the model scripted (sampling='allow'); it answered: 'Moon.']",
        '  {"text": "Moon.", "model": "scripted", "stop": "endTurn"}',
    ]
    kernel.ok("free.close(); del free")


def test_roots_are_the_folders_given_in_their_order_the_notebook_folder_only_if_named(kernel, tmp_path):
    run = kernel.ok(
        f'boxed = McpToolbox("r", [sys.executable, {SERVER!r}], roots=[{str(tmp_path)!r}, "."])\n'
        'print(boxed["r_my_roots"].run({}))\nimport os; print(os.getcwd())\nboxed.close()'
    )
    got, cwd = run.stdout.splitlines()
    assert json.loads(got) == [tmp_path.as_uri(), Path(cwd).as_uri()]  # "." is the notebook's folder


def test_a_question_while_no_call_runs_is_declined_with_the_reason(kernel):
    run = kernel.ok(
        'print(old["old_ask_later"].run({}))\nimport time; time.sleep(1.5)\nprint(old["old_asked_later"].run({}))\nprint(old.history[-1])'
    )
    assert run.stdout.splitlines() == [
        "asked",
        "decline",
        "Asked(kind='elicitation', what='Still there?', outcome=\"decline: no call of the server 'old' is running, so no one can be asked\")",
    ]


def test_a_form_nobody_answers_outlasts_the_call_s_time_limit_and_ends_with_the_approval_wait(kernel):
    # The call may take 1 s; the form waits 3 s (the approval timeout), and the call goes on after it.
    kernel.ok(
        "%config AgentMagics.tool_timeout = 1\n%config AgentMagics.approval_timeout = 3\n"
        'model = calling("new_sign_up", "Too slow.")'
    )
    try:
        run = kernel.ok("%%agent --model-object model --new\nSign me up")
    finally:
        kernel.ok("%config AgentMagics.tool_timeout = 30\n%config AgentMagics.approval_timeout = 600")
    outcome = [
        s.get("value", "")
        for s in run.widget_updates.values()
        if "meowgent-elicit-outcome" in str(s.get("value", ""))
    ]
    assert outcome == [
        '<span class="meowgent-elicit-outcome"><b>not answered: no answer within 3 s</b></span>'
    ]
    assert final_text(run).splitlines()[:3] == [
        "[tool] new_sign_up() -> done",
        "  [new asked for input ('Please sign up <script>alert(1)</script> to continue.'): cancelled, no answer"
        " within 3 s]",
        '  {"action": "cancel", "data": null}',
    ]


def test_stop_while_the_form_waits_ends_the_run_and_the_card_says_so(kernel):
    kernel.ok('model = calling("new_sign_up", "Never said.")')

    def stop(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if len(fields(run)) == 5 and "Stop" in run.buttons and not stop.done:
            stop.done = True
            kernel.click(run.buttons["Stop"][-1])

    stop.done = False
    run = kernel.ok("%%agent --model-object model --new\nSign me up", hook=stop)
    assert final_text(run).splitlines() == [
        "[tool] new_sign_up() -> interrupted while running",
        "  [new asked for input ('Please sign up <script>alert(1)</script> to continue.'): cancelled, the run was stopped]",
        "[stopped by you after 1 turn, 1 tool call]",
    ]
