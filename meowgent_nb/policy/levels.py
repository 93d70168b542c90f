"""The words a policy compares: approval settings from loosest to strictest, and the model backends."""

from __future__ import annotations

__all__ = ["APPROVALS", "BACKENDS", "looser"]

APPROVALS = ("allow", "ask", "every", "deny")
"""Approval settings from loosest (no one is asked, calls run) to strictest (calls are denied)."""
BACKENDS = ("ollama", "openai", "local")
"""Where a model named by a spec runs: an Ollama server, an OpenAI-compatible server, or embedded."""


def looser(mode: str, than: str) -> bool:
    """Whether approval setting ``mode`` lets more calls run without a person than ``than``."""
    return APPROVALS.index(mode) < APPROVALS.index(than)
