"""The embedded model's KV cache: allocated to what the conversation needs, and 8-bit on request.

Real-model tests run the default model (Qwen2.5-Coder-0.5B-Instruct) at temperature 0, so answers
are exact; they are skipped where llama-cpp-python or the model's parts are not installed.
"""

from __future__ import annotations

import asyncio

import pytest

from meowgent_nb.agent.window import context_window
from meowgent_nb.models import LlamaCppModel, ModelError, ModelRequest
from meowgent_nb.models.resolve import resolve_model
from tests.models.test_llamacpp_model import SYSTEM, ask, real_model

STORY = "The lighthouse keeper counted ships every night and wrote each one down. " * 8
QUESTION = "What did the lighthouse keeper count? Answer in five words."
ANSWER = "The lighthouse keeper counted ships every night and wrote each one down."
FOLLOW_UP = "Thank you. And what exactly did he write down each night, in his book?"
SECOND_ANSWER = "He wrote down the names of the ships he counted."


@pytest.fixture(autouse=True)
def _no_kv_cache_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEOWGENT_KV_CACHE", raising=False)
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


def answer(model: LlamaCppModel, request: ModelRequest) -> tuple[str, int]:
    async def run() -> tuple[str, int]:
        chunks = [chunk async for chunk in model.stream(request)]
        return "".join(c.text for c in chunks), chunks[-1].usage.prompt_tokens

    return asyncio.run(run())


# --- everywhere: settings and their errors -------------------------------------------------------


def test_a_kv_cache_type_it_does_not_take_is_refused_saying_which_it_takes():
    with pytest.raises(ModelError) as caught:
        LlamaCppModel(kv_cache="q4")
    assert str(caught.value) == (
        "kv_cache is 'q4', which is not a KV cache type the local model takes: use 'f16' or"
        " 'q8_0' (8-bit, about half the memory)."
    )


def test_the_kv_cache_type_comes_from_the_environment_unless_given(monkeypatch: pytest.MonkeyPatch):
    assert LlamaCppModel().kv_cache == "f16"
    monkeypatch.setenv("MEOWGENT_KV_CACHE", "q8_0")
    assert (LlamaCppModel().kv_cache, LlamaCppModel(kv_cache="f16").kv_cache) == ("q8_0", "f16")
    monkeypatch.setenv("MEOWGENT_KV_CACHE", "Q8")
    with pytest.raises(ModelError) as caught:
        LlamaCppModel()
    assert str(caught.value) == (
        "MEOWGENT_KV_CACHE is 'Q8', which is not a KV cache type the local model takes: use 'f16'"
        " or 'q8_0' (8-bit, about half the memory)."
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"n_ctx": 0}, "n_ctx must be a positive number of tokens (the context window), not 0."),
        (
            {"initial_ctx": "4k"},
            "initial_ctx must be a positive number of tokens (the context allocated at load), not '4k'.",
        ),
    ],
)
def test_context_sizes_must_be_positive_numbers_of_tokens(settings, message):
    with pytest.raises(ModelError) as caught:
        LlamaCppModel(**settings)
    assert str(caught.value) == message


def test_nothing_is_allocated_before_the_first_request():
    model = LlamaCppModel(n_ctx=16384)
    assert (model.allocated_ctx, model.initial_ctx, context_window(model)) == (0, 4096, 16384)


# --- real: the context grows with the conversation ------------------------------------------------


def conversation(*turns: str) -> ModelRequest:
    """A system message, then the user's and the model's turns alternating."""
    roles = ["user", "assistant"] * len(turns)
    return ModelRequest(messages=[SYSTEM, *({"role": r, "content": t} for r, t in zip(roles, turns))])


@real_model
def test_a_conversation_grows_its_context_past_the_start_and_answers_as_a_whole_one():
    grown = LlamaCppModel(n_ctx=2048, initial_ctx=256, max_tokens=16)
    first = conversation(STORY + QUESTION)
    assert answer(grown, first) == (ANSWER, 144)
    assert grown.allocated_ctx == 256  # 144 + 16 + 64 tokens of margin fit
    second = conversation(STORY + QUESTION, ANSWER, FOLLOW_UP)
    text, prompt_tokens = answer(grown, second)
    assert (text, prompt_tokens, grown.allocated_ctx) == (SECOND_ANSWER, 185, 512)  # 185 + 80 > 256
    # The window compaction fits to is still the person's n_ctx, not what is allocated.
    assert context_window(grown) == 2048
    # The same answers as a context allocated whole at load, as before: its second request also
    # reuses what the first read (read afresh, the second answer is another: "He wrote down each
    # ship's name, location, and other details.").
    whole = LlamaCppModel(n_ctx=2048, initial_ctx=2048, max_tokens=16)
    assert [answer(whole, first), answer(whole, second)] == [(ANSWER, 144), (SECOND_ANSWER, 185)]
    assert whole.allocated_ctx == 2048


@real_model
def test_growing_carries_over_what_was_read_and_stops_at_the_persons_limit():
    model = LlamaCppModel(n_ctx=300, initial_ctx=256, max_tokens=16)
    assert answer(model, ask("Say hello.")) == ("Hello! How can I assist you today?", 22)
    small = model._loaded
    read = small.llama.n_tokens
    with model._lock:
        grown = model._sized(small, 1000)  # more than n_ctx: grown to n_ctx, padded by llama.cpp
    assert (grown.llama.n_ctx(), model.allocated_ctx, grown.llama.n_tokens) == (512, 512, read)
    assert list(grown.llama.input_ids[:read]) == list(small.llama.input_ids[:read])
    with model._lock:
        assert model._sized(grown, 1000) is grown  # at the limit: no further
    assert answer(model, ask("Say hello.")) == ("Hello! How can I assist you today?", 22)


@real_model
def test_the_default_allocates_4096_tokens_where_the_magic_asks_16384():
    # As %%agent -m local makes it: the magic's options, num_ctx 16384 among them.
    model = resolve_model("local", options={"temperature": 0.1, "num_ctx": 16384, "num_predict": 4})
    assert isinstance(model, LlamaCppModel)
    answer(model, ask("Say hello."))
    assert (model.allocated_ctx, model.n_ctx, context_window(model)) == (4096, 16384, 16384)


@real_model
def test_an_8_bit_kv_cache_loads_and_answers():
    model = LlamaCppModel(n_ctx=512, max_tokens=16, kv_cache="q8_0")
    assert answer(model, ask("Say hello.")) == ("Hello! How can I assist you today?", 22)
    assert model._loaded.llama.context_params.type_k == model._loaded.llama.context_params.type_v == 8
