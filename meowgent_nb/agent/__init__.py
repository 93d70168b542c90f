"""The agent loop, its events, approvals and the eval.

The loop (`Agent`): stream the model, parse calls, validate, approve, run in parallel, feed back.
"""

from __future__ import annotations

from .loop import Agent, AgentResult

__all__ = ["Agent", "AgentResult"]
