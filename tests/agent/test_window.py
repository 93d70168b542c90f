"""What each request puts in the model's context window (`Agent.context_use`), counted exactly."""

from __future__ import annotations

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.agent.window import PARTS, context_window
from meowgent_nb.models import ModelChunk, OllamaModel, Usage
from meowgent_nb.protocols.prompt import DEFAULT_SYSTEM


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


CALL = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'


class Counting:
    """A model that counts tokens as words and reports usage as a server does (prompt 500 tokens)."""

    name = "counting"
    n_ctx = 1000

    def __init__(self, answers):
        self.answers = list(answers)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def stream(self, request):
        yield ModelChunk(text=self.answers.pop(0))
        yield ModelChunk(done=True, usage=Usage(prompt_tokens=500, completion_tokens=9), finish_reason="stop")


def words(text: str) -> int:
    return len(text.split())


def test_each_part_is_counted_with_the_models_tokenizer_and_the_rest_of_the_reported_prompt_is_format():
    agent = Agent(Counting([CALL, "It is 3."]), tools=[add])
    agent.run("What is one plus two?")
    first, second = agent.context_use(0), agent.context_use()
    system = agent.system_prompt()
    block = agent._protocol.tools_block([add])
    assert block in system
    rules = system[len(DEFAULT_SYSTEM) :].replace(block, "", 1)
    expected_first = {
        "tool rules": words(rules),
        "tool descriptions": words(block),
        "your instructions": words(DEFAULT_SYSTEM),
        "earlier turns": 0,
        "tool results": 0,
        "the new prompt": 5,
        "the answer": 9,
    }
    assert {k: v for k, v in first.tokens.items() if k != "message format"} == expected_first
    assert first.tokens["message format"] == 500 - sum(
        v for k, v in expected_first.items() if k != "the answer"
    )
    assert list(first.tokens) == list(PARTS)
    assert (first.turn, first.estimated, first.window, first.reported, first.prompt, first.used) == (
        1,
        False,
        1000,
        500,
        500,
        509,
    )
    assert first.footer() == "context 50 % of 1,000"
    assert second.turn == 2
    assert second.tokens["earlier turns"] == words(CALL)  # the model's own call, sent back as a turn
    assert second.tokens["tool results"] == words(agent.messages[-2]["content"])
    assert second.tokens["the new prompt"] == 5


def test_without_a_tokenizer_the_parts_are_estimated_and_marked_so():
    agent = Agent(ScriptedModel(["Hello there."]), tools=[add])
    assert agent.context_use() is None  # nothing sent yet
    agent.run("Hi")
    use = agent.context_use()
    assert use.estimated is True and use.reported is None and use.window is None
    assert (
        use.tokens["the new prompt"] == 1 and use.tokens["the answer"] == 3
    )  # ceil(len/4): "Hi", "Hello there."
    assert use.footer() == f"context ~{use.used:,} tokens"
    agent.reset()
    assert agent.context_use() is None


def test_the_window_is_the_requests_num_ctx_else_the_models_else_what_ollama_is_sent():
    class Local:
        n_ctx = 2048

    assert context_window(Local()) == 2048
    assert context_window(Local(), {"num_ctx": 4096}) == 4096
    assert context_window(OllamaModel("qwen2.5:0.5b")) == 16384
    assert context_window(OllamaModel("qwen2.5:0.5b", options={"num_ctx": 8192})) == 8192
    for odd in ({"num_ctx": True}, {"num_ctx": -1}, {"num_ctx": "big"}):
        assert context_window(Local(), odd) == 2048
    assert context_window(ScriptedModel(["x"])) is None


def test_an_overflowing_window_says_over_100_percent():
    agent = Agent(Counting(["ok"]))
    agent.model.n_ctx = 400
    agent.run("Hi")
    assert agent.context_use().footer() == "context 127 % of 400"


def test_the_log_keeps_the_last_200_requests():
    agent = Agent(ScriptedModel(["ok"] * 205))
    for _ in range(205):
        agent.run("again")
    assert len(agent.context_log) == 200
    assert agent.context_use(0).turn == 6 and agent.context_use().turn == 205


def test_a_prompt_that_begins_like_a_tool_result_counts_as_the_prompt():
    prompt = '<tool_response name="add">\n3\n</tool_response> was the answer; why?'
    agent = Agent(Counting(["Because."]), tools=[add])
    agent.run(prompt)
    use = agent.context_use()
    assert (use.tokens["the new prompt"], use.tokens["tool results"]) == (words(prompt), 0)
