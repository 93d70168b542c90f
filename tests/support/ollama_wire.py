"""Ollama's ``/api/chat`` streaming wire format, for the test servers that stand in for Ollama."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meowgent_nb.models import ModelChunk, Usage

MODEL = "qwen3:0.6b"
CREATED = "2025-06-01T12:00:00.123456789Z"


def part(content: str = "", *, thinking: str | None = None, tool_calls: list | None = None) -> dict:
    """One streamed /api/chat part, as Ollama sends it before the last."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"model": MODEL, "created_at": CREATED, "message": message, "done": False}


FINAL = {
    "model": MODEL,
    "created_at": CREATED,
    "message": {"role": "assistant", "content": ""},
    "done": True,
    "done_reason": "stop",
    "total_duration": 2_500_000_000,
    "load_duration": 250_000_000,
    "prompt_eval_count": 26,
    "prompt_eval_duration": 500_000_000,
    "eval_count": 12,
    "eval_duration": 1_750_000_000,
}
"""The last part: counts and durations (nanoseconds)."""

FINAL_USAGE = Usage(
    prompt_tokens=26,
    completion_tokens=12,
    total_seconds=2.5,
    load_seconds=0.25,
    prompt_seconds=0.5,
    completion_seconds=1.75,
)
"""What `OllamaModel` reads from `FINAL`."""

FINAL_CHUNK = ModelChunk(done=True, usage=FINAL_USAGE, finish_reason="stop")
"""The last chunk `OllamaModel` streams for `FINAL`."""


def ndjson(*parts: dict) -> str:
    """The parts as the response body: one JSON object a line."""
    return "".join(json.dumps(p) + "\n" for p in parts)


def show(*capabilities: str) -> dict:
    """A ``POST /api/show`` answer for a model the server has."""
    return {
        "modelfile": "",
        "parameters": "",
        "template": "",
        "details": {},
        "model_info": {},
        "capabilities": list(capabilities),
    }


SHOWN = Path(__file__).parent / "ollama_show"
"""Real models' ``/api/show`` answers (their README says where each comes from)."""


def real_show(family: str) -> dict:
    """What Ollama's ``/api/show`` answers for ``family``: qwen3, llama3.2, granite4 or gemma3."""
    return json.loads((SHOWN / f"{family}.json").read_text())


def not_found(name: str) -> dict:
    """The body of Ollama's 404 for a model it does not have (``/api/show``, ``/api/chat``)."""
    return {"error": f"model '{name}' not found"}
