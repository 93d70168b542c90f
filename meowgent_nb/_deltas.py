"""Pieces of streamed text: what parsers produce, and what models and the agent pass on.

A bottom module, like `errors`: protocols (the parsers), models (a backend that parses its own
text) and the agent (its events) all use these two values without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TextDelta", "ThinkingDelta"]


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer text the person sees."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's reasoning (``<think>`` text or the backend's thinking field)."""

    text: str
