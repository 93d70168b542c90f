"""Tool-description evals: does the model pick the right tool, with the right arguments?

`evaluation`: `evaluate` / `aevaluate`, which run each `EvalCase` as a fresh `Agent`'s first turn.
`_judge`: what a case is and how an answer is judged. `_row`: `EvalRow`, one run of a case.
`_schedule`: running cases some at once, in order. `report`: `EvalReport`, as text and HTML.
`_tool_block`: the size of the tools block and each tool's digest. `baseline`: `check_baseline`,
the regression gate against outcomes recorded in a file.
"""

from __future__ import annotations

from .evaluation import EvalCase, EvalReport, aevaluate, evaluate

__all__ = ["EvalCase", "EvalReport", "aevaluate", "evaluate"]
