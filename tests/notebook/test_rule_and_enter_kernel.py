"""The rule box and Enter in a real kernel: clicks, typing and Enter sent as JupyterLab sends them.

"Add rule and approve" refuses a rule that would not cover the call it was opened from, saying
why; "Add rule only" adds it for later calls and leaves the call waiting. Enter in the Rule and
Reason boxes does what the button beside the box does: the frontend sends a "submit" message on
the key, then the text (when it changed).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebook.test_notebook_approvals import PROMPT, SETUP
from tests.support.kernel_driver import TIMEOUT, Kernel, Run, running_kernel

PREFILL = 'write_file path="draft4.txt" text="hi" -> allow'
WIDE = "write_file path=other/** -> allow"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "rule-enter", SETUP)


def press_enter(kernel: Kernel, comm_id: str) -> None:
    """Enter in a text box, as the widget frontend sends it (before the changed text)."""
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "submit"}}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))


def opened_box(msg: dict[str, Any], value: str) -> str | None:
    """The comm id of a text box the kernel just opened with ``value``, or None."""
    state = msg["content"].get("data", {}).get("state", {}) if msg["msg_type"] == "comm_open" else {}
    return (
        msg["content"]["comm_id"]
        if state.get("_model_name") == "TextModel" and state["value"] == value
        else None
    )


def sent_values(run: Run, marker: str) -> list[str]:
    """Every value the kernel sent a widget meanwhile that contains ``marker``, in order."""
    values = (
        m["content"]["data"].get("state", {}).get("value", "")
        for m in run.timeline
        if m["msg_type"] == "comm_msg"
    )
    return [v for v in values if isinstance(v, str) and marker in v]


def test_a_rule_that_misses_its_call_is_refused_and_add_rule_only_leaves_the_call_waiting(kernel):
    kernel.ok("approver = WidgetApprover()\nagent = make_agent(approver, 'draft4.txt')")
    steps: list[str] = []

    def hook(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not steps and "Add rule only" in run.buttons:
            steps.append("opened")
            k.click(run.buttons["Allow calls like this\u2026"][0])
        elif steps == ["opened"] and (box := opened_box(msg, PREFILL)):
            steps.append("widened")
            k.set_state(box, value=WIDE)
            k.click(run.buttons["Add rule and approve"][0])
        elif steps == ["opened", "widened"] and opened_box(msg, WIDE):  # refused: a fresh box, same text
            steps.append("kept")
            k.click(run.buttons["Add rule only"][0])
            k.click(run.buttons["Deny"][0])  # the call still waited for its own decision

    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert steps == ["opened", "widened", "kept"]
    assert sent_values(run, "meowgent-edit-problem") == [
        '<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">write_file'
        " path=other/** does not cover write_file(path=&#x27;draft4.txt&#x27;, text=&#x27;hi&#x27;): path"
        " &#x27;draft4.txt&#x27; is not under other/; widen the rule, or add it with &#x27;Add rule"
        " only&#x27; and decide this call on its own\nFix it, then try again.</pre>"
    ]
    assert sent_values(run, "rule added") == [f"rule added: {WIDE}; this call still waits for a decision"]
    assert kernel.ok("print(approver.rules_added)\nreport(result)").stdout == (
        f"['{WIDE}']\ndenied | Denied: the person did not approve this call. | False\n"
    )
    assert run.panel_texts[-1] == "Approval needed: write_file(path='draft4.txt', text='hi') -> denied by you"


def test_enter_in_the_rule_box_adds_the_rule_shown_and_approves(kernel):
    kernel.ok("approver = WidgetApprover()\nagent = make_agent(approver, 'enter.txt')")
    steps: list[str] = []
    prefill = 'write_file path="enter.txt" text="hi" -> allow'

    def hook(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not steps and "Add rule only" in run.buttons:
            steps.append("opened")
            k.click(run.buttons["Allow calls like this\u2026"][0])
        elif steps == ["opened"] and (box := opened_box(msg, prefill)):
            steps.append("entered")
            press_enter(k, box)  # the text unchanged: no new text follows the key

    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert steps == ["opened", "entered"]
    assert kernel.ok("print(approver.rules_added)\nreport(result)").stdout == (
        f"['{prefill}']\nok | wrote enter.txt | True\n"
    )
    assert run.panel_texts[-1] == (
        f"Approval needed: write_file(path='enter.txt', text='hi') -> approved by you (rule added: {prefill})"
    )


def test_enter_in_the_reason_box_denies_with_the_text_typed_before_it(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'reason.txt')")
    steps: list[str] = []

    def hook(k: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not steps and "Deny with this reason" in run.buttons:
            steps.append("opened")
            k.click(run.buttons["Deny with a reason"][0])
            box = next(
                c
                for c, s in run.models.items()
                if s["_model_name"] == "TextModel" and s["description"] == "Reason:"
            )
            press_enter(k, box)  # the key first, then the text it changed: as the frontend sends them
            k.set_state(box, value="keep the draft")

    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert kernel.ok("report(result)").stdout == "denied | Denied: keep the draft | False\n"
    assert run.panel_texts[-1] == (
        "Approval needed: write_file(path='reason.txt', text='hi') -> denied by you: \"keep the draft\""
    )


def test_input_says_why_a_rule_misses_and_adds_it_only_when_confirmed_then_asks_again(kernel):
    kernel.ok("asker = InputApprover()\nagent = make_agent(asker, 'draft4.txt')")
    msg_id = kernel.kc.execute("result = await agent.arun('go')", allow_stdin=True)
    prompts = []
    for answer in ["r", WIDE, "y", "n"]:
        prompts.append(kernel.kc.get_stdin_msg(timeout=TIMEOUT)["content"]["prompt"])
        kernel.kc.input(answer)
    printed = []
    while True:
        msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    call = "Run write_file(path='draft4.txt', text='hi')? " + PROMPT
    assert prompts == [
        call,
        'Rule (Enter keeps it, or type a wider or narrower one):\n  write_file path="draft4.txt" text="hi" -> allow\n> ',
        "Add it anyway as a separate rule? This call is then asked again. [y]es / [n]o: ",
        call,
    ]
    assert "".join(printed) == (
        "write_file path=other/** does not cover write_file(path='draft4.txt', text='hi'): path 'draft4.txt' is"
        f" not under other/\nRule added: {WIDE}\n"
    )
    assert kernel.ok("print(asker.rules_added)\nreport(result)").stdout == (
        f"['{WIDE}']\ndenied | Denied: the person did not approve this call. | False\n"
    )
