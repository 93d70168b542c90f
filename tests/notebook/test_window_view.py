"""``%agent context`` and the footer's window line, through a real IPython shell."""

from __future__ import annotations

import re

from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.notebook.magics.agent_magics import AgentMagics

CALL = '<tool_call>{"name": "c_add", "arguments": {"a": 1, "b": 2}}</tool_call>'


def magics(shell) -> AgentMagics:
    return shell.magics_manager.registry["AgentMagics"]


@tool
def c_add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def ask(ip, text: str, *, new: bool = False, tools: str = "c_add"):
    with capture_output() as out:
        ip.run_cell(f"%%agent --model-object m --tools {tools}{' --new' if new else ''}\n{text}")
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


def test_the_compaction_of_a_conversation_lasts_from_cell_to_cell(ip):
    page = "lorem ipsum dolor sit amet " * 60

    @tool
    def c_fetch(page_number: int) -> str:
        """Fetch a page."""
        return f"page {page_number}: {page}"

    answers = []
    for i in range(6):
        answers += [
            f'<tool_call>{{"name": "c_fetch", "arguments": {{"page_number": {i}}}}}</tool_call>',
            f"Read {i}.",
        ]
    model = ScriptedModel(answers)
    model.n_ctx = 2048
    ip.user_ns.update(c_fetch=c_fetch, m=model)
    texts = []
    for i in range(6):
        out = ask(ip, f"Read page {i}", new=i == 0, tools="c_fetch").outputs
        texts.append(out[-1].data["text/plain"])
    notes = [line for text in texts for line in text.splitlines() if line.startswith("[context:")]
    assert notes == [
        "[context: shortened 2 tool results and left out the 1 oldest exchange to fit the model's window of 2,048"
        " tokens (about 1,597 -> 850 tokens)]",
        "[context: shortened 2 tool results and left out the 2 oldest exchanges to fit the model's window of 2,048"
        " tokens (about 1,816 -> 850 tokens)]",
    ]
    assert magics(ip).compaction.dropped > 0 and len(magics(ip).messages) == 24
    dropped, shortened = magics(ip).compaction.dropped, len(magics(ip).compaction.shortened)
    said = (
        f"  As sent, to fit the window: the {dropped} oldest messages left out; {shortened} tool"
        f" result{'s' * (shortened != 1)} shortened. The conversation keeps them all."
    )
    view = ip.run_line_magic("agent", "context")
    assert said in repr(view).splitlines() and said.strip() in view._repr_html_()
    with capture_output():
        ip.run_line_magic("agent", "reset")
    assert magics(ip).compaction.dropped == 0 and magics(ip).compaction.shortened == {}


def test_hostile_text_in_the_messages_is_shown_never_run(ip):
    @tool
    def c_page() -> str:
        """Fetch the page."""
        return '<script>alert(1)</script><img src=x onerror="alert(2)"></pre></details>\x1b[31mred\x07'

    call = '<tool_call>{"name": "c_page", "arguments": {}}</tool_call>'
    ip.user_ns.update(c_page=c_page, m=ScriptedModel([call, "</div><style>body{display:none}</style>"]))
    ask(ip, 'Show it <iframe src="javascript:alert(3)">', new=True, tools="c_page")
    view = ip.run_line_magic("agent", "context")
    html = view._repr_html_()
    for live in ("<script", "<img", "<iframe", "<style", "</pre></details>\x1b"):
        assert live not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html
    assert "&lt;iframe src=&quot;javascript:alert(3)&quot;&gt;" in html
    assert html.count("<details>") == html.count("</details>") == 1  # the structure is ours alone
    text = repr(view)
    assert "\x1b" not in text and "\x07" not in text
    assert '[user] Show it <iframe src="javascript:alert(3)">' in text.splitlines()


def test_summarize_through_the_magics_shows_the_summary_as_sent(ip):
    from meowgent_nb import FunctionModel
    from meowgent_nb.agent.window._summary import SUMMARY_HEADER, SYSTEM

    page = "lorem ipsum dolor sit amet " * 60

    @tool
    def c_fetch(page_number: int) -> str:
        """Fetch a page."""
        return f"page {page_number}: {page}"

    def answer(messages, tools):
        if messages[0]["content"] == SYSTEM:
            return "Pages were read."
        last = messages[-1]["content"]
        if last.startswith("Read page"):
            return f'<tool_call>{{"name": "c_fetch", "arguments": {{"page_number": {last.split()[-1]}}}}}</tool_call>'
        return "Read."

    model = FunctionModel(answer)
    model.n_ctx = 2048
    ip.user_ns.update(c_fetch=c_fetch, m=model)
    ip.run_line_magic("config", "AgentMagics.context = 'summarize'")
    try:
        texts = [
            ask(ip, f"Read page {i}", new=i == 0, tools="c_fetch").outputs[-1].data["text/plain"]
            for i in range(5)
        ]
    finally:
        ip.run_line_magic("config", "AgentMagics.context = 'compact'")
    notes = [line for text in texts for line in text.splitlines() if line.startswith("[context:")]
    assert notes == [
        "[context: shortened 2 tool results and left out the 2 oldest exchanges (summarized in about 33 tokens)"
        f" to fit the model's window of 2,048 tokens (about {before} -> 664 tokens)]"
        for before in ("1,597", "1,630")  # the second time, the first summary is among what is sent
    ]
    text = repr(ip.run_line_magic("agent", "context"))
    dropped = magics(ip).compaction.dropped
    assert (
        f"  As sent, to fit the window: the {dropped} oldest messages left out, the model's summary of them in"
        " their place. The conversation keeps them all."
    ) in text.splitlines()
    assert f"[assistant] {SUMMARY_HEADER}\n  Pages were read.\n[user] Read page 4" in text
