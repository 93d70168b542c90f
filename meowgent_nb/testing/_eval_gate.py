"""`assert_eval_baseline`: the regression gate of ``%tools eval --baseline`` for a plain pytest file."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..evals.baseline import check_baseline
from ..evals.evaluation import TEXT_LIMIT, EvalCase, EvalReport, evaluate
from ..models.base import Model
from ..protocols.base import ToolProtocol
from ..tools.core import Tool

__all__ = ["assert_eval_baseline"]


def assert_eval_baseline(
    cases: Iterable[EvalCase | Mapping[str, Any]],
    baseline: str | os.PathLike[str],
    *,
    tools: Iterable[Tool],
    model: Model | str | None,
    protocol: str | ToolProtocol = "xml",
    system: str | None = None,
    repeat: int = 1,
    concurrency: int = 1,
    text_limit: int | None = TEXT_LIMIT,
) -> EvalReport:
    """Evaluate ``cases`` and check the outcomes against ``baseline``, as ``%tools eval --baseline`` does.

    The first run (no file yet) records the baseline; commit it. Every later run fails when any case
    did worse than the file says, naming each such case and the tools whose description or schema
    changed. With a cassette model in mode ``replay`` the test needs no model::

        def test_tool_descriptions_hold():
            model = cassette_model("tests/tools.cassette.json", "replay", None, name="local")
            assert_eval_baseline(CASES, "tests/tools.baseline.json", tools=[convert], model=model)

    Args:
        cases: The cases; this and every other argument but ``baseline`` as for `evaluate`.
        baseline: The baseline file (JSON); written when it does not exist.

    Returns:
        The `EvalReport`, its ``baseline`` set to what the check found.

    Raises:
        EvalRegression: A case got worse (an `AssertionError`, shown by pytest as a failure).
        BaselineError: The file is not a baseline (the message names the field).
    """
    report = evaluate(
        cases,
        tools=tools,
        model=model,
        protocol=protocol,
        system=system,
        repeat=repeat,
        concurrency=concurrency,
        text_limit=text_limit,
    )
    check_baseline(report, baseline)
    return report
