"""Helpers for testing your own tools, agents and notebooks with pytest.

The package's pytest plugin (installed with it; no conftest.py needed) gives them as fixtures
too: ``scripted_model``, ``no_model_requests`` and ``run_notebook``.

- `scripted_model` and `tool_call`: a deterministic model from a list of answers.
- `no_model_requests`: a context manager (and fixture) that fails a test which would reach a
  real model, a server or the embedded one.
- `assert_system_prompt`, `assert_tools_offered`, `assert_last_user_message`: what a scripted
  or function model was sent, with failures that show what was actually sent.
- `run_notebook`: run a notebook headless and get its ``%%agent`` cells as data (prompts,
  calls, results, answers, transcripts), without changing what the notebook does or saves.
- `assert_eval_baseline`: a tool-description eval checked against a baseline file (recorded on
  first use), failing when a docstring or schema edit made any case worse.
- `cassette_spans`: the runs a cassette recorded, as the OpenTelemetry spans a traced run makes.
"""

from __future__ import annotations

from ._eval_gate import assert_eval_baseline
from ._models import no_model_requests, scripted_model, tool_call
from ._notebook import AgentCell, NotebookRun, ToolRun, run_notebook
from ._sent import assert_last_user_message, assert_system_prompt, assert_tools_offered, sent_request
from ._trace import cassette_spans

__all__ = [
    "AgentCell",
    "NotebookRun",
    "ToolRun",
    "assert_eval_baseline",
    "assert_last_user_message",
    "assert_system_prompt",
    "assert_tools_offered",
    "cassette_spans",
    "no_model_requests",
    "run_notebook",
    "scripted_model",
    "sent_request",
    "tool_call",
]
