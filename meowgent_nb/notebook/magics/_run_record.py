"""The kernel's side of `meowgent_nb.testing.run_notebook`: each ``%%agent`` cell's result, noted.

`start` (run before the notebook's first cell, unsaved) installs a ``post_run_cell`` callback that
notes the session's `last_result` after each cell; `collected` (after the last) displays them
as JSON.
"""

from __future__ import annotations

from typing import Any

__all__ = ["collected", "result_data", "start"]

_runs: list[dict[str, Any]] = []
_last: list[Any] = [None]


def result_data(result: Any) -> dict[str, Any]:
    """An `AgentResult` as JSON-ready data: the prompt, the answer, every call and its result."""
    users = [m for m in result.messages if m.get("role") == "user"]
    return {
        "prompt": str(users[0].get("content", "")) if users else "",
        "answer": result.text,
        "turns": result.turns,
        "stopped": result.stopped,
        "results": [
            {"name": r.call.name, "arguments": r.call.arguments, "kind": r.kind, "output": r.output}
            for r in result.tool_results
        ],
    }


def _note(info: Any) -> None:
    from IPython.core.getipython import get_ipython

    shell: Any = get_ipython()  # in IPython (its post_run_cell event); its traits type as Optional
    result = getattr(getattr(shell, "meowgent", None), "last_result", None)  # the NotebookSession's
    if result is None or result is _last[0]:
        return  # not an agent cell (or one that failed before its result)
    _last[0] = result
    _runs.append({"execution_count": info.execution_count, **result_data(result)})


def start() -> None:
    """Note the result of every ``%%agent`` cell that runs from now on."""
    from IPython.core.getipython import get_ipython

    shell: Any = get_ipython()  # in IPython; its traits type as Optional
    events = shell.events
    if _note not in events.callbacks["post_run_cell"]:
        events.register("post_run_cell", _note)


def collected() -> None:
    """Display what was noted, as ``application/json`` (``{"runs": [...]}``)."""
    import json

    from IPython.display import display

    runs = json.loads(
        json.dumps(_runs, default=repr)
    )  # arguments a model sent are JSON; anything else, its repr
    display({"application/json": {"runs": runs}}, raw=True)
