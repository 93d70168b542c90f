"""A model that repeats a call that keeps failing the same way is told so, then the run ends.

Exact values throughout: what the model read on each request, ``result.stopped``, the turns.
"""

from __future__ import annotations

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.agent.repeated import repeat_notice, split_repeat_notice
from meowgent_nb.agent.result import RepeatedFailure
from meowgent_nb.protocols.prompt import RESULTS_NOTICE
from tests.support.tool_calls import call

TOLD = "This call failed the same way twice in a row; do not repeat it. Answer the person, or try something different."
STOPPED = "This call failed the same way 3 times in a row, so the run was stopped."


@tool
def get_stock(item: str) -> str:
    """How many of an item are in stock."""
    raise ValueError(f"the stock service has no {item!r}")


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def response(name: str, output: str) -> str:
    return f'<tool_response name="{name}">\n{output}\n</tool_response>\n{RESULTS_NOTICE}'


def last_messages(model: ScriptedModel) -> list[str]:
    """What the model read last on each request after the first (the previous turn's results)."""
    return [request.messages[-1]["content"] for request in model.requests[1:]]


def test_told_on_the_first_repeat_and_stopped_on_the_next():
    model = ScriptedModel([call("get_stock", item="kettle")] * 8 + ["never read"])
    agent = Agent(model, tools=[get_stock])
    result = agent.run("How many kettles?")
    error = "Error: ValueError: the stock service has no 'kettle'"
    assert (result.stopped, result.turns, len(model.requests)) == ("repeated_failure", 3, 3)
    assert last_messages(model) == [response("get_stock", error), response("get_stock", f"{error}\n\n{TOLD}")]
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("error", error),
        ("error", f"{error}\n\n{TOLD}"),
        ("error", f"{error}\n\n{STOPPED}"),
    ]
    assert result.repeated_failure == RepeatedFailure(result.tool_results[-1], 3)
    assert result.text == ""
    # The history ends with the stopped call's result, so the next request continues coherently.
    assert agent.messages[-1] == {"role": "user", "content": response("get_stock", f"{error}\n\n{STOPPED}")}
    assert repr(result) == (
        "AgentResult(text='', turns=3, stopped='repeated_failure',"
        " calls=['get_stock: error', 'get_stock: error', 'get_stock: error'])"
    )


def test_a_model_that_listens_answers_and_the_run_ends_normally():
    model = ScriptedModel(
        [call("get_stock", item="kettle")] * 2 + ["The stock service does not know kettles."]
    )
    result = Agent(model, tools=[get_stock]).run("How many kettles?")
    assert (result.stopped, result.turns, result.repeated_failure) == ("answer", 3, None)
    assert result.text == "The stock service does not know kettles."
    assert last_messages(model)[-1].endswith(f"{TOLD}\n</tool_response>\n{RESULTS_NOTICE}")


def test_a_different_failure_or_a_success_starts_the_count_again():
    attempts = []

    @tool
    def flaky(item: str) -> str:
        """Sometimes works."""
        attempts.append(item)
        if len(attempts) in (3, 6):
            return "in stock: 4"
        raise ValueError(f"busy (attempt {len(attempts) % 2})")  # alternates between two messages

    model = ScriptedModel([call("flaky", item="kettle")] * 7 + ["ok"])
    result = Agent(model, tools=[flaky], repeat_calls=True).run("x")  # run again after a success
    # attempts: busy 1, busy 0, ok, busy 0, busy 1, ok, busy 1: never the same failure twice in a row
    assert [r.output for r in result.tool_results] == [
        "Error: ValueError: busy (attempt 1)",
        "Error: ValueError: busy (attempt 0)",
        "in stock: 4",
        "Error: ValueError: busy (attempt 0)",
        "Error: ValueError: busy (attempt 1)",
        "in stock: 4",
        "Error: ValueError: busy (attempt 1)",
    ]
    assert (result.stopped, result.turns, result.text) == ("answer", 8, "ok")


def test_twins_in_one_answer_count_once():
    model = ScriptedModel(
        [call("get_stock", item="cup") * 2, call("get_stock", item="cup"), call("get_stock", item="cup"), "x"]
    )
    result = Agent(model, tools=[get_stock]).run("x")
    error = "Error: ValueError: the stock service has no 'cup'"
    assert [r.output for r in result.tool_results] == [
        error,
        error,
        f"{error}\n\n{TOLD}",
        f"{error}\n\n{STOPPED}",
    ]
    assert (result.stopped, result.turns) == ("repeated_failure", 3)


def test_other_calls_in_between_do_not_hide_a_repeat():
    model = ScriptedModel(
        [call("get_stock", item=item) for item in ("cup", "pan", "cup", "pan", "cup")] + ["never read"]
    )
    result = Agent(model, tools=[get_stock]).run("x")
    assert [r.output.split("\n\n")[-1][:40] for r in result.tool_results] == [
        "Error: ValueError: the stock service has",
        "Error: ValueError: the stock service has",
        TOLD[:40],
        TOLD[:40],
        STOPPED[:40],
    ]
    assert (result.stopped, result.turns) == ("repeated_failure", 5)
    assert result.repeated_failure.result.call == ToolCall("get_stock", {"item": "cup"}, id="call_5")


def test_denials_count_and_so_do_repeats_of_a_call_that_already_succeeded():
    model = ScriptedModel([call("delete_file", path="/a")] * 3)
    result = Agent(model, tools=[delete_file]).run("x")  # no approver: every call is denied
    assert [r.kind for r in result.tool_results] == ["denied"] * 3
    assert (result.stopped, result.turns) == ("repeated_failure", 3)

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = ScriptedModel([call("add", a=1, b=2)] * 4 + ["never read"])
    result = Agent(model, tools=[add]).run("x")
    assert [r.kind for r in result.tool_results] == ["ok", "denied", "denied", "denied"]
    assert result.tool_results[2].output.endswith(TOLD)
    assert (result.stopped, result.turns) == ("repeated_failure", 4)


def test_the_limit_is_a_setting():
    script = [call("get_stock", item="kettle")] * 5 + ["answer"]
    result = Agent(ScriptedModel(script), tools=[get_stock], max_repeated_failures=2).run("x")
    assert (result.stopped, result.turns) == ("repeated_failure", 2)
    assert result.tool_results[-1].output.endswith(
        "This call failed the same way twice in a row, so the run was stopped."
    )
    result = Agent(ScriptedModel(script), tools=[get_stock], max_repeated_failures=None).run("x")
    assert (result.stopped, result.turns, result.text) == ("answer", 6, "answer")
    assert [r.output for r in result.tool_results] == [
        "Error: ValueError: the stock service has no 'kettle'"
    ] * 5
    result = Agent(ScriptedModel(script), tools=[get_stock], max_turns=3).run("x")
    assert (result.stopped, result.turns) == ("max_turns", 3)  # the last turn's calls are not run


@pytest.mark.parametrize("limit", [1, 0, 2.5, True, "3"])
def test_a_bad_limit_is_refused(limit):
    with pytest.raises(ValueError) as raised:
        Agent(ScriptedModel([]), max_repeated_failures=limit)
    assert str(raised.value) == (
        f"Invalid Agent settings:\n- max_repeated_failures must be a whole number of at least 2, or None; got {limit!r}"
    )


def test_the_notice_can_be_split_off_again():
    assert split_repeat_notice(f"Error: x\n\n{repeat_notice(2)}") == ("Error: x", TOLD)
    assert split_repeat_notice(f"Error: x\n\n{repeat_notice(3, stop=True)}") == ("Error: x", STOPPED)
    assert split_repeat_notice(f"Error: x {TOLD}") == (f"Error: x {TOLD}", None)
    assert split_repeat_notice("plain") == ("plain", None)
