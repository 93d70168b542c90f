"""The agent loop, its calls, events, approvals, rules, context window and expected calls (evals are in `evals`).

The loop (`Agent`, in `loop`): stream the model, parse calls, validate, approve, run in parallel,
feed back; one model turn is `_turn`, a turn's calls `call_runner`, what a run yields `events`.
Four rooms: `approvals` (deciding on calls and the log of what was decided), `rules` (a person's
``TOOL ARG=PATTERN -> allow|ask|deny`` rules and trust in a rules file), `window` (what each
request put in the model's window, and compaction when it would not fit) and `expectations`
(what a run should have done, and the check of a run). Rules and expectations share one glob
dialect (`patterns`) and RE2 for regexes (`regex`).
"""

from __future__ import annotations

from .loop import Agent, AgentResult

__all__ = ["Agent", "AgentResult"]
