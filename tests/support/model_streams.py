"""Reading a model's whole stream in the backend tests: every chunk, and the error that ended it."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any

from meowgent_nb.models import ModelChunk, ModelError, ModelRequest


def collect_stream(model: Any, request: ModelRequest) -> tuple[list[ModelChunk], ModelError | None]:
    """Every chunk ``model`` streamed for ``request``, and the `ModelError` that ended the stream, if any."""
    chunks: list[ModelChunk] = []

    async def consume() -> None:
        async with aclosing(model.stream(request)) as stream:
            async for chunk in stream:
                chunks.append(chunk)

    try:
        asyncio.run(consume())
    except ModelError as error:
        return chunks, error
    return chunks, None


async def first_chunk(model: Any, request: ModelRequest) -> ModelChunk:
    """The stream's first chunk; the stream is then closed at once (as a caller that stops early does)."""
    async with aclosing(model.stream(request)) as stream:
        async for chunk in stream:
            return chunk
    raise AssertionError("the stream had no chunk")
