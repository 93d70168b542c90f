"""Text from outside made inert for a chat prompt: it cannot open or end a block, a turn or a message.

`inert` escapes, the way HTML would (``&lt;``, ``&#91;``), the first character of our own tags
(``<tool_response>``, ``<context>``..., in any case and spacing) and of every common chat
template's special tokens as tokenizers match them (exactly), plus a backend's own control tokens
(`escape_tokens`). All families are escaped whatever model is in use, because the text is made
before it is known which model reads it, and the same text must escape the same way for
recordings and prompt caches to stay valid. Nothing else changes, and escaping twice changes
nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = ["escape_tokens", "inert", "inert_descriptions"]

# The first character of each match is escaped:
# - our tags and the tags other tool templates use, in any case, with spaces: a model reads them;
# - "<|" and "<｜" (fullwidth bar): every special token of ChatML, Llama 3/4, Phi, GLM, gpt-oss
#   harmony, Command R, Granite (<|...|>) and DeepSeek (<｜...｜>) begins so;
# - the named special tokens of the other families, exactly as their tokenizers read them: in
#   angle brackets (Llama 2 and Mistral <s> </s>, Gemma, GLM <sop>, Command R, reasoning models'
#   <think>), Llama 2's <<SYS>>, and in square brackets (Llama 2 and Mistral [INST], Mistral v3+
#   [TOOL_CALLS] ..., GLM [gMASK]). Exact and case-sensitive: "x[inst]" or "<S>" is code or text.
_ANGLE = re.compile(
    r"<(?=(?i:\s*/?\s*(?:tool_response|tool_result|tool_call|context|server_instructions)\b)"
    r"|[|｜]"
    r"|/?(?:s|unk|bos|eos|pad|mask|sop|eop|think|start_of_turn|end_of_turn|start_of_image|end_of_image"
    r"|image_soft_token|unused\d+|(?:start|end)_function_(?:call|response|declaration)|escape"
    r"|BOS_TOKEN|EOS_TOKEN)>"
    r"|</?SYS>>)"
)
_SQUARE = re.compile(
    r"\[(?=/?(?:INST|TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS|SYSTEM_PROMPT|TOOL_CONTENT|CALL_ID|ARGS|THINK"
    r"|IMG|IMG_BREAK|IMG_END|PREFIX|MIDDLE|SUFFIX|gMASK|sMASK|MASK)\])"
)


def _entity(character: str) -> str:
    return "&lt;" if character == "<" else f"&#{ord(character)};"


def inert(text: str, tokens: Iterable[str] = ()) -> str:
    """``text`` with the first character of anything that could open or end a block of the prompt
    escaped: ``<`` as ``&lt;``, ``[`` as ``&#91;``.

    Our tags (``</tool_response>``, ``<tool_call>``, ``</context>``, ``<server_instructions>``)
    in any case and spacing, and the special tokens of the common chat-template families
    (ChatML, Llama 2/3, Mistral, Gemma, Phi, DeepSeek, GLM, gpt-oss harmony, Command R) lose
    their first character; nothing else changes. ``inert(inert(x)) == inert(x)``.

    Args:
        text: What a tool returned, a server wrote, a model summarized.
        tokens: A model's own special tokens besides (exact texts), escaped as well.
    """
    return escape_tokens(_SQUARE.sub("&#91;", _ANGLE.sub("&lt;", text)), tokens)


def inert_descriptions(schema: Any) -> Any:
    """A JSON Schema with every ``description`` and ``title`` text `inert`: a tool's schema (an MCP
    server's) is pasted into the prompt by the backend's chat template as JSON, whose strings keep
    a ``<|im_end|>`` as it is. Values (``enum``, ``const``, ``default``, ``examples``) are left as
    they are: the model must write them exactly."""
    if isinstance(schema, list):
        return [inert_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: _inert_keyword(key, value) for key, value in schema.items()}


def _inert_keyword(key: str, value: Any) -> Any:
    if key in ("description", "title") and isinstance(value, str):
        return inert(value)
    if key in ("enum", "const", "default", "examples"):
        return value
    if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
        # Names, not keywords: a property may be called "enum" or "description".
        return {name: inert_descriptions(item) for name, item in value.items()}
    return inert_descriptions(value)


def escape_tokens(text: str, tokens: Iterable[str]) -> str:
    """``text`` with the first character of every occurrence of each of ``tokens`` escaped (as an
    HTML character reference), overlapping ones included, so none of them is left and escaping
    again changes nothing. A backend that knows its model's control tokens passes them here."""
    pattern = _any_of(frozenset(t for t in tokens if t))
    return pattern.sub(lambda m: _entity(m.group()), text) if pattern is not None else text


@lru_cache(maxsize=8)
def _any_of(tokens: frozenset[str]) -> re.Pattern[str] | None:
    if not tokens:
        return None
    # A lookahead at each position finds every occurrence, also one that begins inside another.
    alternatives = "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
    return re.compile(rf"(?=(?:{alternatives}))(?s:.)")
