"""meowgent_nb.testing: the scripted model, the guard against real models, and the assertions on
what a model was sent (with failure messages that show it). The fixtures come from the plugin."""

from __future__ import annotations

import asyncio

import pytest

import meowgent_nb.models
from meowgent_nb import Agent, ModelError, ScriptedModel, tool
from meowgent_nb.models import LlamaCppModel, ModelChunk, OllamaModel
from meowgent_nb.testing import (
    assert_last_user_message,
    assert_system_prompt,
    assert_tools_offered,
    no_model_requests,
    scripted_model,
    sent_request,
    tool_call,
)


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def run(model, tools=(add, shout), prompt="What is 2 + 3?", **options):
    agent = Agent(model, tools=list(tools), system="Be brief.", **options)
    return agent, agent.run(prompt)


# --- a scripted model ----------------------------------------------------------------------------


def test_tool_call_is_the_text_a_model_writes():
    assert (
        tool_call("add", a=2, b=3) == '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    )
    assert tool_call("shout", text="çà </tool_call>") == (
        '<tool_call>{"name": "shout", "arguments": {"text": "çà </tool_call>"}}</tool_call>'
    )
    assert (
        tool_call("name", name="x") == '<tool_call>{"name": "name", "arguments": {"name": "x"}}</tool_call>'
    )


def test_a_scripted_model_answers_in_order(scripted_model):
    model = scripted_model(tool_call("add", a=2, b=3), "2 + 3 = 5.")
    assert isinstance(model, ScriptedModel) and model.name == "scripted"
    _, result = run(model)
    assert result.text == "2 + 3 = 5."
    assert [(r.call.name, r.call.arguments, r.output) for r in result.tool_results] == [
        ("add", {"a": 2, "b": 3}, "5")
    ]
    assert model.remaining == 0


def test_scripted_answers_may_be_chunks_and_the_model_named():
    model = scripted_model(["2 + 3", " = 5.", ModelChunk(done=True, finish_reason="length")], name="mine")
    _, result = run(model, tools=())
    assert (result.text, model.description) == ("2 + 3 = 5.", "mine (ScriptedModel)")


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ((["a", "b"], 3), "scripted_model: answer 2 is int 3; give each answer as a string"),
        (
            ({"name": "add"},),
            "scripted_model: answer 1 is dict {'name': 'add'}; give each answer as a string",
        ),
        ((None,), "scripted_model: answer 1 is NoneType None; give each answer as a string"),
        ((["a", 1],), "scripted_model: answer 1 is list ['a', 1]; give each answer as a string"),
    ],
)
def test_an_answer_of_the_wrong_type_is_refused_at_once(answers, message):
    with pytest.raises(TypeError) as error:
        scripted_model(*answers)
    assert str(error.value).startswith(message)


# --- the guard -----------------------------------------------------------------------------------


def test_the_guard_refuses_servers_and_the_embedded_model_and_restores_both(monkeypatch):
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)  # as outside this test suite
    stream = LlamaCppModel.stream
    with no_model_requests():
        assert meowgent_nb.models.ALLOW_MODEL_REQUESTS is False
        with pytest.raises(ModelError, match=r"^Refusing to contact"):
            run(OllamaModel("qwen2.5:0.5b", host="127.0.0.1:9"), tools=())
        with pytest.raises(ModelError) as error:
            run(LlamaCppModel("/nowhere/model.gguf"), tools=())
        assert str(error.value).startswith(
            "Refusing to run the embedded model: this test runs under meowgent_nb.testing.no_model_requests."
        )
        _, result = run(scripted_model("Fine."), tools=())  # offline models answer
        assert result.text == "Fine."
    assert meowgent_nb.models.ALLOW_MODEL_REQUESTS is True and LlamaCppModel.stream is stream


def test_the_guard_restores_after_an_error(monkeypatch):
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    with pytest.raises(KeyError), no_model_requests():
        raise KeyError("x")
    assert meowgent_nb.models.ALLOW_MODEL_REQUESTS is True


def test_the_guard_fixture(no_model_requests):
    assert meowgent_nb.models.ALLOW_MODEL_REQUESTS is False
    with pytest.raises(ModelError, match=r"^Refusing to run the embedded model"):
        asyncio.run(LlamaCppModel("/nowhere/model.gguf").stream(None).__anext__())


# --- what the model was sent ---------------------------------------------------------------------


@pytest.fixture
def sent():
    model = scripted_model(tool_call("add", a=2, b=3), "2 + 3 = 5.")
    run(model, tools=(add, shout))
    return model


def test_the_assertions_pass_on_what_was_sent(sent):
    assert_system_prompt(sent, "Be brief.")
    assert_system_prompt(sent, '<tool name="add">', request=0)
    assert_tools_offered(sent, ["shout", "add"], request=0)
    assert_last_user_message(sent, "What is 2 + 3?")  # the tool result after it is not the person's
    assert sent_request(sent, 0)[1] == "request 1 of 2"
    assert sent_request(sent)[1] == "request 2 of 2"


def test_a_different_system_prompt_shows_the_one_sent(sent):
    with pytest.raises(AssertionError) as error:
        assert_system_prompt(sent, "Be thorough.")
    text = str(error.value)
    assert text.startswith(
        "the system prompt of request 2 of 2 does not contain 'Be thorough.'; it was:\n    Be brief."
    )
    assert '    <tool name="add">Add two whole numbers.' in text.splitlines()
    with pytest.raises(
        AssertionError,
        match=r"^the system prompt of request 1 of 2 is not the one expected; it was:\n    Be brief\.",
    ):
        assert_system_prompt(sent, equals="Be brief.", request=0)
    with pytest.raises(ValueError, match=r"^assert_system_prompt: say what to look for"):
        assert_system_prompt(sent)


def test_other_tools_show_what_was_offered(sent):
    with pytest.raises(AssertionError) as error:
        assert_tools_offered(sent, ["add", "search"], request=0)
    assert str(error.value) == (
        "request 1 of 2 offered the tools ['add', 'shout'], not ['add', 'search']; missing: ['search'];"
        " not expected: ['shout']"
    )
    with pytest.raises(TypeError, match=r"give the tool names as a list, e\.g\. \['add'\], not one string"):
        assert_tools_offered(sent, "add")


def test_the_last_turn_offers_no_tools():
    model = scripted_model(tool_call("add", a=1, b=1), "2.")
    run(model, max_turns=2)
    assert_tools_offered(model, [])
    with pytest.raises(
        AssertionError, match=r"^request 2 of 2 offered the tools \[\], not \['add'\]; missing: \['add'\]$"
    ):
        assert_tools_offered(model, ["add"])


def test_a_prompt_that_begins_like_a_tool_result_is_the_persons():
    prompt = '<tool_response name="add">\n5\n</tool_response> Is that right?'
    model = scripted_model(tool_call("add", a=2, b=3), "Yes.")
    run(model, prompt=prompt)
    assert_last_user_message(model, prompt)


def test_another_user_message_shows_the_one_sent(sent):
    with pytest.raises(AssertionError) as error:
        assert_last_user_message(sent, "What is 2 + 4?")
    assert (
        str(error.value)
        == "the last user message of request 2 of 2 is not 'What is 2 + 4?'; it was:\n    What is 2 + 3?"
    )


@pytest.mark.parametrize("index", [2, -3, "0", 1.0, True])
def test_a_request_that_was_not_sent_is_named(sent, index):
    with pytest.raises(AssertionError) as error:
        assert_last_user_message(sent, "x", request=index)
    assert (
        str(error.value)
        == f"ScriptedModel('scripted', remaining=0) was sent 2 request(s); there is no request index {index!r}"
    )


def test_a_model_that_was_sent_nothing_or_keeps_nothing():
    with pytest.raises(
        AssertionError, match=r"^ScriptedModel\('scripted', remaining=1\) was sent no request$"
    ):
        assert_system_prompt(scripted_model("x"), "x")
    with pytest.raises(
        TypeError, match="keeps no list of the requests it was sent; use a ScriptedModel or a FunctionModel"
    ):
        assert_system_prompt(OllamaModel("qwen2.5:0.5b"), "x")
