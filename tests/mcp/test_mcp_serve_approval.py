"""A served call goes through the agent's own validate -> approve -> run (`agent.call_runner.CallRunner`):
a real `ToolServer` called by the real `mcp` client, beside an `Agent` running the same calls."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from meowgent_nb import Agent, Approved, Denied, ScriptedModel, tool
from meowgent_nb.mcp import ToolServer
from tests.mcp.test_mcp_serve import client

RAN: list[dict[str, Any]] = []


@tool(approval=True)
def delete_file(path: str, force: bool = False) -> str:
    """Delete a file."""
    RAN.append({"path": path, "force": force})
    return f"deleted {path}" + (" (forced)" if force else "")


@tool
def shout(text: Annotated[str, "What to shout."], times: int = 1) -> str:
    """Shout some text."""
    RAN.append({"text": text, "times": times})
    return " ".join([text.upper()] * times)


class Answering:
    """An approver that answers whatever it is set to (or raises it), and records what it was asked."""

    def __init__(self) -> None:
        self.answer: Any = None
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def approve(self, requests):
        self.asked.extend((r.tool.name, dict(r.arguments)) for r in requests)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer

    def __repr__(self) -> str:
        return "Answering()"


@dataclass(frozen=True)
class LookAlike:
    """Has Approved's fields, is not an Approved."""

    reason: str = "ok"
    arguments: Any = None


@pytest.fixture(scope="module")
def approver():
    return Answering()


@pytest.fixture(scope="module")
def served(approver):
    server = ToolServer([delete_file, shout], include_approval_tools=True, approver=approver, timeout=5)
    yield server
    server.stop()


def served_call(server: ToolServer, name: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
    async def main():
        async with client(server) as mcp:
            return await mcp.call_tool(name, arguments)

    result = asyncio.run(main())
    return result.is_error, result.content[0].text, result.structured_content


@pytest.fixture(autouse=True)
def fresh(approver):
    RAN.clear()
    approver.asked.clear()
    yield
    RAN.clear()


def test_the_edited_arguments_run_and_the_client_is_told(served, approver):
    approver.answer = [Approved("by you", arguments={"path": "old/a.txt"})]
    assert served_call(served, "delete_file", {"path": "/", "force": True}) == (
        False,
        '(The person changed the arguments before approving; the call ran with {"path": "old/a.txt", "force": false}.)\n'
        "deleted old/a.txt",
        None,
    )
    assert RAN == [{"path": "old/a.txt", "force": False}]
    assert approver.asked == [("delete_file", {"path": "/", "force": True})]


@pytest.mark.parametrize(
    ("edited", "problem"),
    [
        ({"path": 3}, "- path: input should be a valid string, got 3"),
        ({"path": "a", "recursive": True}, "- recursive: unknown argument; this tool takes: path, force"),
        ({}, "- path: missing; this argument is required"),
        ("rm -rf /", "- they must be an object of named values, got a str"),
        (["path", "a"], "- they must be an object of named values, got a list"),
    ],
)
def test_edited_arguments_that_do_not_fit_do_not_run(served, approver, edited, problem):
    approver.answer = [Approved("by you", arguments=edited)]
    assert served_call(served, "delete_file", {"path": "x.txt"}) == (
        True,
        f"Not run: the arguments given at approval were invalid.\nInvalid arguments for tool 'delete_file':\n{problem}",
        None,
    )
    assert RAN == []


NOT_ONE = "Denied: the approver Answering() did not return one Approved or Denied per call (1 asked, {}), so none of them ran."


@pytest.mark.parametrize(
    ("answer", "told"),
    [
        ([None], NOT_ONE.format("1 answered")),
        ([False], NOT_ONE.format("1 answered")),
        (["no"], NOT_ONE.format("1 answered")),
        ([0], NOT_ONE.format("1 answered")),
        ([True], NOT_ONE.format("1 answered")),
        ([LookAlike()], NOT_ONE.format("1 answered")),
        (
            [
                Approved,
            ],
            NOT_ONE.format("1 answered"),
        ),  # the class, not a decision
        ([], NOT_ONE.format("0 answered")),
        ([Approved(), Approved()], NOT_ONE.format("2 answered")),
        ([Approved(), Denied()], NOT_ONE.format("2 answered")),
        (None, NOT_ONE.format("answered with a NoneType")),
        (False, NOT_ONE.format("answered with a bool")),
        (0, NOT_ONE.format("answered with a int")),
        ("yes", NOT_ONE.format("answered with a str")),
        (Approved(), NOT_ONE.format("answered with a Approved")),
        ({0: Approved()}, NOT_ONE.format("answered with a dict")),
        (
            RuntimeError("no buttons here"),
            "Denied: the approver Answering() failed (RuntimeError: no buttons here), so none of them ran.",
        ),
        (ValueError(), "Denied: the approver Answering() failed (ValueError: ), so none of them ran."),
    ],
)
def test_anything_but_an_explicit_approval_is_a_denial(served, approver, answer, told):
    approver.answer = answer
    assert served_call(served, "delete_file", {"path": "x.txt"}) == (True, told, None)
    assert RAN == []
    assert approver.asked == [("delete_file", {"path": "x.txt", "force": False})]


def test_an_explicit_approval_and_a_denial(served, approver):
    approver.answer = (Approved("fine"),)  # any sequence of one decision
    assert served_call(served, "delete_file", {"path": "x.txt"}) == (False, "deleted x.txt", None)
    approver.answer = [Denied("not that one")]
    assert served_call(served, "delete_file", {"path": "y.txt"}) == (True, "Denied: not that one", None)
    assert RAN == [{"path": "x.txt", "force": False}]


@pytest.mark.parametrize(
    "arguments",
    [
        {"text": 3, "loud": True},
        {},
        {"text": "a", "times": "many"},
        {"text": ["a"], "times": 1.5},
        {"text": "a", "times": "2"},
        {"text": "a", "times": True},
        {"Text": "a"},
    ],
)
def test_a_served_call_is_validated_exactly_as_the_agent_validates_it(served, arguments):
    answer = "<tool_call>" + json.dumps({"name": "shout", "arguments": arguments}) + "</tool_call>"
    looped = Agent(ScriptedModel([answer, "done"]), tools=[shout]).run("go").tool_results[0]
    ran_in_loop = list(RAN)
    RAN.clear()
    assert served_call(served, "shout", arguments) == (not looped.ok, looped.output, None)
    assert ran_in_loop == RAN


class Meddling:
    """Approves after changing the request's arguments in place (an edit goes in Approved(arguments=...))."""

    async def approve(self, requests):
        for request in requests:
            request.arguments["path"] = "/"
            request.arguments["force"] = True
        return [Approved("changed in place")] * len(requests)


def test_arguments_changed_in_place_by_the_approver_do_not_run():
    server = ToolServer([delete_file], include_approval_tools=True, approver=Meddling())
    try:
        assert served_call(server, "delete_file", {"path": "a.txt"}) == (False, "deleted a.txt", None)
    finally:
        server.stop()
    assert RAN == [{"path": "a.txt", "force": False}]
    answer = '<tool_call>{"name": "delete_file", "arguments": {"path": "b.txt"}}</tool_call>'
    result = Agent(ScriptedModel([answer, "done"]), tools=[delete_file], approver=Meddling()).run("go")
    assert (result.tool_results[0].output, RAN[1:]) == ("deleted b.txt", [{"path": "b.txt", "force": False}])
