"""A tool marked ``approval="always"`` (run_code) never runs without a person or a rule they set:
one test per surface (AutoApprove, a policy, approve="every", input(), a rule, a rule for another
risk, a served call, a cassette's replay with and without a recorded decision), through the real
CallRunner and Agent; and ``code_argument``, checked when the tool is made."""

from __future__ import annotations

import json

import pytest

from meowgent_nb import Agent, Approved, AutoApprove, Denied, ScriptedModel, ToolDefinitionError, tool
from meowgent_nb.agent.approvals import PERSON_DECIDED, DecidedBy
from meowgent_nb.agent.approvals.decisions import session_decisions
from meowgent_nb.agent.rules import Rules
from meowgent_nb.notebook.approvals import InputApprover, default_approver
from meowgent_nb.notebook.approvals.policy_approvals import headless_policy
from meowgent_nb.notebook.workspace.risk import code_risk
from meowgent_nb.recording.cassette import RecordingModel, ReplayModel

RAN: list[str] = []


@tool(approval="always", code_argument="code", facts={"risk": lambda args: code_risk(args["code"]).label})
def run_code(code: str) -> str:
    """Run Python code in the notebook.

    Args:
        code: The code.
    """
    RAN.append(code)
    return f"ran {code}"


READ = "print(df.shape)"
WRITE = "open('out.txt', 'w').write('x')"
POLICY_DENIAL = (
    "Denied: run_code runs only with a person's approval or a rule that allows it (a policy cannot"
    " approve it); allow it with a rule such as `%agent allow run_code risk=read-only`."
)


def _call(code: str) -> str:
    return "<tool_call>" + json.dumps({"name": "run_code", "arguments": {"code": code}}) + "</tool_call>"


def _run(approver, code=READ, **settings):
    agent = Agent(ScriptedModel([_call(code), "done"]), tools=[run_code], approver=approver, **settings)
    return agent.run("go")


class Person:
    """A person's answer (as the buttons give it: ``by`` a person), recording what was asked."""

    def __init__(self, decision):
        self.decision, self.asked = decision, []

    async def approve(self, requests):
        self.asked.extend(r.arguments["code"] for r in requests)
        return [self.decision for _ in requests]

    def __repr__(self):
        return "Person()"


@pytest.fixture(autouse=True)
def fresh():
    RAN.clear()
    session_decisions().clear()
    yield
    session_decisions().clear()


def _log() -> list[tuple[str, str, str, str]]:
    rows = [record.row() for record in session_decisions()]
    return [(r["facts"], r["decision"], r["by"], r["reason"]) for r in rows]


def test_auto_approve_cannot_run_it_and_the_model_and_the_log_are_told_why():
    result = _run(AutoApprove())
    assert [r.output for r in result.tool_results] == [
        "Denied: run_code runs only with a person's approval or a rule that allows it (the approver"
        " AutoApprove() cannot approve it); allow it with a rule such as `%agent allow run_code risk=read-only`."
    ]
    assert RAN == []
    assert _log() == [
        (
            "risk=read-only",
            "denied",
            'run_code\'s approval="always"',
            "run_code runs only with a person's approval or a rule that allows it (the approver"
            " AutoApprove() cannot approve it); allow it with a rule such as `%agent allow run_code risk=read-only`.",
        )
    ]
    assert session_decisions().table().splitlines()[0].split() == [
        "#",
        "time",
        "tool",
        "arguments",
        "facts",
        "decision",
        "by",
        "reason",
    ]


def test_the_allow_policy_cannot_run_it():
    result = _run(default_approver("allow"))
    assert [r.output for r in result.tool_results] == [POLICY_DENIAL]
    assert RAN == []


def test_meowgent_approve_allow_cannot_run_it(monkeypatch):
    monkeypatch.setenv("MEOWGENT_APPROVE", "allow")
    result = _run(headless_policy(), code=WRITE)
    assert [r.output for r in result.tool_results] == [POLICY_DENIAL]  # the example rule is read-only
    assert RAN == []
    assert _log()[0][:3] == ("risk=writes-files", "denied", 'run_code\'s approval="always"')


def test_approve_every_puts_it_to_the_approver_and_an_automatic_one_still_cannot_run_it():
    person = Person(Approved("approved by you", by=PERSON_DECIDED))
    assert [r.output for r in _run(person, approve="every").tool_results] == ["ran print(df.shape)"]
    assert person.asked == [READ]
    assert [r.output for r in _run(AutoApprove(), approve="every").tool_results] == [
        POLICY_DENIAL.replace("(a policy", "(the approver AutoApprove()")
    ]
    assert RAN == [READ]


def test_a_person_answering_input_runs_it_and_always_allow_keeps_counting_as_the_person(monkeypatch):
    answers = iter(["a"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    approver = InputApprover()
    assert [r.output for r in _run(approver).tool_results] == ["ran print(df.shape)"]
    assert [r.output for r in _run(approver, code=WRITE).tool_results] == [f"ran {WRITE}"]
    assert [(f, d, b) for f, d, b, _ in _log()] == [
        ("risk=read-only", "approved", "you (always allow, for this session)"),
        ("risk=writes-files", "approved", "always allow (for this session)"),
    ]


def test_an_approver_that_does_not_say_a_person_decided_cannot_run_it():
    unsaid = Person(Approved("approved by you"))  # no `by`: it may be a script
    assert [r.output for r in _run(unsaid).tool_results] == [
        POLICY_DENIAL.replace("(a policy", "(the approver Person()")
    ]
    machine = Person(Approved("fine", by=DecidedBy("approver", "a service")))
    assert [r.output for r in _run(machine).tool_results] == [
        POLICY_DENIAL.replace("(a policy", "(the approver Person()")
    ]
    assert RAN == []


def test_a_rule_the_person_set_allows_it_without_asking():
    person = Person(Denied("no", "by you", PERSON_DECIDED))
    result = _run(person, rules=["run_code risk=read-only -> allow"])
    assert [r.output for r in result.tool_results] == ["ran print(df.shape)"]
    assert person.asked == []
    assert _log() == [("risk=read-only", "approved", "rule 1 (run_code risk=read-only)", "")]


def test_a_rule_for_another_risk_leaves_it_to_the_person_and_a_policy_still_cannot_run_it():
    rules = ["run_code risk=read-only -> allow"]
    result = _run(AutoApprove(), code=WRITE, rules=rules)
    assert [r.output for r in result.tool_results] == [
        POLICY_DENIAL.replace("(a policy", "(the approver AutoApprove()")
    ]
    person = Person(Approved("approved by you", by=PERSON_DECIDED))
    assert [r.output for r in _run(person, code=WRITE, rules=rules).tool_results] == [f"ran {WRITE}"]
    assert person.asked == [WRITE]


def test_a_served_call_meets_the_same_rule():
    from meowgent_nb.mcp import McpToolbox, McpToolError, ToolServer

    rules = Rules(["run_code risk=read-only -> allow"])
    server = ToolServer([run_code], include_approval_tools=True, approver=AutoApprove(), rules=rules)
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            assert box["nb_run_code"].run({"code": READ}) == "ran print(df.shape)"
            with pytest.raises(McpToolError) as caught:
                box["nb_run_code"].run({"code": WRITE})
    finally:
        server.stop()
    assert str(caught.value) == POLICY_DENIAL.replace("(a policy", "(the approver AutoApprove()")
    assert RAN == [READ]


def _record(path, approver, *codes):
    inner = ScriptedModel(["".join(_call(code) for code in codes), "done"])
    return Agent(RecordingModel(inner, path), tools=[run_code], approver=approver).run("go")


def _replay(path, approver, *codes):
    return Agent(ReplayModel(path), tools=[run_code], approver=approver).run("go")


def test_a_replay_with_no_one_to_ask_follows_the_persons_recorded_decisions(tmp_path, monkeypatch):
    path = tmp_path / "run.cassette.json"

    class Clicks:
        def __init__(self):
            self.answers = [
                Approved(
                    "approved by you (edited)",
                    {"code": "print(df.head())"},
                    DecidedBy("person", "you (edited)"),
                ),
                Denied("not the files", "by you", PERSON_DECIDED),
            ]

        async def approve(self, requests):
            return [self.answers.pop(0) for _ in requests]

    recorded = _record(path, Clicks(), READ, WRITE)
    entries = [json.loads(e) for e in path.read_text().split("\n\n") if e.startswith('{"decision"')]
    assert entries == [
        {
            "decision": "edited",
            "tool": "run_code",
            "arguments": {"code": READ},
            "by": "you (edited)",
            "ran_with": {"code": "print(df.head())"},
        },
        {
            "decision": "denied",
            "tool": "run_code",
            "arguments": {"code": WRITE},
            "by": "you",
            "reason": "not the files",
        },
    ]
    RAN.clear()
    session_decisions().clear()
    monkeypatch.setenv("MEOWGENT_APPROVE", "deny")
    replayed = _replay(path, headless_policy())
    outputs = [r.output for r in replayed.tool_results]
    assert (
        outputs
        == [r.output for r in recorded.tool_results]
        == [
            "(The person changed the arguments before approving; the call ran with"
            ' {"code": "print(df.head())"}.)\nran print(df.head())',
            "Denied: not the files",
        ]
    )
    assert RAN == ["print(df.head())"]
    assert [(d, b) for _, d, b, _ in _log()] == [
        ("edited", "you (edited), when the cassette was recorded"),
        ("denied", "you, when the cassette was recorded"),
    ]
    assert [r.words for r in session_decisions()] == [
        "approved by you (edited), when the cassette was recorded",
        "denied by you, when the cassette was recorded",
    ]


def test_a_replay_without_a_recorded_decision_denies_it_as_a_policy_would(tmp_path):
    path = tmp_path / "run.cassette.json"
    _record(path, AutoApprove(), "print(1)")
    entries = path.read_text().split("\n\n")
    path.write_text("\n\n".join(e for e in entries if not e.startswith('{"decision"')))
    session_decisions().clear()
    result = _replay(path, AutoApprove())
    assert [r.output for r in result.tool_results] == [
        POLICY_DENIAL.replace("(a policy", "(the approver AutoApprove()")
    ]
    assert RAN == []
    assert _log()[0][1:3] == ("denied", 'run_code\'s approval="always"')


def test_code_argument_must_name_a_str_parameter():
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(code_argument="source", approval="sometimes")
        def run(code: str, lines: int = 1) -> str:
            """Run."""
            return code

    assert str(raised.value) == (
        "Cannot make a tool from test_always_approval.test_code_argument_must_name_a_str_parameter.<locals>.run:\n"
        "- code_argument 'source' is not a parameter (the parameters are: code, lines)\n"
        "- approval must be True, False, \"always\" or a function of the arguments, got 'sometimes'"
    )
    with pytest.raises(ToolDefinitionError) as raised:

        @tool(code_argument="lines")
        def count(lines: int) -> int:
            """Count."""
            return lines

    assert str(raised.value).endswith(
        "- code_argument 'lines' must be a str parameter; annotate it `lines: str`"
    )
    assert (run_code.code_argument, run_code.approval) == ("code", "always")
