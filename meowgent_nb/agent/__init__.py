"""The agent loop, its calls, events, approvals, context and compaction (the eval is in `evals`).

The loop (`Agent`): stream the model, parse calls, validate, approve, run in parallel, feed back.
Two rooms: `approvals` (deciding on calls and the log of what was decided) and `context` (what
each request put in the model's window, and compaction when it would not fit).
"""

from __future__ import annotations

from .loop import Agent, AgentResult

__all__ = ["Agent", "AgentResult"]
