"""``%agent decisions`` as HTML that reads at a laptop's width (issue 45, item 2): each column
wraps in its cell, long arguments are cut with the whole on hover and folded below, an edited call
reads asked -> ran, a tool's facts have their column, the badge says the decision and ``by`` who
decided; ``text/plain`` is `DecisionLog.table` as before. Real ``%%agent`` cells in a real
IPython shell; a rule, a person (an approver whose decisions carry ``by``, as the buttons' do) and
a denial with a reason decide."""

from __future__ import annotations

import re

from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.agent.approvals import PERSON_DECIDED, Approved, DecidedBy, Denied
from meowgent_nb.agent.approvals.decisions import session_decisions

LONG = "a line of text that goes on " * 4


@tool(approval=True, facts={"risk": lambda args: "modifies" if args["text"] else "read-only"})
def write_file(path: str, text: str = "") -> str:
    """Write text to a file."""
    return f"Wrote {path}."


def _call(path: str, text: str) -> str:
    return f'<tool_call>{{"name": "write_file", "arguments": {{"path": "{path}", "text": "{text}"}}}}</tool_call>'


class Person:
    """Edits notes.txt to keep.txt, denies old.txt with a reason: as the buttons would decide."""

    async def approve(self, requests):
        decisions = []
        for r in requests:
            if r.arguments["path"] == "notes.txt":
                edit = {"path": "keep.txt", "text": "hi"}
                decisions.append(
                    Approved("approved by you (edited)", edit, DecidedBy("person", "you (edited)"))
                )
            else:
                decisions.append(Denied("use the archive instead", "by you", PERSON_DECIDED))
        return decisions


def test_agent_decisions_is_an_html_table_that_wraps_with_the_text_table_as_text_plain(
    ip, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # no approvals.toml here
    session_decisions().clear()
    with capture_output():
        ip.run_line_magic("agent", "allow write_file path=scratch/**")
    ip.user_ns.update(
        write_file=write_file,
        model=ScriptedModel(
            [_call("scratch/a.txt", LONG) + _call("notes.txt", "hi") + _call("old.txt", ""), "Done."]
        ),
    )
    ip.meowgent.approver = Person()
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --new", "Write.")
    with capture_output() as shown:
        assert ip.run_line_magic("agent", "decisions") is None
    (output,) = shown.outputs
    assert (shown.stdout, output.data["text/plain"]) == ("", session_decisions().table())
    html = output.data["text/html"]
    assert re.findall(r"<th [^>]*>([^<]*)</th>", html) == [
        "#",
        "time",
        "tool",
        "arguments",
        "facts",
        "decision",
        "by",
        "reason",
    ]
    assert html.count("white-space: normal; word-break: normal; overflow-wrap: break-word") == 8 + 3 * 8
    rows = re.findall(r'<tr class="meowgent-decision">(.*?)</tr>', html)
    cells = [dict(re.findall(r'<td class="meowgent-decision-([a-z]+)"[^>]*>(.*?)</td>', row)) for row in rows]
    assert [c["decision"] for c in cells] == [
        f'<span style="background: {color}; color: white; border-radius: 3px; padding: 0 0.4em; font-size: 0.85em">{word}</span>'
        for color, word in (("#2e7d32", "approved"), ("#1976d2", "edited"), ("#757575", "denied"))
    ]
    assert [(c["facts"], c["by"], c["reason"]) for c in cells] == [
        ("risk=modifies", "rule 1 (write_file path=scratch/**)", ""),
        ("risk=modifies", "you (edited)", ""),
        ("risk=read-only", "you", "use the archive instead"),
    ]
    whole = f"path=&#x27;scratch/a.txt&#x27;, text=&#x27;{LONG}&#x27;"
    assert len(whole.replace("&#x27;", "'")) > 80
    short = whole.replace("&#x27;", "'")[:79].replace("'", "&#x27;") + "\u2026"
    mono = re.search(r'<code title="[^"]*" style="([^"]*)"', html).group(1)
    assert cells[0]["arguments"] == (
        f'<code title="{whole}" style="{mono}">{short}</code>'
        '<details class="meowgent-decision-whole"><summary style="cursor: pointer; opacity: 0.65; font-size: 0.85em">'
        f'all of it</summary><div><span style="opacity: 0.65; font-size: 0.85em">asked</span> <code style="{mono}">'
        f"{whole}</code></div></details>"
    )
    asked, ran = (
        "path=&#x27;notes.txt&#x27;, text=&#x27;hi&#x27;",
        "path=&#x27;keep.txt&#x27;, text=&#x27;hi&#x27;",
    )
    label = '<span style="opacity: 0.65; font-size: 0.85em">{}</span> '
    assert cells[1]["arguments"] == (
        f'{label.format("asked")}<code title="{asked}" style="{mono}">{asked}</code> \u2192 '
        f'{label.format("ran")}<code title="{ran}" style="{mono}">{ran}</code>'
    )
    assert '"asked"' not in html and "{" not in html
    session_decisions().clear()
    with capture_output() as shown:
        ip.run_line_magic("agent", "decisions")
    assert shown.outputs[0].data == {
        "text/plain": "No decisions yet in this session: no call has needed approval.",
        "text/html": '<div class="meowgent-decisions-empty" style="opacity: 0.65; font-size: 0.85em">'
        "No decisions yet in this session: no call has needed approval.</div>",
    }
    with capture_output():
        ip.run_line_magic("agent", "rules --remove 1")
