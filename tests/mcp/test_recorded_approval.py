"""A recorded MCP toolbox's approval and time limit can be raised by its cassette, never lowered:
the real demo server (its ``wipe`` is destructive), real cassettes, hand-edited as a person would."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from meowgent_nb import Agent, Approved, AutoApprove, Denied, ScriptedModel
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.recording.cassette import Cassette, RecordingModel, ReplayModel

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")


def calling(name: str, **arguments) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


class Asking:
    """An approver that answers from a list and records what it was asked."""

    def __init__(self, *decisions):
        self.decisions, self.asked = list(decisions), []

    async def approve(self, requests):
        self.asked.extend((r.tool.name, dict(r.arguments)) for r in requests)
        return [self.decisions.pop(0) for _ in requests]


def recorded(tmp_path: Path, *answers: str, **box_options) -> Path:
    """A cassette of a run of the demo box (its listing and the calls the answers make)."""
    path = tmp_path / "m.cassette.json"
    with McpToolbox("demo", [sys.executable, SERVER], record=True, **box_options) as box:
        model = RecordingModel(ScriptedModel([*answers, "done"]), path)
        box.use_tape(model.tool_tape)
        Agent(model, tools=list(box), approver=AutoApprove()).run("go")
    return path


def edit_listing(path: Path, tool: str, **fields) -> None:
    """Hand-edit the listed tool's fields in the cassette, keeping the file's own layout."""
    lines = path.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if f'"name": "{tool}"' in line and '"approval"' in line]
    assert len(hits) == 1, lines
    listed = json.loads(lines[hits[0]].rstrip().rstrip(","))
    listed.update(fields)
    end = "," if lines[hits[0]].rstrip().endswith(",") else ""
    lines[hits[0]] = (
        lines[hits[0]][: len(lines[hits[0]]) - len(lines[hits[0]].lstrip())]
        + json.dumps(listed, ensure_ascii=False, sort_keys=True)
        + end
        + "\n"
    )
    path.write_text("".join(lines))
    assert next(t for t in Cassette(path).listing("demo").listing if t.name == tool).model_dump()[
        next(iter(fields))
    ] == next(iter(fields.values()))


def test_a_hand_lowered_approval_does_not_let_a_live_call_run_unasked(tmp_path):
    path = recorded(tmp_path, calling("demo_add", a=1))
    edit_listing(path, "demo_wipe", approval=False)
    approver = Asking(Denied("not that"), Approved("yes"))
    box = McpToolbox("demo", [sys.executable, SERVER], record=True)
    try:
        replay = ReplayModel(
            path, ScriptedModel([calling("demo_wipe", path="/"), calling("demo_wipe", path="tmp"), "ok"])
        )
        box.use_tape(replay.tool_tape)  # mode auto: replays the listing, runs what is not recorded
        assert (box.connected, box["demo_wipe"].approval) == (False, False)  # pure replay: the file's
        agent = Agent(replay, tools=list(box), approver=approver)

        async def stream():
            return [event async for event in agent.stream("wipe it")]

        events = asyncio.run(stream())
    finally:
        box.close()
    result = events[-1].result
    # The first call started the server, whose listing says wipe is destructive: it was asked then.
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("denied", "Denied: not that"),
        ("ok", "wiped tmp"),
    ]
    assert approver.asked == [("demo_wipe", {"path": "/"}), ("demo_wipe", {"path": "tmp"})]
    assert [
        type(e).__name__ for e in events if type(e).__name__ in ("ApprovalRequested", "ApprovalEvent")
    ] == ["ApprovalRequested", "ApprovalEvent", "ApprovalRequested", "ApprovalEvent"]
    assert [(e.tool, e.arguments) for e in Cassette(path).tool_entries] == [
        ("demo_add", {"a": 1, "b": 2}),
        ("demo_wipe", {"path": "tmp"}),  # the denied call left nothing in the cassette
    ]


def test_once_live_a_lowered_approval_asks_and_an_approved_call_runs(tmp_path):
    path = recorded(tmp_path, calling("demo_add", a=1))
    edit_listing(path, "demo_wipe", approval=False)
    edit_listing(path, "demo_note", approval=False)
    approver = Asking(Approved("yes"), Approved("yes"))
    box = McpToolbox("demo", [sys.executable, SERVER], record=True)
    try:
        replay = ReplayModel(
            path,
            ScriptedModel(
                [
                    calling("demo_add", a=5),
                    calling("demo_wipe", path="tmp"),
                    calling("demo_note", text="x"),
                    "ok",
                ]
            ),
        )
        box.use_tape(replay.tool_tape)
        tools = list(box)
        result = Agent(replay, tools=tools, approver=approver).run("add, wipe, note")
        approvals = {t.name: t.approval for t in tools}
    finally:
        box.close()
    # demo_add (read-only) started the server without asking; the live listing then raised the others
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("ok", "7"),
        ("ok", "wiped tmp"),
        ("ok", "noted: x"),
    ]
    assert approver.asked == [("demo_wipe", {"path": "tmp"}), ("demo_note", {"text": "x"})]
    assert (approvals["demo_wipe"], approvals["demo_note"], approvals["demo_add"]) == (True, True, False)


def test_in_pure_replay_the_persons_approval_holds_over_the_file(tmp_path):
    path = recorded(tmp_path, calling("demo_add", a=1), calling("demo_wipe", path="tmp"))
    edit_listing(path, "demo_wipe", approval=False)
    edit_listing(path, "demo_add", approval=True)  # a file may raise approval
    for options, asked in (
        ({"approval": {"wipe": True}}, [("demo_add", {"a": 1, "b": 2}), ("demo_wipe", {"path": "tmp"})]),
        (
            {"approval": {"demo_wipe": True, "add": False}},
            [("demo_add", {"a": 1, "b": 2}), ("demo_wipe", {"path": "tmp"})],
        ),
        ({}, [("demo_add", {"a": 1, "b": 2})]),  # no person said anything: the recording decides
    ):
        approver = Asking(*[Approved("yes")] * len(asked))
        box = McpToolbox("demo", ["/nonexistent/server"], record=True, **options)
        replay = ReplayModel(path)  # mode replay: the server is never started
        box.use_tape(replay.tool_tape)
        result = Agent(replay, tools=list(box), approver=approver).run("go")
        assert (options, approver.asked) == (options, asked)
        assert [r.output for r in result.tool_results] == ["3", "wiped tmp"]
        assert box.connected is False


@pytest.mark.parametrize(
    ("given", "in_file", "kept"),
    [(5.0, None, 5.0), (5.0, 1000.0, 5.0), (5.0, 1.0, 1.0), (None, 1000.0, None), (None, None, None)],
)
def test_a_recorded_time_limit_can_shorten_the_persons_never_lengthen_or_remove_it(
    tmp_path, given, in_file, kept
):
    path = recorded(tmp_path, calling("demo_add", a=1), timeout=5.0)
    edit_listing(path, "demo_add", timeout=in_file)
    box = McpToolbox("demo", ["/nonexistent/server"], record=True, timeout=given)
    box.use_tape(ReplayModel(path).tool_tape)
    assert box["demo_add"].timeout == kept
