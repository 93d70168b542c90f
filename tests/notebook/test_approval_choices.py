"""The new approval choices without a kernel: what each choice decides and remembers, the row's rule
and reason boxes, the card's words, and ``%agent decisions``."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import Approved, Denied, tool
from meowgent_nb.agent.approvals import ApprovalRequest
from meowgent_nb.agent.approvals.decisions import session_decisions
from meowgent_nb.agent.rules import Rule, rule_text_for
from meowgent_nb.notebook.approvals.input_approvals import SessionChoices
from meowgent_nb.notebook.views._cards import Card, card_html_of, card_lines
from meowgent_nb.tools.calls import ToolCall, ToolResult


@tool(approval=True)
def write_file(path: str, text: str, mode: int = 0) -> str:
    """Write text to a file."""
    return "written"


@tool(approval=True)
def store(data: dict) -> str:
    """Store any JSON object."""
    return "stored"


def _request(tool_=write_file, **arguments: Any) -> ApprovalRequest:
    values = tool_.validate(arguments)
    return ApprovalRequest(ToolCall(tool_.name, arguments), tool_, values)


def test_allow_this_exact_call_allows_the_same_validated_call_and_asks_for_any_other():
    choices = SessionChoices()
    first = _request(path="a.txt", text="hi")
    assert choices.decide(first, "exact") == Approved("approved by you (this exact call, for this session)")
    later = Approved("allowed by this exact call (approved earlier in this session)")
    assert choices.remembered(_request(path="a.txt", text="hi")) == later
    assert choices.remembered(_request(path="a.txt", text="hi", mode=0)) == later  # the default, validated
    assert choices.remembered(_request(path="a.txt", text="hi", mode="0")) == later  # coerced to the same int
    for other in (
        {"path": "a.txt", "text": "hi "},
        {"path": "b.txt", "text": "hi"},
        {"path": "a.txt", "text": "hi", "mode": 1},
    ):
        assert choices.remembered(_request(**other)) is None
    assert choices.remembered(_request(store, data={"path": "a.txt", "text": "hi"})) is None  # another tool


def _typed(value: Any) -> Any:
    """A value with every leaf's type beside it: what "the same arguments" means."""
    if isinstance(value, dict):
        return ("dict", sorted((k, _typed(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, -0.0, 1.0, 0.5])
    | st.text("ab1", max_size=2),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text("ab", max_size=1), inner, max_size=2),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_an_exact_call_is_remembered_only_for_arguments_equal_in_value_and_type(first, second):
    choices = SessionChoices()
    choices.decide(_request(store, data={"v": first}), "exact")
    remembered = choices.remembered(_request(store, data={"v": second})) is not None
    assert remembered == (_typed(first) == _typed(second))


def test_deny_with_a_reason_gives_the_model_one_line_and_an_empty_reason_is_a_plain_denial():
    choices, request = SessionChoices(), _request(path="a.txt", text="hi")
    assert choices.decide(request, "deny", "  use the\narchive\tinstead ") == Denied(
        "use the archive instead", "by you"
    )
    assert choices.decide(request, "deny", " \n ") == Denied(reason="by you")
    assert choices.decide(request, "deny", "no\x1b[2K\x00\u2028way") == Denied("no [2K way", "by you")
    assert choices.decide(request, "deny", None) == Denied(reason="by you")
    long = choices.decide(request, "deny", "x" * 600)
    assert long.message == "x" * 497 + "..."


def test_allow_calls_like_this_adds_the_rule_it_was_given_and_a_refused_rule_decides_nothing():
    added: list[str] = []

    def add_rule(text: str) -> None:
        if "->" not in text:
            raise ValueError(f"{text!r} has no '-> allow|ask|deny'")
        added.append(text)

    choices = SessionChoices(add_rule=add_rule)
    request = _request(path="it's.txt", text="hi")
    assert choices.prefill(request) == 'write_file path="it\'s.txt" text="hi" mode=json:0 -> allow'
    with pytest.raises(ValueError, match="has no '-> allow"):
        choices.decide(request, "rule", "write_file path=*")
    with pytest.raises(ValueError, match="the rule is empty"):
        choices.decide(request, "rule", "  ")
    assert added == [] and choices.remembered(request) is None
    decision = choices.decide(request, "rule", "write_file  path=*.txt\n-> allow")
    assert decision == Approved("approved by you (rule added: write_file path=*.txt -> allow)")
    assert added == ["write_file path=*.txt -> allow"]
    default = SessionChoices(rule_text=lambda name, arguments: f"{name} {sorted(arguments)}")
    assert default.prefill(request) == "write_file ['mode', 'path', 'text']"
    default.decide(request, "rule", "write_file path=* -> allow")
    assert default.rules_added == ["write_file path=* -> allow"]
    # Unwired, the prefill is the rules' own exact-match text, and a rule is checked before it is kept.
    plain = SessionChoices()
    assert plain.prefill(request) == rule_text_for("write_file", dict(request.arguments))
    assert Rule.parse(plain.prefill(request)).matches("write_file", dict(request.arguments))
    with pytest.raises(ValueError):
        plain.decide(request, "rule", "write_file path=../* -> allow")
    assert plain.rules_added == []


def _row(choices: SessionChoices, outcomes: list):
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    request = _request(path="a.txt", text="hi")

    def on_choice(choice: str, value: Any) -> str | None:
        try:
            outcomes.append(choices.decide(request, choice, value))
        except ValueError as error:
            return str(error)
        return None

    return ApprovalRow(request, on_choice, lambda f, *a: f(*a), rule_text=lambda: choices.prefill(request))


def test_the_rule_box_opens_prefilled_and_a_refused_rule_shows_why_in_a_fresh_box():
    outcomes: list = []
    row = _row(
        SessionChoices(add_rule=lambda text: (_ for _ in ()).throw(ValueError("no such pattern"))), outcomes
    )
    assert (row.rule.view.layout.display, row.reason.view.layout.display) == ("none", "none")
    row._choose("like")
    assert row.rule.view.layout.display == "flex"
    assert row.rule.text.value == 'write_file path="a.txt" text="hi" mode=json:0 -> allow'
    first = row.rule.text
    first.value = "write_file path=*"
    row._choose("rule")
    assert outcomes == [] and row.rule.text is not first and row.rule.text.value == "write_file path=*"
    assert row.rule.problem.value == (
        '<pre class="meowgent-edit-problem" style="color: #c62828; white-space: pre-wrap">no such pattern\n'
        "Fix it, then try again.</pre>"
    )
    row.close()


def test_a_prefill_that_fails_opens_an_empty_rule_box_saying_so():
    from meowgent_nb.notebook.approvals._approval_row import ApprovalRow

    request = _request(path="a.txt", text="hi")
    row = ApprovalRow(request, lambda c, v: None, lambda f, *a: f(*a), rule_text=lambda: 1 / 0)
    row._choose("like")
    assert (row.rule.view.layout.display, row.rule.text.value) == ("flex", "")
    assert "No rule could be written from this call (ZeroDivisionError: division by zero); write one." in (
        row.rule.problem.value
    )
    row.close()


def test_the_reason_box_sends_its_line_as_the_denial():
    outcomes: list = []
    row = _row(SessionChoices(), outcomes)
    row._choose("reason")
    assert row.reason.view.layout.display == "flex"
    row.reason.text.value = "use the archive instead"
    row._choose("deny-reason")
    assert outcomes == [Denied("use the archive instead", "by you")]
    row.show('denied by you: "use the archive instead"')
    assert row.label.value == 'denied by you: "use the archive instead"'
    assert all(button.disabled for button in row.buttons) and row.reason.view.layout.display == "none"
    row.close()


def _card(decision, kind="denied", output="Denied: use the archive instead") -> Card:
    call = ToolCall("delete_file", {"path": "old.txt"})
    return Card(call, 1, 0.0, 1.0, ToolResult(call, output, kind=kind), decision, asked=True)


def test_the_card_says_who_decided_in_words():
    card = _card(Denied("use the archive instead", "by you"))
    assert (
        card_lines(card, False)[0]
        == "[tool] delete_file(path='old.txt') -> denied (by you: \"use the archive instead\")"
    )
    assert ">denied by you: &quot;use the archive instead&quot;</div>" in card_html_of(card, False)
    policy = _card(Approved("approved by policy: MEOWGENT_APPROVE=allow"), "ok", "deleted")
    assert (
        card_lines(policy, False)[0]
        == "[tool] delete_file(path='old.txt') -> done (approved by policy: MEOWGENT_APPROVE=allow)"
    )
    rule = _card(Approved("allowed by rule 2 (delete_file path=scratch/** -> allow)"), "ok", "deleted")
    assert card_lines(rule, False)[0].endswith(
        "-> done (allowed by rule 2 (delete_file path=scratch/** -> allow))"
    )
    denied_by_rule = _card(Denied("a rule denies it.", "denied by rule 1 (delete_file path=** -> deny)"))
    assert card_lines(denied_by_rule, False)[0].endswith(
        "-> denied (by rule 1 (delete_file path=** -> deny))"
    )


CALL = '<tool_call>{"name": "write_file", "arguments": {"path": "x.txt", "text": "hi"}}</tool_call>'


def test_agent_decisions_lists_the_sessions_decisions_as_a_table_and_a_dataframe(ip, monkeypatch):
    from meowgent_nb import ScriptedModel

    session_decisions().clear()
    ip.user_ns.update(write_file=write_file, model=ScriptedModel([CALL, "done", CALL, "done"]))
    with capture_output():
        ip.run_cell_magic("agent", "--model-object model --approve allow --new", "Write")
        ip.run_cell_magic("agent", "--model-object model --approve deny --new", "Write")
    with capture_output() as out:
        ip.run_line_magic("agent", "decisions")
    lines = out.outputs[0].data["text/plain"].splitlines()
    assert lines[0].split() == ["#", "time", "tool", "arguments", "decision", "by", "reason"]
    call = ["write_file", '{"mode":', "0,", '"path":', '"x.txt",', '"text":', '"hi"}']
    assert lines[2].split()[2:] == [*call, "approved", "policy:", "approve='allow'"]
    assert lines[3].split()[2:] == [
        *call,
        "denied",
        "policy:",
        "approve='deny'",
        "the",
        "notebook's",
        "approval",
        "setting",
        "(approve='deny')",
        "denies",
        "c...",
    ]
    frame = ip.run_line_magic("agent", "decisions --df")
    assert frame[["decision", "by"]].values.tolist() == [
        ["approved", "policy: approve='allow'"],
        ["denied", "policy: approve='deny'"],
    ]
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("agent", "decisions --csv")
    assert str(caught.value) == (
        "%agent decisions: unknown option '--csv'; use %agent decisions (a table) or %agent decisions --df"
        " (a pandas DataFrame)."
    )
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("agent", "decisions --df")
    assert str(caught.value) == (
        "%agent decisions --df: The decisions as a DataFrame need pandas, which is not installed here;"
        " `pip install pandas`, or use `%agent decisions` for the table as text."
    )
    session_decisions().clear()
    with capture_output() as out:
        ip.run_line_magic("agent", "decisions")
    assert (
        out.outputs[0].data["text/plain"] == "No decisions yet in this session: no call has needed approval."
    )
