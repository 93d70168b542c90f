"""Models for tests: a scripted model from answers, a call written as a model writes it, and a
guard that fails a test which would reach a real model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import meowgent_nb.models as models  # its ALLOW_MODEL_REQUESTS flag, set and restored

from ..models.base import ModelChunk, ModelError, ModelRequest
from ..models.scripted import ScriptedModel, Turn

__all__ = ["no_model_requests", "scripted_model", "tool_call"]


def tool_call(name: str, /, **arguments: Any) -> str:
    """A call as a model writes it in the ``xml`` protocol (the default), for a scripted answer.

    ``tool_call("add", a=2, b=3)`` is ``'<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'``.
    """
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}</tool_call>"


def scripted_model(*answers: Turn, name: str = "scripted") -> ScriptedModel:
    """A `ScriptedModel` that gives these answers, one per model turn, in order.

    A call and the answer after its result are two turns::

        model = scripted_model(tool_call("add", a=2, b=3), "2 + 3 = 5.")

    Args:
        answers: A string each (a call is its ``<tool_call>`` text, see `tool_call`), or the
            chunks of one answer (see `ScriptedModel`).
        name: What the model is called in transcripts and errors.

    Raises:
        TypeError: An answer is not a string, a `ModelChunk` or a list of them (a list of
            answers passed as one argument: write ``scripted_model(*answers)``).
    """
    for number, answer in enumerate(answers, 1):
        parts = [answer] if isinstance(answer, (str, ModelChunk)) else answer
        if not isinstance(parts, (list, tuple)) or not all(isinstance(p, (str, ModelChunk)) for p in parts):
            raise TypeError(
                f"scripted_model: answer {number} is {type(answer).__name__} {answer!r:.60}; give each answer"
                " as a string (or a list of str / ModelChunk chunks): scripted_model('first', 'second')"
            )
    return ScriptedModel(answers, name=name)


async def _refuse_embedded(self: Any, request: ModelRequest) -> AsyncIterator[ModelChunk]:
    raise ModelError(
        "Refusing to run the embedded model: this test runs under meowgent_nb.testing.no_model_requests."
        " Use a ScriptedModel (meowgent_nb.testing.scripted_model) or a FunctionModel, or a cassette."
    )
    yield ModelChunk()  # an async generator, like the method it stands in for


@contextmanager
def no_model_requests() -> Iterator[None]:
    """Within it, a request to a real model fails with a `ModelError` instead of being sent.

    Servers (Ollama, OpenAI-compatible) refuse through `meowgent_nb.models.ALLOW_MODEL_REQUESTS`;
    the embedded llama.cpp model, which that flag does not cover, refuses too. Scripted and
    function models and cassette replays answer as usual. Everything is restored on exit. It
    guards this Python process: a notebook's kernel is another one.
    """
    from ..models.llamacpp import LlamaCppModel

    allowed, stream = models.ALLOW_MODEL_REQUESTS, LlamaCppModel.stream
    models.ALLOW_MODEL_REQUESTS = False
    LlamaCppModel.stream = _refuse_embedded  # type: ignore[method-assign]
    try:
        yield
    finally:
        models.ALLOW_MODEL_REQUESTS = allowed
        LlamaCppModel.stream = stream  # type: ignore[method-assign]
