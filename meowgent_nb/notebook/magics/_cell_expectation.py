"""A ``%%agent`` cell's expected calls: read from ``--expect`` or the cell's metadata, checked after the run.

The metadata is ``{"meowgent": {"expect": "..."}}``, sent with the execute request by JupyterLab
and Notebook 7 and by the pytest plugin under ``--nbval``. A met expectation prints one line; an
unmet one raises `ExpectationNotMet` after the transcript is shown and the result stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from IPython.core.error import UsageError

from ...agent.expectations import (
    MAX_CHARS,
    Expectation,
    ExpectationError,
    ExpectationNotMet,
    acts_of,
    check_expectation,
    parse_expectation,
)
from ...agent.result import AgentResult
from ._options import parse_options

__all__ = ["CellCheck", "cell_expectation", "cell_options", "cell_report", "check_cell", "request_metadata"]

METADATA_KEYS = ("meowgent", "meowgent_nb")
"""Where a cell's metadata keeps its expectation: ``{"meowgent": {"expect": "..."}}``."""


@dataclass
class CellCheck:
    """What the last ``%%agent`` cell expected and did (what `cell_report` gives the pytest plugin)."""

    expected: str | None
    actual: list[str] | None = None
    """Each call as ``name(args) -> outcome``; None when the run did not end (an error, an interrupt)."""
    ended: str | None = None
    met: bool | None = None
    line: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)


_LAST: dict[str, CellCheck] = {}


def request_metadata(shell: Any) -> dict[str, Any]:
    """The metadata of the request that runs the cell (a frontend's copy of the cell's), or {}."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    try:
        parent = get_parent("shell") if callable(get_parent) else {}
    except Exception:  # noqa: BLE001 - no request to read: no metadata
        return {}
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def cell_options(
    magic: Callable[..., Any], shell: Any, line: str, metadata: dict[str, Any] | None
) -> tuple[Any, Expectation | None]:
    """A ``%%agent`` cell's options (read by ``magic``'s parser) and its expectation.

    The expectation comes from ``metadata``, else from the request's metadata to ``shell``.
    `cell_report` is reset first, so a cell that fails here is reported as not run.
    """
    _LAST["cell"] = CellCheck(None)
    args = parse_options(magic, line, "%%agent")
    return args, cell_expectation(args.expect, request_metadata(shell) if metadata is None else metadata)


def cell_expectation(option: str | None, metadata: dict[str, Any]) -> Expectation | None:
    """The cell's expectation, from ``--expect`` and the cell's metadata (they may not differ).

    Raises:
        UsageError: It cannot be read (the message marks the part and shows the syntax), the
            metadata is of the wrong shape, or ``--expect`` and the metadata say different things.
    """
    given = []
    if option is not None:
        given.append(("--expect", _unquoted(option)))
    for key in METADATA_KEYS:
        ours = metadata.get(key)
        if ours is None:
            continue
        if not isinstance(ours, dict):
            raise UsageError(
                f"%%agent: the cell's metadata {key!r} must be an object such as"
                f' {{"expect": "get_weather(city=\'Paris\')"}}, got {_shown(json.dumps(ours))}'
            )
        if "expect" in ours:
            if not isinstance(ours["expect"], str):
                raise UsageError(
                    f"%%agent: the cell's metadata '{key}.expect' must be text such as"
                    f" \"get_weather(city='Paris')\", got {_shown(json.dumps(ours['expect']))}"
                )
            given.append((f"(the cell's metadata '{key}.expect')", ours["expect"]))
    if len({text.strip() for _, text in given}) > 1:
        both = " and ".join(f"{where} {_shown(repr(text))}" for where, text in given)
        raise UsageError(f"%%agent: two expectations for this cell: {both}; keep one.")
    _LAST["cell"] = CellCheck(_shown(given[0][1]) if given else None)
    if not given:
        return None
    where, text = given[0]
    try:
        return parse_expectation(text)
    except ExpectationError as error:
        raise UsageError(f"%%agent {where}: {error}") from None


def check_cell(expectation: Expectation | None, result: AgentResult) -> None:
    """Print the verdict of a met expectation; raise `ExpectationNotMet` for an unmet one."""
    check = _LAST.setdefault("cell", CellCheck(None))
    acts = acts_of(result)
    check.actual = [str(act) for act in acts]
    check.calls = [{"name": a.name, "arguments": a.sent, "outcome": a.outcome} for a in acts]
    check.ended = "answered" if result.stopped == "answer" else result.stopped
    if expectation is None:
        return
    verdict = check_expectation(expectation, result)
    check.met, check.line = verdict.met, verdict.line
    if not verdict.met:
        raise ExpectationNotMet(verdict)
    print(verdict.line)


def cell_report() -> str:
    """JSON of the last ``%%agent`` cell's `CellCheck` (the pytest plugin asks for it after each cell)."""
    check = _LAST.get("cell")
    return json.dumps(asdict(check) if check is not None else None, default=repr)


def _shown(text: str) -> str:
    """``text`` whole up to `MAX_CHARS`, else its start and how much was left out."""
    if len(text) <= MAX_CHARS:
        return text
    return f"{text[:80]}... ({len(text) - 80:,} more characters)"


def _unquoted(option: str) -> str:
    """``--expect "..."``: IPython's option reader keeps the quotes around a value."""
    text = option.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
