"""The tools as an eval's model was shown them: the size of their block and a digest of each tool.

`tool_block_text` asks the protocol (never its name) what describes the tools; `measure_tool_block`
counts it with the model's ``count_tokens`` where it has one, else estimates from characters.
`tool_digests` is what a baseline notices has changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..agent.window import CHARACTERS_PER_TOKEN
from ..protocols.base import ToolProtocol
from ..tools.core import Tool

__all__ = ["ToolBlockSize", "measure_tool_block", "tool_block_text", "tool_digests"]


@dataclass(frozen=True)
class ToolBlockSize:
    """How big the tools block was (see `tool_block_text`)."""

    tokens: int
    """Its tokens: counted with the model's tokenizer, or estimated (``estimated``)."""
    characters: int
    """Its length in characters."""
    estimated: bool
    """True when the model has no tokenizer here (no ``count_tokens``): ``tokens`` is then
    ``characters`` / `CHARACTERS_PER_TOKEN`, rounded up."""


def tool_block_text(protocol: ToolProtocol, tools: Sequence[Tool], system: str | None) -> str:
    """The text that describes ``tools`` to the model, as ``protocol`` sends them on a first turn.

    What the tools add to the system prompt (``xml``, ``json``), then, on a new line, the schemas
    the protocol passes to the backend (``native``), one ``json.dumps`` per line as Qwen2.5's chat
    template writes them; either part may be empty.

    Args:
        protocol: The protocol object (`protocols.registry.get_protocol`).
        tools: The tools offered.
        system: The person's instructions, as for `Agent`.
    """
    shown = protocol.system_prompt(tools, system)
    bare = protocol.system_prompt((), system)
    in_prompt = shown[len(bare) :] if shown.startswith(bare) else shown
    passed = protocol.request(tools, last=False).tools if tools else ()
    schemas = "\n".join(json.dumps(tool.to_json_schema()) for tool in passed)
    return "\n".join(part for part in (in_prompt, schemas) if part)


async def measure_tool_block(text: str, model: Any) -> ToolBlockSize:
    """``text``'s size, in the model's tokens if it can count them (on a worker thread: a first
    count may load a vocabulary), else estimated.

    Raises:
        ModelError: The model's tokenizer could not be loaded.
    """
    count = getattr(model, "count_tokens", None)
    if callable(count):
        tokens = cast(int, await asyncio.to_thread(count, text))  # a model's count_tokens gives an int
        return ToolBlockSize(tokens, len(text), False)
    return ToolBlockSize(math.ceil(len(text) / CHARACTERS_PER_TOKEN), len(text), True)


def tool_digests(tools: Iterable[Tool]) -> dict[str, str]:
    """``{name: digest}``: the first 16 hex digits of the SHA-256 of the tool's JSON schema (its
    name, description and parameters with theirs, keys sorted), the one source every protocol
    renders the tool from. An edit of a docstring, an ``Annotated`` text or a type changes it."""
    return {
        tool.name: hashlib.sha256(
            json.dumps(tool.to_json_schema(), sort_keys=True, ensure_ascii=False, default=repr).encode()
        ).hexdigest()[:16]
        for tool in tools
    }
