"""The ``"summarize"`` context policy's summary: what the model writes about the exchanges left out.

One tool-less request through the agent's model (so a cassette records and replays it) asks for
a short summary of the exchanges compaction left out and of the summary before. It is sent as the
assistant's message, never the person's, and what it is written from and the summary are made
`inert` as tool output is, so it can never read as a call, a result or the end of a message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...models.base import Model, ModelRequest
from ...protocols.prompt import inert
from ...tools.calls import is_tool_result
from . import CHARACTERS_PER_TOKEN

SUMMARY_HEADER = "[My summary of the earlier part of this conversation, left out to fit the context window]"
"""How the summary message begins (`%agent context` and the sizes recognise it by this)."""

SYSTEM = (
    "You write a short summary of a conversation between a person and an assistant that calls tools."
    " Keep what later questions may need: the person's requests, facts and numbers the tools returned,"
    " names, decisions and what is still open. Write plain sentences, no tool calls, no preamble."
)

_ROLE = {"user": "Person", "assistant": "Assistant", "tool": "Tool result"}


def summary_budget(window: int) -> int:
    """Tokens the summary may take: a sixteenth of the window, 48 to 256."""
    return max(48, min(256, window // 16))


def summary_request(
    messages: Sequence[Mapping[str, Any]], earlier: str, *, window: int, budget: int
) -> ModelRequest:
    """The request for a summary of ``messages`` (as they were sent), after the ``earlier`` summary.

    The text is kept to about half the window; longer messages keep their start and end.
    """
    room = int((window // 2) * CHARACTERS_PER_TOKEN)
    lines = [f"Summary so far: {inert(earlier)}"] if earlier else []
    texts = [(_role(m), _content(m)) for m in messages]
    each = max(200, (room - sum(map(len, lines))) // max(1, len(texts)))
    for role, text in texts:
        if len(text) > each:
            text = f"{text[: each * 2 // 3]} [...] {text[-(each // 3) :]}"
        lines.append(f"{role}: {text}")
    prompt = (
        "Here is the earlier part of a conversation:\n\n<context>\n{}\n</context>\n\n"
        "Summarize it in at most {} words: what the person asked and the facts the tools returned."
    ).format("\n\n".join(lines), budget * 3 // 5)
    return ModelRequest(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        options={"num_predict": budget},
    )


async def write_summary(model: Model, request: ModelRequest, budget: int) -> str:
    """The model's summary for ``request``, made safe to send and at most ``budget`` tokens long.

    Raises:
        ModelError: The model failed (the caller goes on without a summary).
    """
    parts = []
    async for chunk in model.stream(request):
        parts.append(chunk.text)
        if chunk.done:
            break
    text = inert("".join(parts)).strip()
    limit = int(budget * CHARACTERS_PER_TOKEN)
    if len(text) > limit:
        text = text[: limit - 4].rsplit(" ", 1)[0] + " ..."
    return text


def summary_message(summary: str) -> dict[str, Any]:
    """The message the summary is sent as, in place of the exchanges left out."""
    return {"role": "assistant", "content": f"{SUMMARY_HEADER}\n{summary}"}


def _role(message: Mapping[str, Any]) -> str:
    # Results sent as the person's text (xml, json) are the tools', not the person's.
    role = str(message.get("role"))
    return "Tool result" if is_tool_result(message) else _ROLE.get(role, role)


def _content(message: Mapping[str, Any]) -> str:
    text = str(message.get("content", ""))
    calls = message.get("tool_calls")
    if calls:
        text += " " + str(calls)
    return inert(text)
