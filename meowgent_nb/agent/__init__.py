"""The agent loop, its calls, events, approvals, context and compaction (the eval is in `evals`).

The loop (`Agent`): stream the model, parse calls, validate, approve, run in parallel, feed back.
"""

from __future__ import annotations

from .loop import Agent, AgentResult

__all__ = ["Agent", "AgentResult"]
