"""`LlamaCppModel.count_tokens`: the model's own tokenizer, from the GGUF's vocabulary alone until
the model loads; and the eval's tools block counted with it. ``real_model`` tests read the default
model's file (a vocabulary load takes a fraction of a second); the rest run everywhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from meowgent_nb import tool
from meowgent_nb.evals._tool_block import ToolBlockSize, measure_tool_block, tool_block_text
from meowgent_nb.models import LlamaCppModel, ModelError
from meowgent_nb.protocols.registry import get_protocol
from tests.models.test_llamacpp_model import ask, collect, real_model

PROMPT = "<|im_start|>system\nHello <tools>x</tools> world<|im_end|>"


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


def test_a_missing_file_is_named_when_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    missing = tmp_path / "gone.gguf"
    with pytest.raises(ModelError) as error:
        LlamaCppModel(missing).count_tokens("Hi")
    assert (
        str(error.value) == f"The local model file {missing} does not exist: check the path (a .gguf file)."
    )
    monkeypatch.setenv("MEOWGENT_GGUF", str(missing))
    with pytest.raises(ModelError) as error:
        LlamaCppModel().count_tokens("Hi")
    assert str(error.value) == (
        f"MEOWGENT_GGUF is set to {missing}, which is not a file: point it at a GGUF file, or unset"
        " it to use the default local model."
    )


@real_model
def test_counting_reads_only_the_vocabulary_and_prints_nothing(capfd):
    model = LlamaCppModel(n_ctx=512)
    counts = [model.count_tokens(text) for text in (PROMPT, "", "<|im_end|>", "Hello, world!")]
    # The special tokens' text is one token each, as in a prompt: <|im_start|> system \n Hello
    # <tools> x </tools> world <|im_end|> (Qwen2.5 has no <tools> token: "<", "tools", ">")
    assert counts == [12, 0, 1, 4]
    assert model._loaded is None  # the model itself was not loaded
    assert capfd.readouterr() == ("", "")  # llama.cpp's log stays out of the cell


@real_model
def test_the_vocabulary_and_the_loaded_model_count_alike():
    model = LlamaCppModel(n_ctx=512, max_tokens=4)
    before = model.count_tokens(PROMPT)
    collect(model, ask("Hi"))  # loads the model
    assert model._loaded is not None
    assert model.count_tokens(PROMPT) == before
    assert model.count_tokens(PROMPT) == len(
        model._loaded.llama.tokenize(PROMPT.encode(), add_bos=False, special=True)
    )


@real_model
def test_the_eval_counts_the_tools_block_with_the_models_tokenizer():
    @tool
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    model = LlamaCppModel(n_ctx=512)
    text = tool_block_text(get_protocol("xml"), [add], None)
    size = asyncio.run(measure_tool_block(text, model))
    # Qwen2.5's tokenizer: 135 tokens, where characters / 4 estimates 150
    assert size == ToolBlockSize(135, 599, estimated=False)
