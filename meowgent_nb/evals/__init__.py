"""Tool-description evals: does the model pick the right tool, with the right arguments?

`evaluate` and `aevaluate` (in ``evaluation``) run each `EvalCase` as a fresh `Agent`'s first
turn (``repeat`` times, some at once: `_schedule`), judged by `_judge`; the `EvalReport` they
return and its rendering are in `report`, the size of the tools block the model was shown and
each tool's digest in `_tool_block`. `baseline.check_baseline` is the regression gate: a report compared with the
outcomes recorded in a file.
"""

from __future__ import annotations

from .evaluation import EvalCase, EvalReport, aevaluate, evaluate

__all__ = ["EvalCase", "EvalReport", "aevaluate", "evaluate"]
