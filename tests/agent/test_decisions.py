"""The decision log: every decision on a call that needed approval, from every source, logged once,
said in words on the card, and recorded in a cassette whose replay checks the same decisions."""

from __future__ import annotations

import datetime
import json

import pytest

from meowgent_nb import Agent, Approved, AutoApprove, Denied, DenyAll, ScriptedModel, tool
from meowgent_nb.agent.approvals import Ask, DecidedBy, ruled
from meowgent_nb.agent.approvals.decisions import DecisionLog, decided_by, decision_words, session_decisions
from meowgent_nb.agent.rules import Rules
from meowgent_nb.recording.cassette import CassetteError, RecordingModel, ReplayModel


@tool(approval=True)
def delete_file(path: str, force: bool = False) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _calls(*arguments: dict) -> str:
    return "".join(
        "<tool_call>" + json.dumps({"name": "delete_file", "arguments": a}) + "</tool_call>"
        for a in arguments
    )


class Deciding:
    """An approver answering each call with the next of ``decisions``."""

    def __init__(self, *decisions):
        self.decisions = list(decisions)

    async def approve(self, requests):
        return [self.decisions.pop(0) for _ in requests]

    def __repr__(self):
        return "Deciding()"


class Raising:
    async def approve(self, requests):
        raise ValueError("the approval service is down")

    def __repr__(self):
        return "Raising()"


@pytest.fixture(autouse=True)
def fresh_log():
    session_decisions().clear()
    yield session_decisions()
    session_decisions().clear()


@pytest.mark.parametrize(
    ("decision", "words", "by"),
    [
        (Approved("approved by you"), "approved by you", "you"),
        (Approved("approved by you (edited)", {"path": "b"}), "approved by you (edited)", "you (edited)"),
        (
            Approved("allowed by rule 2 (delete_file path=scratch/** -> allow)"),
            "allowed by rule 2 (delete_file path=scratch/** -> allow)",
            "rule 2 (delete_file path=scratch/** -> allow)",
        ),
        (
            Approved("approved by policy: MEOWGENT_APPROVE=allow"),
            "approved by policy: MEOWGENT_APPROVE=allow",
            "policy: MEOWGENT_APPROVE=allow",
        ),
        (
            Approved("allowed by always allow (for this session)"),
            "allowed by always allow (for this session)",
            "always allow (for this session)",
        ),
        (Approved("approved automatically"), "approved automatically", "automatically"),
        (Approved("under /tmp"), "approved: under /tmp", "under /tmp"),
        (Approved(""), "approved", "no one"),
        (Denied("use the archive instead", "by you"), 'denied by you: "use the archive instead"', "you"),
        (Denied(reason="by you"), "denied by you", "you"),
        (
            Denied("no person to approve (headless run)", "by policy: MEOWGENT_APPROVE=deny"),
            "denied by policy: MEOWGENT_APPROVE=deny",
            "policy: MEOWGENT_APPROVE=deny",
        ),
        (
            Denied("no.", "denied by rule 1 (delete_file path=** -> deny)"),
            "denied by rule 1 (delete_file path=** -> deny)",
            "rule 1 (delete_file path=** -> deny)",
        ),
        (Denied("no decision within 10 minutes"), None, "no one"),
        (Denied("x\u202ey", "by you"), 'denied by you: "x\\u202ey"', "you"),
    ],
)
def test_each_source_of_a_decision_is_said_in_words_and_names_who_decided(decision, words, by):
    assert decision_words(decision) == words
    assert decided_by(decision) == by


def test_every_decision_of_a_run_is_logged_once_with_the_call_and_who_decided(fresh_log):
    model = ScriptedModel([_calls({"path": "a.txt"}, {"path": "b.txt"}, {"path": "c.txt"}), "done"])
    approver = Deciding(
        Approved("approved by you"),
        Approved("approved by you (edited)", {"path": "b2.txt"}),
        Denied("use the archive instead", "by you"),
    )
    result = Agent(model, tools=[delete_file], approver=approver).run("go")
    assert [r.output for r in result.tool_results] == [
        "deleted a.txt",
        "(The person changed the arguments before approving; the call ran with "
        '{"path": "b2.txt", "force": false}.)\ndeleted b2.txt',
        "Denied: use the archive instead",
    ]
    rows = [record.row() for record in fresh_log]
    assert [(r["tool"], r["arguments"], r["decision"], r["by"], r["reason"]) for r in rows] == [
        ("delete_file", '{"force": false, "path": "a.txt"}', "approved", "you", ""),
        (
            "delete_file",
            '{"asked": {"force": false, "path": "b.txt"}, "ran": {"path": "b2.txt"}}',
            "edited",
            "you (edited)",
            "",
        ),
        ("delete_file", '{"force": false, "path": "c.txt"}', "denied", "you", "use the archive instead"),
    ]
    assert all(isinstance(record.time, datetime.datetime) for record in fresh_log)
    table = fresh_log.table().splitlines()
    assert table[0].split() == ["#", "time", "tool", "arguments", "decision", "by", "reason"]
    assert table[4].split()[2:] == [
        "delete_file",
        '{"force":',
        "false,",
        '"path":',
        '"c.txt"}',
        "denied",
        "you",
        "use",
        "the",
        "archive",
        "instead",
    ]


def test_policies_and_an_approver_that_raises_are_logged_too(fresh_log):
    model = ScriptedModel([_calls({"path": "a.txt"}), "done"])
    Agent(model, tools=[delete_file], approver=AutoApprove()).run("go")
    model = ScriptedModel([_calls({"path": "a.txt"}), "done"])
    Agent(model, tools=[delete_file], approver=DenyAll("nobody is here")).run("go")
    model = ScriptedModel([_calls({"path": "z.txt"}), "done"])
    with pytest.raises(ValueError, match="the approval service is down"):
        Agent(model, tools=[delete_file], approver=Raising()).run("go")
    assert [(r.decision, r.by, r.reason) for r in fresh_log] == [
        ("approved", "automatically", ""),
        ("denied", "no one", "nobody is here"),
        ("denied", "the approver, which raised", "ValueError: the approval service is down"),
    ]


def test_the_dataframe_has_one_row_per_decision():
    model = ScriptedModel([_calls({"path": "a.txt"}, {"path": "b.txt"}), "done"])
    Agent(
        model, tools=[delete_file], approver=Deciding(Approved("approved by you"), Denied(reason="by you"))
    ).run("go")
    frame = session_decisions().dataframe()
    assert list(frame.columns) == ["time", "tool", "arguments", "decision", "by", "reason"]
    assert frame[["decision", "by"]].values.tolist() == [["approved", "you"], ["denied", "you"]]
    assert DecisionLog().table() == "No decisions yet in this session: no call has needed approval."


def _record(path, approver, arguments=({"path": "a.txt"},)):
    inner = ScriptedModel([_calls(*arguments), "done"])
    Agent(RecordingModel(inner, path), tools=[delete_file], approver=approver).run("go")


def _replay(path, approver, arguments=({"path": "a.txt"},)):
    return Agent(ReplayModel(path), tools=[delete_file], approver=approver).run("go")


def test_a_cassette_records_the_decisions_and_a_replay_decided_the_same_way_passes(tmp_path):
    path = tmp_path / "run.cassette.json"
    _record(path, Deciding(Approved("approved by you (edited)", {"path": "b.txt"})))
    entries = path.read_text().split("\n\n")
    assert entries[1] == (
        '{"decision": "edited",\n "tool": "delete_file",\n "arguments": {"force": false, "path": "a.txt"},\n'
        ' "by": "you (edited)",\n "ran_with": {"path": "b.txt"}}'
    )
    result = _replay(path, Deciding(Approved("approved by someone else", {"path": "b.txt"})))
    assert result.tool_results[0].output.endswith("deleted b.txt")


def test_a_replay_that_decides_a_call_otherwise_names_the_call_and_both_decisions(tmp_path):
    path = tmp_path / "run.cassette.json"
    _record(path, Deciding(Approved("approved by you")))
    with pytest.raises(CassetteError) as raised:
        _replay(path, DenyAll("no one is here"))
    assert str(raised.value).startswith(
        'The call delete_file({"force": false, "path": "a.txt"}) was approved by you when the cassette'
        f" {path} was recorded (line 20), and denied (no one is here) in this run. A replay must decide the same"
        " calls the same way (a person, a rule or MEOWGENT_APPROVE); decide it as recorded.\nTo record it, run in"
        " mode record"
    )


def test_a_cassette_from_before_decisions_were_recorded_still_replays(tmp_path):
    path = tmp_path / "old.cassette.json"
    _record(path, AutoApprove())
    entries = path.read_text().split("\n\n")
    path.write_text("\n\n".join(e for e in entries if not e.startswith('{"decision"')))
    result = _replay(path, AutoApprove())
    assert result.tool_results[0].output == "deleted a.txt"


def test_a_hand_edited_decision_that_is_no_decision_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "edited.cassette.json"
    _record(path, AutoApprove())
    path.write_text(path.read_text().replace('"decision": "approved"', '"decision": "maybe"'))
    with pytest.raises(CassetteError) as raised:
        _replay(path, AutoApprove())
    assert str(raised.value) == (
        f"Cassette {path}, line 20: decision input should be 'approved', 'edited' or 'denied', found \"maybe\"."
        " Fix that line, or delete the file and record again."
    )


def test_who_decided_is_the_decisions_by_set_by_whoever_decided_not_read_from_its_reason(fresh_log):
    said_otherwise = Approved("approved by the moon", by=DecidedBy("person", "Ada"))
    assert (decision_words(said_otherwise), decided_by(said_otherwise)) == ("approved by the moon", "Ada")
    assert said_otherwise == Approved("approved by the moon")  # the same decision, whoever made it

    rules = Rules(
        [
            "delete_file path=scratch/** -> allow",
            "delete_file path=keep/** -> deny",
            "delete_file path=ask/** -> ask",
        ]
    )
    allowed, denied, asked, marked = (
        ruled(rules, delete_file, {"path": path}, True) for path in ("scratch/a", "keep/a", "ask/a", "a")
    )
    assert allowed.by == DecidedBy("rule", "rule 1 (delete_file path=scratch/**)")
    assert denied.by == DecidedBy("rule", "rule 2 (delete_file path=keep/**)")
    assert (asked, marked) == (Ask("asked by rule 3 (delete_file path=ask/**)"), Ask("approval=True"))
    assert ruled(rules, delete_file, {"path": "a"}, False) is None

    model = ScriptedModel([_calls({"path": "scratch/a"}, {"path": "keep/a"}, {"path": "a"}), "done"])
    decided = Denied("not today", "by you", by=DecidedBy("person", "Ada"))
    Agent(model, tools=[delete_file], approver=Deciding(decided), rules=rules).run("go")
    assert [(r.decision, r.by) for r in fresh_log] == [
        ("approved", "rule 1 (delete_file path=scratch/**)"),
        ("denied", "rule 2 (delete_file path=keep/**)"),
        ("denied", "Ada"),
    ]
