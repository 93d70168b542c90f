"""Rules and ``@tool(approval=function)`` in the one decide step (`CallRunner`), before any approver:
in the loop, for edited arguments, from a rules file, and for a served MCP client."""

from __future__ import annotations

import os
import time
import warnings

import pytest

from meowgent_nb import Agent, Approved, AutoApprove, Denied, ScriptedModel, tool
from meowgent_nb.agent.rules import RuleError, Rules
from meowgent_nb.events import ApprovalEvent
from tests.support.tool_calls import call


@tool(approval=True)
def delete_file(path: str, force: bool = False) -> str:
    """Delete a file."""
    return f"deleted {path}" + (" (forced)" if force else "")


@tool
def list_files(folder: str = ".") -> str:
    """List files."""
    return f"files in {folder}"


class Recording:
    """Answers each request with ``decision`` and records what it was asked."""

    def __init__(self, decision=None):
        self.decision = decision or Approved("approved by you")
        self.asked = []

    async def approve(self, requests):
        self.asked.extend((r.tool.name, dict(r.arguments)) for r in requests)
        return [self.decision for _ in requests]


def run(agent, *calls):
    agent.model = ScriptedModel(["".join(calls), "Done."])
    events = []

    async def collect():
        async for event in agent.stream("go"):
            events.append(event)

    import asyncio

    asyncio.run(collect())
    decided = [
        (e.call.name, type(e.decision).__name__, e.decision.reason)
        for e in events
        if isinstance(e, ApprovalEvent)
    ]
    return decided, [(r.kind, r.output) for r in agent.last_result.tool_results]


@pytest.fixture(autouse=True)
def no_rules_file_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Agent reads approvals.toml in the working directory


def test_a_rule_allows_a_marked_call_without_asking_and_denies_another():
    approver = Recording(Denied(reason="by you"))
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file, list_files],
        approver=approver,
        rules=["delete_file path=scratch/** -> allow", "list_files folder=/** -> deny"],
    )
    decided, results = run(
        agent,
        call("delete_file", path="scratch/a.txt"),
        call("list_files", folder="/etc"),
        call("list_files"),
    )
    assert decided == [
        ("delete_file", "Approved", "allowed by rule 1 (delete_file path=scratch/**)"),
        ("list_files", "Denied", "denied by rule 2 (list_files folder=/**)"),
    ]
    assert results == [
        ("ok", "deleted scratch/a.txt"),
        ("denied", "Denied: rule 2 (list_files folder=/**) denies this call."),
        ("ok", "files in ."),
    ]
    assert approver.asked == []


def test_a_call_no_rule_decides_is_asked_and_a_dot_dot_path_is_never_allowed_by_a_glob():
    approver = Recording(Denied(reason="by you"))
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=approver,
        rules=["delete_file path=scratch/** -> allow"],
    )
    decided, results = run(agent, call("delete_file", path="scratch/../secrets.txt"))
    assert decided == [("delete_file", "Denied", "by you")]
    assert approver.asked == [("delete_file", {"path": "scratch/../secrets.txt", "force": False})]
    assert results == [("denied", "Denied: the person did not approve this call.")]


def test_deny_wins_over_an_approver_that_approves_everything():
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=AutoApprove(),
        rules=["delete_file -> allow", "delete_file force=true -> deny"],
    )
    decided, results = run(agent, call("delete_file", path="a", force=True), call("delete_file", path="b"))
    assert decided == [
        ("delete_file", "Denied", "denied by rule 2 (delete_file force=true)"),
        ("delete_file", "Approved", "allowed by rule 1 (delete_file)"),
    ]
    assert [kind for kind, _ in results] == ["denied", "ok"]


def test_an_ask_rule_makes_an_unmarked_tool_ask():
    approver = Recording()
    agent = Agent(
        ScriptedModel([]), tools=[list_files], approver=approver, rules=["list_files folder={/,/etc} -> ask"]
    )
    run(agent, call("list_files", folder="/etc"), call("list_files", folder="here"))
    assert approver.asked == [("list_files", {"folder": "/etc"})]


def test_rules_match_the_validated_arguments_with_defaults_filled_in():
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=Recording(Denied()),
        rules=["delete_file force=false -> allow"],
    )
    decided, _ = run(agent, call("delete_file", path="a"))  # force left out: its default, false, is matched
    assert decided == [("delete_file", "Approved", "allowed by rule 1 (delete_file force=false)")]
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=Recording(Denied()),
        rules=["delete_file force=true -> deny"],
    )
    decided, _ = run(
        agent, call("delete_file", path="a", force="true")
    )  # the string "true", validated to True
    assert decided == [("delete_file", "Denied", "denied by rule 1 (delete_file force=true)")]


def test_edited_arguments_are_matched_again_and_a_deny_rule_holds():
    approver = Recording(Approved("approved by you", {"path": "secrets/key"}))
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=approver,
        rules=["delete_file path=secrets/** -> deny"],
    )
    decided, results = run(agent, call("delete_file", path="notes.txt"))
    assert decided == [
        ("delete_file", "Denied", "denied by rule 1 (delete_file path=secrets/**) (as edited)")
    ]
    assert results == [
        (
            "denied",
            "Denied: rule 1 (delete_file path=secrets/**) denies this call. (The arguments as edited.)",
        )
    ]


@pytest.mark.parametrize(
    ("answer", "decided", "result"),
    [
        ("allow", [], ("ok", "sent to ada")),
        (False, [], ("ok", "sent to ada")),
        ("ask", [("send", "Denied", "by you")], ("denied", "Denied: the person did not approve this call.")),
        (True, [("send", "Denied", "by you")], ("denied", "Denied: the person did not approve this call.")),
        (
            "deny",
            [("send", "Denied", "denied by send's approval function")],
            ("denied", "Denied: send's approval function denies this call."),
        ),
        (
            "maybe",
            [("send", "Denied", "send's approval function gave no decision")],
            (
                "denied",
                "Denied: send's approval function answered 'maybe', not 'allow', 'ask', 'deny', True or False, so the call was not run.",
            ),
        ),
        (
            KeyError("to"),
            [("send", "Denied", "send's approval function failed")],
            ("denied", "Denied: send's approval function failed (KeyError: 'to'), so the call was not run."),
        ),
    ],
)
def test_an_approval_function_gets_the_validated_arguments_and_decides(answer, decided, result):
    seen = []

    def check(arguments):
        seen.append(arguments)
        if isinstance(answer, Exception):
            raise answer
        return answer

    @tool(approval=check)
    def send(to: str, copies: int = 1) -> str:
        """Send."""
        return f"sent to {to}"

    agent = Agent(ScriptedModel([]), tools=[send], approver=Recording(Denied(reason="by you")))
    got, results = run(agent, call("send", to="ada", copies="1"))
    assert seen == [{"to": "ada", "copies": 1}]
    assert (got, results) == (decided, [result])


def test_a_rule_overrides_an_approval_function_that_asks_but_not_one_that_denies():
    @tool(approval=lambda arguments: "deny" if arguments["to"] == "all" else True, name="send")
    def send(to: str) -> str:
        """Send."""
        return f"sent to {to}"

    agent = Agent(
        ScriptedModel([]), tools=[send], approver=Recording(Denied(reason="by you")), rules=["send -> allow"]
    )
    decided, results = run(agent, call("send", to="ada"), call("send", to="all"))
    assert decided == [
        ("send", "Approved", "allowed by rule 1 (send)"),
        ("send", "Denied", "denied by send's approval function"),
    ]
    assert [kind for kind, _ in results] == ["ok", "denied"]


def test_an_approval_that_is_no_bool_and_no_function_is_a_definition_error():
    from meowgent_nb import ToolDefinitionError

    with pytest.raises(ToolDefinitionError) as caught:
        tool(approval="sometimes")(lambda: None)
    assert (
        "approval must be True, False, \"always\" or a function of the arguments, got 'sometimes'"
        in caught.value.problems
    )


def test_agent_rules_naming_no_tool_are_warned_about():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Agent(ScriptedModel([]), tools=[delete_file], rules=["delete_flie -> allow"])
    assert [str(w.message) for w in caught] == [
        "Agent: the rule 'delete_flie -> allow' names no tool here: there is no tool 'delete_flie'; did you mean"
        " delete_file?"
    ]


def write(path, text):
    path.write_text(text)
    stamp = (
        time.time_ns() + 1_000_000_000
    )  # a later modification time than the last write, also on a coarse clock
    os.utime(path, ns=(stamp, stamp + len(text)))


def test_a_rules_file_in_the_working_directory_is_read_and_read_again_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("MEOWGENT_TRUST_RULES", str(tmp_path))  # its allow rules decide
    write(tmp_path / "approvals.toml", 'rules = ["delete_file path=scratch/** -> allow"]\n')
    approver = Recording(Denied(reason="by you"))
    agent = Agent(
        ScriptedModel([]),
        tools=[delete_file],
        approver=approver,
        rules=["delete_file path=scratch/keep/** -> deny"],
    )
    assert str(agent.rules) == (
        "  1. delete_file path=scratch/** -> allow   (approvals.toml)\n"
        "  2. delete_file path=scratch/keep/** -> deny   (Agent(rules=...))"
    )
    decided, _ = run(agent, call("delete_file", path="scratch/a"), call("delete_file", path="scratch/keep/b"))
    assert decided == [
        ("delete_file", "Approved", "allowed by rule 1 (delete_file path=scratch/**)"),
        ("delete_file", "Denied", "denied by rule 2 (delete_file path=scratch/keep/**)"),
    ]
    write(tmp_path / "approvals.toml", 'rules = ["delete_file path=tmp/** -> allow"]\n')
    decided, _ = run(agent, call("delete_file", path="scratch/a"), call("delete_file", path="tmp/a"))
    assert decided == [
        ("delete_file", "Denied", "by you"),
        ("delete_file", "Approved", "allowed by rule 1 (delete_file path=tmp/**)"),
    ]
    with pytest.raises(RuleError) as caught:
        agent.rules.remove(1)
    assert str(caught.value) == (
        f"Rule 1 (delete_file path=tmp/** -> allow) comes from {tmp_path / 'approvals.toml'}; remove it there"
        " (the file is read again when it changes)."
    )
    write(tmp_path / "approvals.toml", 'rules = ["delete_file path=tmp/** -> yes"]\n')
    with pytest.raises(
        RuleError
    ) as caught:  # a file made malformed while the agent lives ends the run, saying why
        run(agent, call("delete_file", path="tmp/a"))
    assert str(caught.value) == (
        f"In {tmp_path / 'approvals.toml'}, rules[0]: Cannot read the rule 'delete_file path=tmp/** -> yes': after"
        " '->' comes allow, ask or deny, not 'yes'; write a rule as TOOL ARG=PATTERN ... -> allow|ask|deny, e.g."
        " delete_file path=scratch/** -> allow."
    )
    assert agent.messages[-1]["content"].startswith("<tool_response")  # the history stays whole


def test_pyproject_table_is_a_rules_file_and_approvals_toml_wins_over_it(tmp_path):
    write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.meowgent_nb.approvals]\nrules = ["list_files -> deny"]\n',
    )
    rules = Rules(folders=[tmp_path])
    assert (rules.path, [r.text for r in rules]) == (tmp_path / "pyproject.toml", ["list_files -> deny"])
    write(tmp_path / "approvals.toml", 'rules = ["list_files -> allow"]\n')
    assert ([r.text for r in rules], rules.path) == (["list_files -> allow"], tmp_path / "approvals.toml")
    write(
        tmp_path / "pyproject.toml", '[project]\nname = "x"\n'
    )  # a pyproject.toml without the table is no rules file
    (tmp_path / "approvals.toml").unlink()
    assert (list(rules), rules.path) == ([], None)


EXAMPLE = 'e.g. rules = ["delete_file path=scratch/** -> allow"]'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "rules = [",
            "The rules file {path} is not valid TOML: Invalid value (at end of document). Write it as:"
            ' rules = ["delete_file path=scratch/** -> allow"]',
        ),
        (
            'rule = ["a -> allow"]',
            "In {path}, the file has 'rule', which is not a setting; the only one is rules (a list"
            f" of rules as text), {EXAMPLE}",
        ),
        ("rules = [1]", f"In {{path}}, rules must be a list of rules as text, {EXAMPLE}"),
        (
            'rules = ["a -> allow", "b c -> deny"]',
            "In {path}, rules[1]: Cannot read the rule 'b c -> deny': 'c' is not"
            " ARG=PATTERN; each argument is written as its name, '=' and a pattern (a glob like scratch/**, re:REGEX, a"
            " set {{a,b}}, or a quoted exact value); write a rule as TOOL ARG=PATTERN ... -> allow|ask|deny, e.g."
            " delete_file path=scratch/** -> allow.",
        ),
    ],
)
def test_a_bad_rules_file_is_an_error_naming_the_file(tmp_path, text, message):
    write(tmp_path / "approvals.toml", text)
    with pytest.raises(RuleError) as caught:
        Agent(ScriptedModel([]), tools=[delete_file])
    assert str(caught.value) == message.format(path=tmp_path / "approvals.toml")


def test_a_huge_rules_file_is_refused_before_it_is_read(tmp_path):
    write(tmp_path / "approvals.toml", "rules = [" + '"a -> allow",' * 100_000 + "]")
    with pytest.raises(RuleError) as caught:
        Rules(folders=[tmp_path])
    assert str(caught.value) == (
        f"The rules file {tmp_path / 'approvals.toml'} is 1,300,010 bytes; a rules file may have at most 1,048,576"
        " bytes and 1,000 rules. Keep to rules a person can read: a few globs cover many calls."
    )
    write(tmp_path / "approvals.toml", "rules = [" + '"a -> allow",' * 1001 + "]")
    with pytest.raises(RuleError, match=r"has 1,001 rules; a rules file may have at most 1,000\."):
        Rules(folders=[tmp_path])


def test_a_served_mcp_client_meets_the_same_rules():
    from meowgent_nb.mcp import McpToolbox, McpToolError, ToolServer

    approver = Recording(Denied("not that one", "by you"))
    rules = Rules(["delete_file path=scratch/** -> allow", "list_files folder=/** -> deny"])
    server = ToolServer(
        [delete_file, list_files], include_approval_tools=True, approver=approver, rules=rules
    )
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            assert box["nb_delete_file"].run({"path": "scratch/a"}) == "deleted scratch/a"
            with pytest.raises(McpToolError) as caught:
                box["nb_list_files"].run({"folder": "/etc"})
            assert str(caught.value) == "Denied: rule 2 (list_files folder=/**) denies this call."
            with pytest.raises(McpToolError) as caught:
                box["nb_delete_file"].run({"path": "scratch/../etc/passwd"})
            assert str(caught.value) == "Denied: not that one"
    finally:
        server.stop()
    assert approver.asked == [("delete_file", {"path": "scratch/../etc/passwd", "force": False})]


def test_for_a_server_a_rules_file_gone_bad_denies_the_call_saying_why(tmp_path):
    import asyncio

    from meowgent_nb import ToolCall
    from meowgent_nb.agent.call_runner import CallRunner, RunSettings

    write(tmp_path / "approvals.toml", 'rules = ["list_files -> allow"]')
    rules = Rules(folders=[tmp_path])
    write(tmp_path / "approvals.toml", 'rules = ["list_files ->"]')
    settings = RunSettings(
        max_turns=1,
        max_workers=1,
        tool_timeout=5.0,
        max_output_chars=None,
        repeat_calls=True,
        max_repeated_failures=None,
        deny_if_approver_fails=True,
    )
    runner = CallRunner(settings, rules=rules)
    results = {}

    async def go():
        async for _ in runner.run(
            [(ToolCall("list_files", {}, id="c1"), None)], [list_files], False, results
        ):
            pass

    asyncio.run(go())
    assert (results[0].kind, results[0].output) == (
        "denied",
        f"Denied: the approval rules could not be read: In {tmp_path / 'approvals.toml'}, rules[0]: Cannot read"
        " the rule 'list_files ->': after '->' comes allow, ask or deny, not ''; write a rule as TOOL ARG=PATTERN"
        " ... -> allow|ask|deny, e.g. delete_file path=scratch/** -> allow.",
    )


def test_the_tools_table_says_a_tool_decides_by_a_function_or_always_asks():
    from meowgent_nb.tools.view import ToolsView

    @tool(approval=lambda arguments: "ask")
    def send(to: str) -> str:
        """Send."""
        return to

    @tool(approval="always")
    def run(code: str) -> str:
        """Run code."""
        return code

    table = ToolsView([send, run, delete_file, list_files]).to_text().split("\n\n")[0]
    assert table.splitlines() == [
        "name         description     approval     timeout",
        "send         Send.           by function  default",
        "run          Run code.       always       default",
        "delete_file  Delete a file.  yes          default",
        "list_files   List files.     no           default",
    ]
