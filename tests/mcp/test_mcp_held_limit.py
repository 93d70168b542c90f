"""Servers that ask back during a call (real servers): the time limit stands still while the
person answers, and forms and sampling work over streamable HTTP as over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from meowgent_nb import Agent, ScriptedModel
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.mcp.client.asking import ElicitAnswer
from tests.mcp_servers import serving
from tests.support.tool_calls import call

ASKING = str(Path(__file__).parents[1] / "mcp_servers" / "asking_server.py")
DEMO = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
SIGNED_UP = {"name": "Ada", "age": 36, "email": "ada@example.org", "plan": "pro", "newsletter": True}


class SlowPerson:
    """An approver that can ask, and takes ``seconds`` to fill in each form."""

    def __init__(self, seconds: float):
        self.seconds, self.told = seconds, []

    async def elicit(self, request):
        await asyncio.sleep(self.seconds)
        return ElicitAnswer("accept", dict(SIGNED_UP))

    async def review_sampling(self, review):  # pragma: no cover - not asked here
        return False, "not asked"

    def tell(self, running, text):
        self.told.append(text)


@pytest.mark.parametrize("mode", ["new", "legacy"])
def test_a_person_slower_than_the_limit_still_gets_the_call_through(mode):
    command = [sys.executable, ASKING] + (["legacy"] if mode == "legacy" else [])
    with McpToolbox("asking", command, timeout=1.0) as box:
        person = SlowPerson(2.5)
        agent = Agent(ScriptedModel([call("asking_sign_up"), "Signed up."]), tools=box, approver=person)
        started = time.monotonic()
        result = agent.run("Sign me up")
        took = time.monotonic() - started
        asked = [(a.kind, a.outcome) for a in box.history]
    (signed,) = result.tool_results
    assert signed.kind == "ok", signed.output
    assert json.loads(signed.output) == {"action": "accept", "data": SIGNED_UP}
    assert took > 2.5  # longer than the 1 s limit: the form's time was not counted
    assert asked == [("elicitation", "accept")]


def test_the_limit_still_ends_a_tool_that_is_slow_itself():
    with McpToolbox("demo", [sys.executable, DEMO], timeout=1.0) as box:
        result = Agent(ScriptedModel([call("demo_slow", seconds=3), "Too slow."]), tools=box).run("Wait")
    (slow,) = result.tool_results
    assert (slow.kind, slow.output) == ("timeout", "Timed out after 1 s")


def test_over_http_the_form_and_the_model_answer_the_server_in_the_call(tmp_path):
    with serving.http_server(ASKING, tmp_path) as url:
        poet = ScriptedModel(["Leaves fall on the notebook."])
        with McpToolbox("asking", url=url, sampling="allow", sampling_model=poet, timeout=1.0) as box:
            model = ScriptedModel(
                [call("asking_sign_up") + call("asking_write_poem", topic="autumn"), "Done."]
            )
            result = Agent(model, tools=box, approver=SlowPerson(1.5)).run("Sign me up, then a poem")
            asked = [(a.kind, a.outcome) for a in box.history]
    signed, poem = result.tool_results
    assert (signed.kind, poem.kind) == ("ok", "ok"), (signed.output, poem.output)
    assert json.loads(signed.output) == {"action": "accept", "data": SIGNED_UP}
    assert json.loads(poem.output) == {
        "text": "Leaves fall on the notebook.",
        "model": "scripted",
        "stop": "endTurn",
    }
    assert sorted(asked) == [("elicitation", "accept"), ("sampling", "answered by scripted")]
