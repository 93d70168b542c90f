"""The new approval choices in a real kernel: clicks and typing sent as a frontend sends them, and
the same choices answered with input()."""

from __future__ import annotations

from typing import Any

import pytest

from tests.notebook.test_notebook_approvals import PROMPT, SETUP
from tests.support.kernel_driver import TIMEOUT, Kernel, Run, clicking, running_kernel

RULES = """
from meowgent_nb.agent.approvals.decisions import session_decisions
added = []
def add_rule(text):
    if "->" not in text:
        raise ValueError(f"{text!r} is no rule: it needs '-> allow', '-> ask' or '-> deny'")
    added.append(text)
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "choices", SETUP + RULES)


def test_allow_this_exact_call_runs_the_same_call_later_unasked_and_asks_for_another(kernel):
    kernel.ok("approver = WidgetApprover()\nsession_decisions().clear()")
    kernel.ok("agent = make_agent(approver, 'exact.txt', 'exact.txt', 'other.txt')")
    hook = clicking(("Allow this exact call", 0), ("Deny", 2))
    first = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert first.panel_texts[-1] == (  # the same call twice in one answer: one click decides both
        "Approval needed: write_file(path='exact.txt', text='hi') -> approved by you (this exact call, for this session)\n"
        "Approval needed: write_file(path='exact.txt', text='hi') -> allowed by this exact call (approved earlier in"
        " this session)\nApproval needed: write_file(path='other.txt', text='hi') -> denied by you"
    )
    kernel.ok("agent = make_agent(approver, 'exact.txt')")
    again = kernel.ok("result = await agent.arun('go')")
    assert again.buttons == {}
    assert again.panel_texts[-1] == (
        "Approval needed: write_file(path='exact.txt', text='hi') -> allowed by this exact call (approved earlier in"
        " this session)"
    )
    assert kernel.ok("report(result)").stdout == "ok | wrote exact.txt | True\n"
    kernel.ok("agent = make_agent(approver, 'exact.txt', text='other')")
    other = kernel.ok("result = await agent.arun('go')", hook=clicking(("Deny", 0)))
    assert (
        other.panel_texts[-1]
        == "Approval needed: write_file(path='exact.txt', text='other') -> denied by you"
    )
    out = kernel.ok("print([(r.decision, r.by) for r in session_decisions()])").stdout
    assert out == (
        "[('approved', 'you (this exact call, for this session)'), ('approved', 'this exact call (approved earlier"
        " in this session)'), ('denied', 'you'), ('approved', 'this exact call (approved earlier in this session)'),"
        " ('denied', 'you')]\n"
    )


def _reason_box(run: Run) -> str:
    return next(
        c for c, s in run.models.items() if s["_model_name"] == "TextModel" and s["description"] == "Reason:"
    )


def test_deny_with_a_reason_tells_the_model_the_reason(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'reason.txt')")
    sent: list[bool] = []

    def hook(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not sent and "Deny with this reason" in run.buttons:
            sent.append(True)
            kernel.click(run.buttons["Deny with a reason"][0])
            kernel.set_state(_reason_box(run), value="use the archive instead")
            kernel.click(run.buttons["Deny with this reason"][0])

    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert kernel.ok("report(result)").stdout == "denied | Denied: use the archive instead | False\n"
    assert run.panel_texts[-1] == (
        "Approval needed: write_file(path='reason.txt', text='hi') -> denied by you: \"use the archive instead\""
    )
    told = kernel.ok("print(agent.model.requests[-1].messages[-1]['content'])").stdout
    assert "Denied: use the archive instead" in told


def test_allow_calls_like_this_opens_the_rule_and_a_refused_rule_can_be_fixed_in_a_fresh_box(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(add_rule=add_rule), 'rule.txt')")
    steps: list[str] = []
    prefill = 'write_file path="rule.txt" text="hi" -> allow'

    def hook(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if not steps and "Add rule and approve" in run.buttons:
            steps.append("opened")
            kernel.click(run.buttons["Allow calls like this\u2026"][0])
            return
        state = msg["content"].get("data", {}).get("state", {}) if msg["msg_type"] == "comm_open" else {}
        if state.get("_model_name") != "TextModel":
            return
        if steps == ["opened"] and state["value"] == prefill:  # the rule's box, prefilled from the call
            steps.append("narrowed")
            kernel.set_state(msg["content"]["comm_id"], value="write_file path=rule.*")
            kernel.click(run.buttons["Add rule and approve"][0])
        elif (
            steps == ["opened", "narrowed"] and state["value"] == "write_file path=rule.*"
        ):  # refused: a fresh box
            steps.append("fixed")
            kernel.set_state(msg["content"]["comm_id"], value="write_file path=rule.* -> allow")
            kernel.click(run.buttons["Add rule and approve"][0])

    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    assert steps == ["opened", "narrowed", "fixed"]
    problems = [
        s
        for s in (
            m["content"]["data"].get("state", {}).get("value", "")
            for m in run.timeline
            if m["msg_type"] == "comm_msg"
        )
        if "meowgent-edit-problem" in str(s)
    ]
    assert problems == [
        '<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">&#x27;write_file'
        " path=rule.*&#x27; is no rule: it needs &#x27;-&gt; allow&#x27;, &#x27;-&gt; ask&#x27; or &#x27;-&gt;"
        " deny&#x27;\nFix it, then try again.</pre>"
    ]
    assert kernel.ok("report(result)").stdout == "ok | wrote rule.txt | True\n"
    assert kernel.ok("print(added)").stdout == "['write_file path=rule.* -> allow']\n"
    assert run.panel_texts[-1] == (
        "Approval needed: write_file(path='rule.txt', text='hi') -> approved by you (rule added: write_file"
        " path=rule.* -> allow)"
    )


def _answering(kernel: Kernel, code: str, answers: list[str]) -> list[str]:
    msg_id = kernel.kc.execute(code, allow_stdin=True)
    prompts = []
    for answer in answers:
        request = kernel.kc.get_stdin_msg(timeout=TIMEOUT)
        prompts.append(request["content"]["prompt"])
        kernel.kc.input(answer)
    reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    return prompts


def test_input_offers_the_same_choices(kernel):
    kernel.ok("asker = InputApprover(add_rule=add_rule)")
    kernel.ok("agent = make_agent(asker, 'in1.txt', 'in1.txt', 'in2.txt', 'in3.txt')")
    prompts = _answering(kernel, "result = await agent.arun('go')", ["e", "d", "  not\nthis one ", "r", ""])
    call = "Run write_file(path='{}', text='hi')? " + PROMPT
    assert prompts == [
        call.format("in1.txt"),  # the second in1.txt is the same exact call: not asked
        call.format("in2.txt"),
        "Reason (the model reads it): ",
        call.format("in3.txt"),
        'Rule (Enter keeps it, or type a wider or narrower one):\n  write_file path="in3.txt" text="hi" -> allow\n> ',
    ]
    assert kernel.ok("report(result)").stdout == (
        "ok | wrote in1.txt | True\nok | wrote in1.txt | True\ndenied | Denied: not this one | False\n"
        "ok | wrote in3.txt | True\n"
    )
    assert kernel.ok("print(added[-1])").stdout == 'write_file path="in3.txt" text="hi" -> allow\n'
