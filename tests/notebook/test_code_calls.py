"""A call carrying code (its tool's ``code_argument``): its approval row, its ``input()`` question and its card."""

from __future__ import annotations

import asyncio
import builtins
import re
from typing import Any

import pytest

from meowgent_nb import Agent, Approved, ScriptedModel, tool
from meowgent_nb.agent.approvals import ApprovalRequest
from meowgent_nb.notebook.approvals.input_approvals import SessionChoices, ask_by_input
from meowgent_nb.notebook.views._code_html import CODE_LINES, code_html
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.notebook.workspace import code_risk
from meowgent_nb.tools.calls import ToolCall
from tests.support.tool_calls import call


def _run_code_tool() -> Any:
    namespace: dict[str, Any] = {}

    @tool(approval=True, facts={"risk": lambda arguments: code_risk(arguments["code"]).label})
    def run_code(code: str) -> str:
        """Run Python code.

        Args:
            code: The code.
        """
        lines: list[str] = []
        exec(code, {**namespace, "print": lambda *a: lines.append(" ".join(map(str, a)))})
        return "\n".join(lines)

    run_code.code_argument = "code"  # type: ignore[attr-defined]  # set by @tool once Tool has it
    return run_code


def _request(code: str) -> ApprovalRequest:
    run_code = _run_code_tool()
    return ApprovalRequest(ToolCall("run_code", {"code": code}), run_code, {"code": code})


# --- the approval row -------------------------------------------------------------------------


@pytest.fixture
def row():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    chosen: list = []
    made = ApprovalRow(_request("df.head()"), lambda c, a: chosen.append((c, a)), lambda f, *a: f(*a))
    made.chosen = chosen
    return made


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html).replace("&#x27;", "'").replace("&quot;", '"')


def test_the_row_shows_the_code_highlighted_with_its_risk_above_the_buttons(row):
    assert row.view.children[0] is row.code_view
    assert _text(row.code_view.value) == "wants to run this code risk: read-onlydf.head()"
    assert '<span class="meowgent-risk" title="nothing above read-only was found"' in row.code_view.value
    assert 'df<span style="color: #666">.</span>head()</pre>' in row.code_view.value  # highlighted
    assert row.editor.value == "df.head()"  # the code as text, not the JSON of the arguments


def test_the_edit_button_of_a_code_call_says_edit_code():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    names = [
        b.description for b in ApprovalRow(_request("x"), lambda c, a: None, lambda f, *a: f(*a)).buttons
    ]
    request = _request("x")
    request.tool.code_argument = None
    plain = [b.description for b in ApprovalRow(request, lambda c, a: None, lambda f, *a: f(*a)).buttons]
    assert names[:3] == ["Approve", "Edit code", "Deny"]
    assert plain[:3] == ["Approve", "Edit arguments", "Deny"]
    assert names[3:] == plain[3:]


def test_edit_check_shows_the_new_codes_risk_and_what_it_is_based_on_then_runs_it(row):
    row._choose("edit")
    row.editor.value = 'import os\nos.remove("a.txt")'
    row._choose("check")
    assert _text(row.problem.value) == (
        'will run risk: deletesimports os (line 1)uses os.remove (line 2)import os\nos.remove("a.txt")'
    )
    assert row.approve_edited.layout.display == "inline-flex"
    row.editor.value = "print(1)"  # typed after the check, never checked
    row._choose("approve-edited")
    assert row.chosen == [("approve", {"code": 'import os\nos.remove("a.txt")'})]


def test_an_unchanged_code_approved_from_the_edit_box_is_a_plain_approval(row):
    row._choose("edit")
    row._choose("check")
    row._choose("approve-edited")
    assert row.chosen == [("approve", None)]


def test_a_tool_without_a_code_argument_keeps_the_json_editor():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    request = _request("x")
    request.tool.code_argument = None
    made = ApprovalRow(request, lambda c, a: None, lambda f, *a: f(*a))
    assert (made.code_view, made.editor.value) == (None, '{\n  "code": "x"\n}')


# --- input() ----------------------------------------------------------------------------------


def _answers(monkeypatch: pytest.MonkeyPatch, *answers: str) -> None:
    given = iter(answers)
    monkeypatch.setattr(builtins, "input", lambda prompt="": (print(prompt, end=""), next(given))[1])


def test_input_shows_the_code_numbered_with_its_label_and_c_runs_typed_code(monkeypatch, capsys):
    _answers(monkeypatch, "c", "total = 1", "print(total)", ".", "y")
    decision = ask_by_input(_request("print(2)"), SessionChoices())
    assert decision == Approved("approved by you (edited)", {"code": "total = 1\nprint(total)"}, decision.by)
    assert capsys.readouterr().out == (
        "run_code wants to run this code (risk: read-only):\n"
        "  1 | print(2)\n"
        "Run it? [y]es / [n]o / [a]lways / [e]xact call / [r]ule / [d]eny with a reason / [c]hange the code: "
        "Type the new code; end it with a line with only a '.':\n"
        "run_code would run your code (risk: modifies):\n"
        "  1 | total = 1\n"
        "  2 | print(total)\n"
        "  based on: has a statement that binds or changes: total = 1 (line 1)\n"
        "Run your code? [y]es / [n]o (back to the choices): "
    )


def test_input_new_code_refused_goes_back_to_the_choices(monkeypatch, capsys):
    _answers(monkeypatch, "c", "import os", ".", "n", "n")
    decision = ask_by_input(_request("print(2)"), SessionChoices())
    assert (type(decision).__name__, decision.reason) == ("Denied", "by you")
    assert capsys.readouterr().out.count("Run it? ") == 2


# --- the card after the call ran --------------------------------------------------------------


class Editing:
    def __init__(self, code: str):
        self.code = code

    async def approve(self, requests: list) -> list:
        return [Approved("approved by you (edited)", {"code": self.code}) for _ in requests]


def _ran(code: str, approver: Any) -> Transcript:
    agent = Agent(
        ScriptedModel([call("run_code", code=code), "Done."]), tools=[_run_code_tool()], approver=approver
    )
    transcript = Transcript()

    async def follow() -> None:
        async for event in agent.stream("Go."):
            transcript.handle(event)

    asyncio.run(follow())
    return transcript


def test_the_card_of_edited_code_shows_the_code_that_ran_its_label_and_ran_as_edited():
    transcript = _ran("print(6 * 7)", Editing("print(6 * 9)"))
    assert transcript.to_text() == (
        "[tool] run_code (ran as edited) -> done (approved by you (edited))\n"
        "  code (risk: read-only):\n"
        "    print(6 * 9)\n"
        "  the model's code:\n"
        "    print(6 * 7)\n"
        "  54\n"
        "Done."
    )
    html = transcript.to_html()
    card = html[html.index('<div class="meowgent-card') : html.index("meowgent-output")]
    assert '<span class="meowgent-edited"' in card and ">ran as edited</span>" in card
    assert ">risk: read-only</span>" in card
    ran = re.search(r'<pre class="meowgent-code" [^>]*>(.*?)</pre>', card, re.DOTALL).group(1)
    model = re.search(r'<pre class="meowgent-code-model" [^>]*>(.*?)</pre>', card, re.DOTALL).group(1)
    assert (_text(ran), _text(model)) == ("print(6 * 9)", "print(6 * 7)")
    assert '<span style="color: #008000">print</span>' in ran  # highlighted
    assert "meowgent-arguments" not in card  # the code is the only argument: no JSON of it
    assert "The person" not in html  # the model's note of the code that ran: the card shows the code once


def test_the_model_still_reads_the_code_that_ran_which_the_card_shows_once():
    model = ScriptedModel([call("run_code", code="print(6 * 7)"), "Done."])
    agent = Agent(model, tools=[_run_code_tool()], approver=Editing("print(6 * 9)"))
    (result,) = agent.run("Go.").tool_results
    assert result.output == (
        '(The person changed the arguments before approving; the call ran with {"code": "print(6 * 9)"}.)\n54'
    )


def test_the_card_of_code_run_as_written_shows_it_unmarked():
    from meowgent_nb import AutoApprove

    transcript = _ran("print(1 + 1)", AutoApprove())
    assert transcript.to_text() == (
        "[tool] run_code -> done (approved automatically)\n  code (risk: read-only):\n    print(1 + 1)\n  2\nDone."
    )
    assert "meowgent-edited" not in transcript.to_html()


# --- the code block ---------------------------------------------------------------------------


def test_code_past_a_few_lines_is_numbered_and_past_the_limit_folds_with_hidden_characters_shown():
    assert "user-select: none" not in code_html("a\nb\nc\nd\ne")
    numbered = code_html("\n".join(f"x{i}" for i in range(6)))
    assert re.findall(r"min-width: 1ch\">(\d+)</span>", numbered) == ["1", "2", "3", "4", "5", "6"]
    long = code_html("\n".join(f"x{i}" for i in range(CODE_LINES + 5)))
    shown = long[: long.index("<details")]
    assert (shown.count("\n") + 1, "show all 35 lines</summary>" in long) == (CODE_LINES, True)
    assert "x34" not in shown and "x34" in long
    hidden = code_html("name = 'report\u202etxt.exe'")
    assert "\u202e" not in hidden and "\\u202e" in hidden


def test_a_badge_without_its_reasons_claims_none_for_a_riskier_label():
    from meowgent_nb.notebook.views._code_html import risk_html

    assert risk_html("modifies").startswith('<span class="meowgent-risk" style=')  # no title
    assert 'title="nothing above read-only was found"' in risk_html("read-only")
    assert 'title="imports os (line 1)"' in risk_html("modifies", ["imports os (line 1)"])
