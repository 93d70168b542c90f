"""The seam by which rules match code's risk: a tool's facts, derived from the validated arguments
(``@tool(facts=...)``), seen by the rules beside the arguments and never settable by the model.
Run through a real `Agent` with a scripted model, as `run_code` will be."""

from __future__ import annotations

import asyncio

import pytest

from meowgent_nb import Agent, Approved, Denied, ScriptedModel, tool
from meowgent_nb.agent.rules import Rules
from meowgent_nb.errors import ToolDefinitionError
from meowgent_nb.events import ApprovalEvent
from meowgent_nb.notebook.workspace import code_risk
from tests.support.tool_calls import call

ran: list[str] = []


@tool(approval=True, facts={"risk": lambda arguments: code_risk(arguments["code"]).label})
def run_snippet(code: str) -> str:
    """Run a snippet (here: only note it)."""
    ran.append(code)
    return f"ran {code}"


class Recording:
    """Answers each request with ``decision`` and records what it was asked."""

    def __init__(self, decision):
        self.decision, self.asked = decision, []

    async def approve(self, requests):
        self.asked.extend(dict(r.arguments) for r in requests)
        return [self.decision for _ in requests]


def run(agent, *calls):
    ran.clear()
    agent.model = ScriptedModel(["".join(calls), "Done."])

    async def collect():
        return [event async for event in agent.stream("go")]

    events = asyncio.run(collect())
    decided = [(type(e.decision).__name__, e.decision.reason) for e in events if isinstance(e, ApprovalEvent)]
    return decided, [(r.kind, r.output) for r in agent.last_result.tool_results]


@pytest.fixture(autouse=True)
def no_rules_file_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Agent reads approvals.toml in the working directory


def test_a_rule_on_risk_allows_reading_asks_the_rest_and_denies_the_riskiest():
    approver = Recording(Denied(reason="by you"))
    agent = Agent(
        ScriptedModel([]),
        tools=[run_snippet],
        approver=approver,
        rules=["run_snippet risk=read-only -> allow", "run_snippet risk={runs-commands,unreadable} -> deny"],
    )
    decided, results = run(
        agent,
        call("run_snippet", code="df.head()"),
        call("run_snippet", code="df['a'] = 0"),
        call("run_snippet", code="!rm -rf data"),
    )
    assert decided == [
        ("Approved", "allowed by rule 1 (run_snippet risk=read-only)"),
        ("Denied", "by you"),
        ("Denied", "denied by rule 2 (run_snippet risk={runs-commands,unreadable})"),
    ]
    assert results == [
        ("ok", "ran df.head()"),
        ("denied", "Denied: the person did not approve this call."),
        ("denied", "Denied: rule 2 (run_snippet risk={runs-commands,unreadable}) denies this call."),
    ]
    assert (ran, approver.asked) == (["df.head()"], [{"code": "df['a'] = 0"}])


def test_the_model_cannot_set_the_risk_itself():
    approver = Recording(Approved("approved by you"))
    agent = Agent(
        ScriptedModel([]),
        tools=[run_snippet],
        approver=approver,
        rules=["run_snippet risk=read-only -> allow"],
    )
    _, results = run(agent, call("run_snippet", code="!rm -rf data", risk="read-only"))
    assert [kind for kind, _ in results] == ["invalid_arguments"]
    assert "risk" in results[0][1]
    assert (ran, approver.asked) == ([], [])


def test_a_fact_that_fails_denies_the_call():
    @tool(facts={"risk": lambda arguments: 1 / 0})
    def broken(code: str) -> str:
        """Never runs."""
        ran.append(code)
        return code

    agent = Agent(ScriptedModel([]), tools=[broken], approver=Recording(Approved("yes")))
    decided, results = run(agent, call("broken", code="df.head()"))
    assert decided == [("Denied", "broken's facts failed")]
    assert results == [
        (
            "denied",
            "Denied: broken's facts failed (ZeroDivisionError: division by zero), so the call was not run.",
        )
    ]
    assert ran == []


def test_a_rule_naming_a_fact_is_no_unknown_argument():
    rules = Rules(["run_snippet risk=read-only -> allow", "run_snippet level=x -> allow"])
    assert rules.unknown_tools([run_snippet]) == [
        "the rule 'run_snippet level=x -> allow' never matches: run_snippet takes no argument 'level'"
        " (it takes: code, risk)"
    ]


def test_bad_facts_are_one_error_naming_each_problem():
    def run_code(code: str) -> str:
        """Run code."""
        return code

    with pytest.raises(ToolDefinitionError) as raised:
        tool(run_code, facts={"code": len, "my risk": len, "level": "high"})
    assert list(raised.value.problems) == [
        "the fact 'code' is also a parameter; rename one, or the model could set it",
        "the fact name 'my risk' is not an identifier; a rule names it as NAME=PATTERN",
        "the fact 'level' must be a function of the arguments, got 'high'",
    ]
    assert tool(run_code).facts == {}
