"""The wire between a kernel's `SharedLocalModel` and the shared model process: JSON lines, version 1.

A client connects to the process's Unix socket, writes one request line, reads answer lines until
the process closes the connection. Every line is one JSON object, UTF-8, ending in ``\\n``.

Requests (``"v"`` is the protocol version; a process that speaks another answers ``error``)::

    {"v": 1, "op": "chat", "request": {"messages": [...], "tools": [<tool JSON schema>, ...],
     "format": <schema>|null, "call_format": <schema>|null, "call_tag": "<tool_call>"|null,
     "call_grounding": true|false, "options": {"temperature": 0, ...}, "think": true|false|null}}
    {"v": 1, "op": "count", "text": "..."}          -> {"tokens": 12}
    {"v": 1, "op": "status"}                        -> {"pid": ..., "model": ..., "n_ctx": ...,
                                                        "waiting": 0, "connected": 1, "idle_seconds": ...}
    {"v": 1, "op": "stop"}                          -> {"stopping": true}

A ``chat`` is answered by chunks, in order, the last with ``"done": true``::

    {"status": "waiting for the shared model: 2 ahead"}
    {"text": "Hel"}    {"thinking": "..."}    {"tool_calls": [{"name": ..., "arguments": {...}}]}
    {"done": true, "finish_reason": "stop", "usage": {"prompt_tokens": 30, ...}}

or, at any point, by ``{"error": "<the ModelError's message>"}`` and the end of the connection.
Tools travel as their JSON schemas (what the chat template reads); the process never parses calls:
the kernel runs the request's ``call_parser`` on the streamed text, as `LlamaCppModel` does in one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any

from ..tools.core import ToolCall
from .base import ModelChunk, ModelRequest, Usage

__all__ = ["VERSION", "chunk_from_wire", "chunk_to_wire", "line", "request_to_wire"]

VERSION = 1
"""The protocol version both ends write in each request (``"v"``)."""

_USAGE_FIELDS = tuple(f.name for f in fields(Usage))


def line(value: Mapping[str, Any]) -> bytes:
    """One wire line: ``value`` as compact JSON and a newline."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def request_to_wire(request: ModelRequest) -> dict[str, Any]:
    """The ``request`` object of a ``chat`` line (without ``call_parser``, which stays in the kernel)."""
    return {
        "messages": [dict(message) for message in request.messages],
        "tools": [tool.to_json_schema() for tool in request.tools],
        "format": request.format,
        "call_format": request.call_format,
        "call_tag": request.call_tag,
        "call_grounding": request.call_grounding,
        "options": dict(request.options),
        "think": request.think,
    }


def chunk_to_wire(chunk: ModelChunk) -> dict[str, Any]:
    """A chunk as a wire object: only its fields that are set."""
    out: dict[str, Any] = {}
    if chunk.status is not None:
        out["status"] = chunk.status
    if chunk.text:
        out["text"] = chunk.text
    if chunk.thinking:
        out["thinking"] = chunk.thinking
    if chunk.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": dict(c.arguments)} for c in chunk.tool_calls]
    if chunk.done:
        out["done"] = True
        out["finish_reason"] = chunk.finish_reason
        if chunk.usage is not None:
            out["usage"] = {k: v for k, v in asdict(chunk.usage).items() if v is not None}
    return out


def chunk_from_wire(value: Mapping[str, Any]) -> ModelChunk:
    """The chunk a wire object stands for (see `chunk_to_wire`)."""
    usage = value.get("usage")
    return ModelChunk(
        text=value.get("text", ""),
        thinking=value.get("thinking", ""),
        tool_calls=tuple(
            ToolCall(c["name"], dict(c["arguments"]), id="") for c in value.get("tool_calls", ())
        ),
        done=bool(value.get("done", False)),
        usage=None if usage is None else Usage(**{k: v for k, v in usage.items() if k in _USAGE_FIELDS}),
        finish_reason=value.get("finish_reason"),
        status=value.get("status"),
    )
