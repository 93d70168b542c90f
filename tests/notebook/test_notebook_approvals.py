"""Approvals in a real kernel: clicks sent as a frontend sends them, headless runs, timeouts, interrupts."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.support.kernel_driver import (
    TIMEOUT,
    WIDGET_VIEW,
    Kernel,
    Run,
    clicking,
    interrupting,
    running_kernel,
)

PROMPT = "[y]es / [n]o / [a]lways / [e]xact call / [r]ule / [d]eny with a reason: "
"""What `InputApprover` asks after the call."""

SETUP = '''
import json, os, pathlib
from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.notebook.approvals import InputApprover, WidgetApprover, default_approver

@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file.

    Args:
        path: The file to write.
        text: What to write into it.
    """
    pathlib.Path(path).write_text(text)
    return f"wrote {path}"

def make_agent(approver, *paths, text="hi"):
    calls = "".join(
        "<tool_call>" + json.dumps({"name": "write_file", "arguments": {"path": p, "text": text}}) + "</tool_call>"
        for p in paths
    )
    return Agent(ScriptedModel([calls, "done"]), tools=[write_file], approver=approver)

def report(result):
    for r in result.tool_results:
        print(r.kind, "|", r.output, "|", os.path.exists(r.call.arguments["path"]))
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "kernel", SETUP)


def test_approve_click_runs_the_call_and_the_panel_shows_the_decision(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'approved.txt', text='<b>hi</b> & bye')")
    run = kernel.ok("result = await agent.arun('go')", hook=clicking(("Approve", 0)))
    assert kernel.ok("report(result)").stdout == "ok | wrote approved.txt | True\n"
    call = "write_file(path='approved.txt', text='<b>hi</b> & bye')"
    assert run.panel_texts == [
        f"Approval needed: {call} -> waiting",
        f"Approval needed: {call} -> approved by you",
    ]
    assert sorted(run.buttons) == [
        "Add rule and approve",
        "Add rule only",
        "Allow calls like this\u2026",
        "Allow this exact call",
        "Always allow",
        "Approve",
        "Approve these arguments",
        "Check",
        "Deny",
        "Deny with a reason",
        "Deny with this reason",
        "Edit arguments",
    ]
    html = [s["value"] for s in run.models.values() if s["_model_name"] == "HTMLModel" and s["value"]]
    assert html == [
        "<b>Approval needed</b> for 1 call. Calls left undecided are denied after 10 minutes.",
        (
            "<div style='margin-top:0.5em'><code>write_file</code><pre style='margin:0.2em 0'>{\n"
            "  &quot;path&quot;: &quot;approved.txt&quot;,\n"
            "  &quot;text&quot;: &quot;&lt;b&gt;hi&lt;/b&gt; &amp; bye&quot;\n}</pre></div>"
        ),
    ]
    for comm_id in (ids[0] for ids in run.buttons.values()):
        assert run.widget_updates[comm_id] == {"disabled": True}
    (editor,) = [
        s for s in run.models.values() if s["_model_name"] == "TextareaModel"
    ]  # the rule box opens empty
    assert editor["value"] == '{\n  "path": "approved.txt",\n  "text": "<b>hi</b> & bye"\n}'
    label = next(c for c, s in run.models.items() if s["_model_name"] == "LabelModel")
    assert run.widget_updates[label] == {"value": "approved by you"}


def test_deny_click_tells_the_model_and_does_not_run(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'denied.txt')")
    kernel.ok("result = await agent.arun('go')", hook=clicking(("Deny", 0)))
    out = kernel.ok("report(result)").stdout
    assert out == "denied | Denied: the person did not approve this call. | False\n"


def test_each_call_of_a_batch_has_its_own_buttons(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'one.txt', 'two.txt')")
    run = kernel.ok("result = await agent.arun('go')", hook=clicking(("Deny", 1), ("Approve", 0)))
    out = kernel.ok("report(result)").stdout
    assert (
        out == "ok | wrote one.txt | True\ndenied | Denied: the person did not approve this call. | False\n"
    )
    assert run.panel_texts[-1] == (
        "Approval needed: write_file(path='one.txt', text='hi') -> approved by you\n"
        "Approval needed: write_file(path='two.txt', text='hi') -> denied by you"
    )


def test_always_allow_lasts_for_the_approver_and_shows_no_buttons_later(kernel):
    kernel.ok("approver = WidgetApprover()\nagent = make_agent(approver, 'always1.txt')")
    first = kernel.ok("result = await agent.arun('go')", hook=clicking(("Always allow", 0)))
    assert kernel.ok("report(result)").stdout == "ok | wrote always1.txt | True\n"
    assert (
        first.panel_texts[-1]
        == "Approval needed: write_file(path='always1.txt', text='hi') -> approved by you (always allow, for this session)"
    )
    kernel.ok("agent = make_agent(approver, 'always2.txt')")
    second = kernel.ok("result = await agent.arun('go')")
    assert kernel.ok("report(result)").stdout == "ok | wrote always2.txt | True\n"
    assert second.buttons == {}
    assert (
        second.panel_texts[-1]
        == "Approval needed: write_file(path='always2.txt', text='hi') -> allowed by always allow (for this session)"
    )
    assert kernel.ok("print(sorted(approver.always_allowed))").stdout == "['write_file']\n"


def test_a_click_sent_with_a_subshell_header_reaches_the_panel(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'subshell.txt')")
    kernel.ok("result = await agent.arun('go')", hook=clicking(("Approve", 0), subshell=True))
    assert kernel.ok("report(result)").stdout == "ok | wrote subshell.txt | True\n"


def test_a_click_handled_on_another_thread_is_handed_to_the_cells_loop(kernel):
    # ipykernel 7.4 routes widget messages back to the main shell, so run the click itself in a
    # subshell (a thread of its own), as it would run if a frontend's comms went there.
    code = (
        "import threading, ipywidgets.widgets.widget as w\n"
        "w._instances[{!r}].click()\n"
        "print(threading.current_thread().name != threading.main_thread().name)"
    )
    clicked: list[str] = []

    def hook(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "display_data" and WIDGET_VIEW in msg["content"]["data"]:
            request = kernel.kc.session.msg(
                "execute_request", {"code": code.format(run.buttons["Approve"][0])}
            )
            request["header"]["subshell_id"] = kernel.create_subshell()
            kernel.kc.shell_channel.send(request)
            clicked.append(request["header"]["msg_id"])

    kernel.ok("agent = make_agent(WidgetApprover(), 'thread.txt')")
    run = kernel.ok("result = await agent.arun('go')", hook=hook)
    [clicking_cell] = clicked
    messages = [m for m in run.elsewhere if m["parent_header"].get("msg_id") == clicking_cell]
    while not any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in messages):
        msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") == clicking_cell:
            messages.append(msg)
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert ours(printed) == ["True"]  # the click did run off the main thread
    assert ours(kernel.ok("report(result)").stdout) == ["ok | wrote thread.txt | True"]


def ours(printed: str) -> list[str]:
    """The lines of ``printed`` but IPython's own: two cells at once (the main shell's and a
    subshell's) may write the same history line, and IPython then says so on the stdout of the
    cell that runs next, and moves on."""
    return [line for line in printed.splitlines() if not line.startswith("ERROR! Session/line number")]


def test_no_click_within_the_timeout_is_a_denial(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(timeout=0.5), 'late.txt')")
    run = kernel.ok("result = await agent.arun('go')")
    assert kernel.ok("report(result)").stdout == "denied | Denied: no decision within 0.5 seconds | False\n"
    assert run.panel_texts[-1] == (
        "Approval needed: write_file(path='late.txt', text='hi') -> denied: no decision within 0.5 seconds"
    )


def test_an_interrupt_while_waiting_ends_the_cell_and_records_the_call_as_not_run(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'interrupted.txt')")
    run = kernel.execute("result = await agent.arun('go')", hook=interrupting)
    assert (run.reply["status"], run.reply["ename"]) == ("error", "CancelledError")
    assert (
        run.panel_texts[-1]
        == "Approval needed: write_file(path='interrupted.txt', text='hi') -> denied: stopped"
    )
    out = kernel.ok("print(agent.messages[-1]['content'], os.path.exists('interrupted.txt'))").stdout
    assert (
        out
        == '<tool_response name="write_file">\nNot run: the run was stopped before a decision.\n</tool_response>\n'
        "Use these results to answer the user's question in plain text. False\n"
    )


def test_a_blocking_run_fails_at_once_instead_of_waiting_for_a_click_that_cannot_come(kernel):
    kernel.ok("agent = make_agent(WidgetApprover(), 'blocking.txt')")
    run = kernel.execute("agent.run('go')")
    assert (run.reply["ename"], run.reply["evalue"]) == (
        "RuntimeError",
        (
            "WidgetApprover cannot wait for a click while the cell blocks: run the agent in an async cell,"
            " `await agent.arun(...)` (or use %%agent), instead of `agent.run(...)`."
        ),
    )
    assert run.buttons == {}


def test_input_approver_asks_on_stdin_and_remembers_always(kernel):
    kernel.ok("agent = make_agent(InputApprover(), 'asked1.txt', 'asked2.txt')")
    msg_id = kernel.kc.execute("result = await agent.arun('go')", allow_stdin=True)
    prompts = []
    for answer in ("maybe", "a"):
        request = kernel.kc.get_stdin_msg(timeout=TIMEOUT)
        prompts.append(request["content"]["prompt"])
        kernel.kc.input(answer)
    reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg_id:  # a late reply to an earlier request
        reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    assert prompts == ["Run write_file(path='asked1.txt', text='hi')? " + PROMPT] * 2
    out = kernel.ok("report(result)").stdout
    assert out == "ok | wrote asked1.txt | True\nok | wrote asked2.txt | True\n"


MARK = (
    '<span class="meowgent-hidden-char" title="{}" style="color: #c62828; background: rgba(198,40,40,0.12);'
    ' border: 1px solid rgba(198,40,40,0.6); border-radius: 2px; padding: 0 1px">{}</span>'
)
HOSTILE_CALL = r"write_file(path='report\u202etxt.exe', text='<script>x</script>\u200b\u3164')"
"""A reversed extension, and markup next to hidden characters; repr() leaves U+3164 raw."""


def test_the_panel_shows_hidden_characters_and_the_tool_gets_them(kernel):
    kernel.ok(
        "agent = make_agent(WidgetApprover(), 'report\\u202etxt.exe',"
        " text='<script>x</script>\\u200b\\u3164')"
    )
    run = kernel.ok("result = await agent.arun('go')", hook=clicking(("Approve", 0)))
    assert run.panel_texts == [
        f"Approval needed: {HOSTILE_CALL} -> waiting",
        f"Approval needed: {HOSTILE_CALL} -> approved by you",
    ]
    html = [s["value"] for s in run.models.values() if s["_model_name"] == "HTMLModel" and s["value"]]
    assert html[1] == (
        "<div style='margin-top:0.5em'><code>write_file</code><pre style='margin:0.2em 0'>{\n"
        "  &quot;path&quot;: &quot;report"
        + MARK.format("U+202E RIGHT-TO-LEFT OVERRIDE", "\\u202e")
        + "txt.exe&quot;,\n  &quot;text&quot;: &quot;&lt;script&gt;x&lt;/script&gt;"
        + MARK.format("U+200B ZERO WIDTH SPACE", "\\u200b")
        + MARK.format("U+3164 HANGUL FILLER", "\\u3164")
        + "&quot;\n}</pre></div>"
    )
    # The file has the name the model gave, character for character.
    assert kernel.ok("print(os.listdir('.').count('report\\u202etxt.exe'))").stdout == "1\n"


def test_the_input_prompt_shows_hidden_characters(kernel):
    kernel.ok("agent = make_agent(InputApprover(), 'asked\\u202etxt.exe', text='\\x1b[2K\\u3164')")
    msg_id = kernel.kc.execute("result = await agent.arun('go')", allow_stdin=True)
    request = kernel.kc.get_stdin_msg(timeout=TIMEOUT)
    kernel.kc.input("n")
    reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)
    assert reply["content"]["status"] == "ok"
    assert request["content"]["prompt"] == (
        r"Run write_file(path='asked\u202etxt.exe', text='\x1b[2K\u3164')? " + PROMPT
    )


def test_headless_policy_allow_runs_and_shows_why(kernel):
    kernel.ok("os.environ['MEOWGENT_APPROVE'] = 'allow'\nagent = make_agent(WidgetApprover(), 'policy.txt')")
    try:
        run = kernel.ok("result = await agent.arun('go')", allow_stdin=False)
    finally:
        kernel.ok("del os.environ['MEOWGENT_APPROVE']")
    assert kernel.ok("report(result)").stdout == "ok | wrote policy.txt | True\n"
    [shown] = run.of_type("display_data")
    assert shown["data"] == {
        "text/plain": "Approval needed: write_file(path='policy.txt', text='hi') -> approved (MEOWGENT_APPROVE=allow)",
        "text/html": "<div><b>Approval needed</b> for 1 call.<div style='margin-top:0.5em'><code>write_file</code>"
        "<pre style='margin:0.2em 0'>{\n  &quot;path&quot;: &quot;policy.txt&quot;,\n  &quot;text&quot;: &quot;hi&quot;\n}"
        "</pre><div>&rarr; <b>approved (MEOWGENT_APPROVE=allow)</b></div></div></div>",
    }


ALWAYS_TOOL = '''
from meowgent_nb.testing import tool_call

@tool(approval="always", code_argument="code")
def run_code(code: str) -> str:
    """Run code.

    Args:
        code: The code.
    """
    return "ran"

agent = Agent(ScriptedModel([tool_call("run_code", code="x = 1"), "done"]), tools=[run_code], approver=WidgetApprover())
'''


def test_the_allow_policy_does_not_claim_to_approve_a_call_only_a_person_may_approve(kernel):
    kernel.ok("os.environ['MEOWGENT_APPROVE'] = 'allow'\n" + ALWAYS_TOOL)
    try:
        run = kernel.ok("result = await agent.arun('go')", allow_stdin=False)
    finally:
        kernel.ok("del os.environ['MEOWGENT_APPROVE']")
    denial = (
        "run_code runs only with a person's approval or a rule that allows it (a policy cannot approve it);"
        " allow it with a rule such as `%agent allow run_code ARG=PATTERN`."
    )
    assert kernel.ok("print(result.tool_results[0].output)").stdout == f"Denied: {denial}\n"
    [shown] = run.of_type("display_data")
    assert shown["data"]["text/plain"] == (
        f"Approval needed: run_code(code='x = 1') -> not approved (MEOWGENT_APPROVE=allow): {denial}"
    )
    assert "approved (MEOWGENT_APPROVE=allow)</b>" not in shown["data"]["text/html"]


def test_headless_with_an_unknown_policy_fails_the_cell(kernel):
    kernel.ok("os.environ['MEOWGENT_APPROVE'] = 'maybe'\nagent = make_agent(WidgetApprover(), 'bad.txt')")
    try:
        run = kernel.execute("result = await agent.arun('go')", allow_stdin=False)
    finally:
        kernel.ok("del os.environ['MEOWGENT_APPROVE']")
    assert (run.reply["ename"], run.reply["evalue"]) == (
        "SettingsError",
        (
            "MEOWGENT_APPROVE='maybe' is not a policy for headless runs; set MEOWGENT_APPROVE=allow"
            " (run the calls), MEOWGENT_APPROVE=deny (deny them; the default) or MEOWGENT_APPROVE=rules (only the"
            " approval rules run calls that ask; the same as deny)."
        ),
    )


def test_a_notebook_run_by_nbclient_denies_without_blocking(tmp_path, monkeypatch):
    monkeypatch.delenv("MEOWGENT_APPROVE", raising=False)
    cells = [
        SETUP,
        "agent = make_agent(default_approver(), 'headless.txt')\nprint(type(agent.approver).__name__)",
        "result = await agent.arun('go')",
        "report(result)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb, timeout=TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [cell.outputs for cell in nb.cells]
    assert outputs[1][0]["text"] == "PolicyApprover\n"
    [panel] = outputs[2]
    assert panel["data"]["text/plain"] == (
        "Approval needed: write_file(path='headless.txt', text='hi') -> denied (MEOWGENT_APPROVE=deny)"
    )
    assert outputs[3][0]["text"] == "denied | Denied: no person to approve (headless run) | False\n"


OUTSIDE_A_KERNEL = (
    """
import sys
import meowgent_nb.notebook.approvals as approvals
print(sorted(m for m in ("IPython", "ipykernel", "ipywidgets") if m in sys.modules))
"""
    + SETUP
    + """
approver = default_approver()
print(approvals.is_headless(), approver, default_approver("allow"))
report(make_agent(approver, "no.txt", "eof.txt").run("go"))
"""
)


def test_outside_a_kernel_input_is_asked_and_closed_input_denies(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", OUTSIDE_A_KERNEL],
        input="n\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=TIMEOUT,
        check=True,
    )
    prompt = "Run write_file(path='{}', text='hi')? " + PROMPT
    assert done.stdout == (
        "[]\n"
        "False InputApprover() PolicyApprover('allow', \"approve='allow'\")\n"
        + prompt.format("no.txt")
        + prompt.format("eof.txt")
        + "denied | Denied: the person did not approve this call. | False\n"
        "denied | Denied: no answer (the input was closed) | False\n"
    )


NO_KERNEL = (
    "WidgetApprover needs a Jupyter kernel (ipykernel >= 7.4) to show its buttons, and this is {}."
    " It works in a notebook cell that awaits the agent (`await agent.arun(...)`) or runs %%agent."
    " Here, use InputApprover() to ask in the terminal or default_approver() to pick one for where"
    " the code runs (both from meowgent_nb.notebook.approvals), or AutoApprove() to run every call."
)


def test_a_widget_approver_in_a_script_fails_at_once_saying_where_it_works(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SETUP + "\nmake_agent(WidgetApprover(), 'never.txt').run('go')\n")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=TIMEOUT
    )
    assert done.returncode == 1
    assert done.stderr.endswith("RuntimeError: " + NO_KERNEL.format("a plain Python process") + "\n")
    assert done.stdout == "" and not (tmp_path / "never.txt").exists()


def test_a_widget_approver_in_a_terminal_ipython_fails_at_once_saying_where_it_works(ip):
    from IPython.utils.capture import capture_output

    with capture_output():
        result = ip.run_cell("from meowgent_nb.notebook.approvals import WidgetApprover\nWidgetApprover()")
    assert type(result.error_in_exec) is RuntimeError
    assert str(result.error_in_exec) == NO_KERNEL.format("a terminal IPython")


def test_wrong_modes_name_the_allowed_values():
    from meowgent_nb.notebook.approvals import PolicyApprover, default_approver

    with pytest.raises(ValueError) as caught:
        default_approver("sometimes")
    assert (
        str(caught.value) == "approval mode must be one of 'ask', 'every', 'allow', 'deny', got 'sometimes'"
    )
    with pytest.raises(ValueError) as caught:
        PolicyApprover("ask", "why")  # type: ignore[arg-type]
    assert str(caught.value) == "PolicyApprover mode must be 'allow' or 'deny', got 'ask'"


def test_the_old_approval_words_still_work_and_name_the_new_ones(monkeypatch, capsys):
    from meowgent_nb.notebook import _setting_words
    from meowgent_nb.notebook.approvals import PolicyApprover, default_approver
    from meowgent_nb.notebook.approvals.policy_approvals import headless_policy

    with pytest.warns(
        DeprecationWarning,
        match=r"^default_approver\('all'\) is deprecated; write default_approver\('allow'\)$",
    ):
        assert repr(default_approver("all")) == "PolicyApprover('allow', \"approve='allow'\")"
    with pytest.warns(
        DeprecationWarning,
        match=r"^default_approver\('none'\) is deprecated; write default_approver\('deny'\)$",
    ):
        assert repr(default_approver("none")) == "PolicyApprover('deny', \"approve='deny'\")"
    with pytest.warns(
        DeprecationWarning, match=r"^PolicyApprover\('none'\) is deprecated; write PolicyApprover\('deny'\)$"
    ):
        assert PolicyApprover("none", "why").mode == "deny"  # type: ignore[arg-type]
    # An environment variable says so on stderr, once per process.
    monkeypatch.setattr(_setting_words, "_SAID", set())
    monkeypatch.setenv("MEOWGENT_APPROVE", "all")
    assert [repr(headless_policy()) for _ in range(2)] == [
        "PolicyApprover('allow', 'MEOWGENT_APPROVE=allow')"
    ] * 2
    assert capsys.readouterr().err == (
        "meowgent_nb: MEOWGENT_APPROVE=all is an old spelling of MEOWGENT_APPROVE=allow; it still works,"
        " but write MEOWGENT_APPROVE=allow.\n"
    )
