"""The agent: its loop, a turn's calls, what a run yields, and the rooms the calls pass through.

`loop`: `Agent` (stream the model, parse, validate, approve, run, feed back); `_settings`:
`RunSettings`, shared by the loop and its `CallRunner`; `_turn`: one model turn's request and
answer; `_retry`: a request asked again when the server failed in a way that may mend; `call_runner`: `CallRunner`, a turn's calls from validation to result; `_tool_threads`:
the threads calls run on; `running_call`: the call running now, for MCP questions mid-call;
`repeated`: the notice after a repeated failure; `_images`: images in results, for a model that
sees; `events`: what a run yields; `result`: `AgentResult`. Rooms: `approvals` (decisions, the
approver protocol, the decision log), `rules` (``TOOL ARG=PATTERN -> allow|ask|deny`` and trust
in a rules file), `window` (what each request put in the model's window, and compaction),
`expectations` (what a run should have done, and its check) and `tracing` (OpenTelemetry spans
made from a run's events, when a run is traced). Rules and expectations share one
glob dialect (`patterns`) and RE2 for regexes (`regex`). Evals are in `meowgent_nb.evals`.
"""

from __future__ import annotations

from .loop import Agent, AgentResult

__all__ = ["Agent", "AgentResult"]
