"""One approval row's edit box with broken and hostile text: nothing is approved until a Check shows what runs."""

from __future__ import annotations

import pytest

from meowgent_nb import tool
from meowgent_nb.agent.approvals import ApprovalRequest
from meowgent_nb.tools.calls import ToolCall


@tool(approval=True)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    return "written"


@pytest.fixture
def row():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    arguments = {"path": "a.txt", "text": "hi"}
    chosen: list = []
    made = ApprovalRow(
        ApprovalRequest(ToolCall("write_file", arguments), write_file, arguments),
        lambda c, a: chosen.append((c, a)),
        lambda f, *a: f(*a),
    )
    made.chosen = chosen
    made._choose("edit")
    return made


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"path": "a.txt", "text": ', "Expecting value: line 1 column 27 (char 26)"),
        ('["a.txt", "hi"]', "the arguments must be a JSON object, {...}"),
        ('{"path": "a.txt"}', "- text: missing; this argument is required"),
    ],
)
def test_broken_text_is_refused_with_its_problem_and_approve_stays_hidden(row, text, problem):
    row.editor.value = text
    row._choose("check")
    assert problem in row.problem.value and "Fix the arguments, then check again." in row.problem.value
    assert (row.checked, row.approve_edited.layout.display) == (None, "none")
    row._choose("approve-edited")  # a click that could only come from a stale page
    assert row.chosen == []


def test_what_runs_is_what_the_check_showed_even_if_the_box_changed_since(row):
    row.editor.value = '{"path": "report\\u202etxt.exe", "text": "x"}'
    row._choose("check")
    assert "will run: write_file(path=&#x27;report\\u202etxt.exe&#x27;" in row.problem.value
    assert "\u202e" not in row.problem.value  # shown as an escape, never as the character that turns the text
    row.editor.value = '{"path": "/etc/passwd", "text": "x"}'  # typed after the check, never checked
    row._choose("approve-edited")
    assert row.chosen == [("approve", {"path": "report\u202etxt.exe", "text": "x"})]


def _titled(title: str) -> ApprovalRequest:
    from meowgent_nb.mcp.client.toolbox import mcp_tool

    spec = {
        "name": "search",
        "title": title,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    made = mcp_tool(spec, lambda name, arguments: "", prefix="web_")
    return ApprovalRequest(ToolCall("web_search", {"q": "cats"}), made, {"q": "cats"})


def test_an_mcp_tools_title_is_shown_above_the_buttons_and_in_the_text_forms_with_hidden_characters_escaped():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow
    from meowgent_nb.notebook.approvals.policy_approvals import call_text, row_html

    request = _titled("Search <b>the</b> web\u202e")
    row = ApprovalRow(request, lambda c, a: None, lambda f, *a: f(*a))
    assert row.view.children[0] is row.title
    assert row.title.value.startswith(
        '<div class="meowgent-approval-title">Search &lt;b&gt;the&lt;/b&gt; web'
        '<span class="meowgent-hidden-char" title="U+202E RIGHT-TO-LEFT OVERRIDE"'
    )
    assert row.title.value.endswith(">\\u202e</span></div>") and "\u202e" not in row.title.value
    assert call_text(request) == "web_search(q='cats') (Search <b>the</b> web\\u202e)"
    assert "<code>web_search</code> Search &lt;b&gt;the&lt;/b&gt; web<span" in row_html(request, "")
    row.close()


def test_a_tool_without_a_title_shows_none():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow
    from meowgent_nb.notebook.approvals.policy_approvals import call_text

    arguments = {"path": "a.txt", "text": "hi"}
    request = ApprovalRequest(ToolCall("write_file", arguments), write_file, arguments)
    row = ApprovalRow(request, lambda c, a: None, lambda f, *a: f(*a))
    assert row.title is None and len(row.view.children) == 4  # the line, then the edit, rule and reason boxes
    assert call_text(request) == "write_file(path='a.txt', text='hi')"
