"""``%agent context`` and the footer's window line, through a real IPython shell."""

from __future__ import annotations

import re

from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.notebook.agent_magics import AgentMagics

CALL = '<tool_call>{"name": "c_add", "arguments": {"a": 1, "b": 2}}</tool_call>'


def magics(shell) -> AgentMagics:
    return shell.magics_manager.registry["AgentMagics"]


@tool
def c_add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def ask(ip, text: str, *, new: bool = False):
    with capture_output() as out:
        ip.run_cell(f"%%agent --model-object m --tools c_add{' --new' if new else ''}\n{text}")
    return out


def test_context_before_any_request_says_so(ip):
    magics(ip).context_log.clear()
    assert repr(ip.run_line_magic("agent", "context")) == (
        "(no request yet: the context is shown after the first %%agent cell)"
    )


def test_context_shows_the_last_requests_parts_and_messages_as_a_stable_table(ip):
    ip.user_ns.update(c_add=c_add, m=ScriptedModel([CALL, "It is 3.", "Still 3."]))
    ask(ip, "What is 1+2?", new=True)
    out = ask(ip, "Sure?")
    view = ip.run_line_magic("agent", "context")
    text = repr(view)
    head, messages = text.split("\nMessages sent:\n")
    lines = head.splitlines()
    assert lines[0] == "Request 3 of the conversation, to ScriptedModel (estimated from its characters):"
    assert [line.split()[0:2] for line in lines[1:8]] == [
        ["tool", "rules"],
        ["tool", "descriptions"],
        ["your", "instructions"],
        ["earlier", "turns"],
        ["tool", "results"],
        ["the", "new"],
        ["the", "answer"],
    ]
    assert lines[6].split()[-1] == "~2" and lines[7].split()[-1] == "~2"  # "Sure?", "Still 3."
    assert lines[-1] == "  (the model's context window is not known here)"
    assert messages.splitlines()[-3:] == [
        "  Use these results to answer the user's question in plain text.",
        "[assistant] It is 3.",
        "[user] Sure?",
    ]
    html = view._repr_html_()
    assert len(re.findall('class="meowgent-context-turn"', html)) == 3  # one bar a request
    assert "<script" not in html
    footers = re.findall(
        r'class="meowgent-footer"[^>]*>(.*?)</div>', str(out.outputs[-1].data.get("text/html", ""))
    )
    assert (
        footers
        and f"context ~{magics(ip).context_log[-1].measure(ip.user_ns['m']).used:,} tokens" in footers[-1]
    )


def test_reset_and_new_forget_the_context(ip):
    ip.user_ns.update(c_add=c_add, m=ScriptedModel(["One.", "Two."]))
    ask(ip, "one", new=True)
    assert len(magics(ip).context_log) == 1
    ask(ip, "two", new=True)
    assert [r.turn for r in magics(ip).context_log] == [1]
    with capture_output():
        ip.run_line_magic("agent", "reset")
    assert len(magics(ip).context_log) == 0
