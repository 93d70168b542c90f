"""Tools that run as MCP tasks (``execution.taskSupport``, protocol 2025-11-25): call, watch, cancel.

`call_as_task` makes a task-augmented ``tools/call``, waits for ``tasks/result`` while it polls
``tasks/get`` for status lines, and cancels the task on the server (``tasks/cancel``) when the
wait is given up; `task_problem` says why a session cannot run tasks. The SDK makes no
task-augmented calls, so `_send_task_call` is the one place that reaches past its public methods.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from ...errors import MeowgentError

__all__ = ["TASK_PROTOCOL", "NotATask", "TaskEnded", "call_as_task", "task_problem"]

TASK_PROTOCOL = "2025-11-25"
"""The one protocol version whose tools run as tasks."""
_POLL = (0.25, 5.0)  # seconds: the least and most time between two looks at a task's status
_DEFAULT_POLL = 1.0  # seconds, when the server suggests nothing
_TTL_MARGIN = 60.0  # seconds a task is kept after the call's own limit (the result must still be there)
_CANCEL_WAIT = 5.0  # seconds the server is given to confirm a cancelled task
_ENDED_WAIT = 2.0  # seconds tasks/result may still take once tasks/get said the task failed
_STATUS = 200  # characters of a status message kept (it is a server's text, shown on one line)

StatusFn = Callable[[str], Awaitable[None]]
"""Told each new status of the task, as one line: ``"working: Gathering sources..."``."""


def task_problem(client: Any, capabilities: Any) -> str | None:
    """Why this session cannot run tools as tasks, or None when it can."""
    version = str(getattr(client, "protocol_version", "") or "")
    if version != TASK_PROTOCOL:
        return (
            f"it runs only as an MCP task, and tasks exist only in protocol {TASK_PROTOCOL}"
            f" (this session speaks {version or 'an unknown version'})"
        )
    requests = getattr(getattr(capabilities, "tasks", None), "requests", None)
    if getattr(getattr(requests, "tools", None), "call", None) is None:
        return "it runs only as an MCP task, but the server did not say it runs tool calls as tasks"
    session = getattr(client, "session", None)
    if not all(hasattr(session, name) for name in ("_dispatcher", "_stamp", "send_request")):
        return "it runs only as an MCP task, and this version of the mcp SDK cannot make task calls"
    return None


async def call_as_task(
    client: Any,
    remote: str,
    arguments: dict[str, Any],
    limit: float,
    progress: Any = None,
    status: StatusFn | None = None,
) -> Any:
    """Run ``remote`` as a task and return its ``CallToolResult``.

    Args:
        client: The SDK's connected ``Client``.
        remote: The server's name of the tool.
        arguments: Its validated arguments.
        limit: The call's time limit in seconds: the task is asked to be kept a minute longer.
        progress: The call's ``progress_callback`` (a server may report progress on the call).
        status: Told each new status of the task.

    Raises:
        TaskEnded: The server ended the task as failed or cancelled.
        NotATask: The server's answer to the call is neither a task nor a result.
        MCPError: As for a plain call (the caller translates them).
    """
    import mcp_types as types
    from mcp import MCPError
    from pydantic import ValidationError

    session = client.session
    ttl = int((limit + _TTL_MARGIN) * 1000)
    answer = await _send_task_call(session, remote, arguments, ttl, progress)
    kind = types.CreateTaskResult if "task" in answer else types.CallToolResult
    try:  # a server may run a short call at once, as the protocol allows
        answer = kind.model_validate(answer, by_name=False)
    except ValidationError as error:
        raise NotATask(remote, error) from None
    if isinstance(answer, types.CallToolResult):
        if not answer.is_error:
            await session.validate_tool_result(remote, answer)
        return answer
    task = answer.task
    told: list[str] = []
    if status is not None:
        await _tell(status, task, told)
    params = types.GetTaskPayloadRequestParams(task_id=task.task_id)
    waiting = asyncio.ensure_future(
        session.send_request(types.GetTaskPayloadRequest(params=params), types.CallToolResult)
    )
    watching = asyncio.ensure_future(_watch(session, task, status, told))
    try:
        done, _ = await asyncio.wait({waiting, watching}, return_when=asyncio.FIRST_COMPLETED)
        if waiting in done:
            try:
                result = waiting.result()
                if not result.is_error:  # the check the SDK makes of a plain call's result
                    await session.validate_tool_result(remote, result)
                return result
            except MCPError:  # a task that failed may say more in its status than in this error
                ended = await _ended(session, task)
                if ended is None:
                    raise
        else:
            ended = watching.result()  # failed or cancelled: tasks/result may still bring the result
            with contextlib.suppress(asyncio.TimeoutError, MCPError):
                return await asyncio.wait_for(asyncio.shield(waiting), _ENDED_WAIT)
    except BaseException:  # given up here (the time limit, Stop, an interrupt) or broken: end it there too
        if not waiting.done() or waiting.cancelled():
            await _cancel(session, task.task_id)
        raise
    finally:
        for each in (waiting, watching):
            each.cancel()
        await asyncio.gather(waiting, watching, return_exceptions=True)
    message = _one_line(ended.status_message or "") or "without a message"
    what = "failed" if ended.status == "failed" else "was cancelled"
    raise TaskEnded(f"the task of {remote} {what} on the server: {message}")


class TaskEnded(MeowgentError):
    """The server ended the task as failed or cancelled (`_session` makes it an `McpToolError`)."""


async def _send_task_call(
    session: Any, remote: str, arguments: dict[str, Any], ttl: int, progress: Any
) -> dict:
    """``tools/call`` with ``task`` set; the raw answer (a task, or a result run at once).

    As the SDK's ``send_request`` does, less its check of the answer, which admits only a result.
    """
    data = {"method": "tools/call", "params": {"name": remote, "arguments": arguments, "task": {"ttl": ttl}}}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    if progress is not None:
        opts["on_progress"] = progress
    answer = await session._dispatcher.send_raw_request(data["method"], data["params"], opts)
    if not isinstance(answer, dict):
        raise NotATask(remote, f"a JSON {type(answer).__name__}")
    return answer


class NotATask(MeowgentError):
    """The server's answer to a task call is neither a task nor a result (`_session` makes it an
    `McpServerError`)."""

    def __init__(self, remote: str, problem: Any):
        if hasattr(problem, "errors"):  # pydantic's: each field and what is wrong with it, on one line
            problem = "; ".join(
                ".".join(str(part) for part in item["loc"]) + ": " + item["msg"] for item in problem.errors()
            )
        super().__init__(f"answered the task call to {remote} with something that is not a task: {problem}")


async def _watch(session: Any, task: Any, status: StatusFn | None, told: list[str]) -> Any:
    """Poll the task's status until it fails or is cancelled, and return it.

    It never returns for a completed task: ``tasks/result`` returns then, ending the wait.
    """
    import mcp_types as types

    params = types.GetTaskRequestParams(task_id=task.task_id)
    while True:
        await asyncio.sleep(_interval(task.poll_interval))
        try:
            task = await session.send_request(types.GetTaskRequest(params=params), types.GetTaskResult)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - one failed look is not a failed task
            continue
        if status is not None:
            await _tell(status, task, told)
        if task.status in ("failed", "cancelled"):
            return task


async def _ended(session: Any, task: Any) -> Any:
    """The task, when one more look finds it failed or cancelled; else None."""
    import mcp_types as types

    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id))
    try:
        task = await asyncio.wait_for(session.send_request(request, types.GetTaskResult), _CANCEL_WAIT)
    except Exception:  # noqa: BLE001 - the error of tasks/result stands then
        return None
    return task if task.status in ("failed", "cancelled") else None


async def _cancel(session: Any, task_id: str) -> None:
    """Ask the server to cancel the task, shielded from the cancellation that brought us here."""
    import mcp_types as types

    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    sending = asyncio.ensure_future(
        asyncio.wait_for(session.send_request(request, types.CancelTaskResult), _CANCEL_WAIT)
    )
    with contextlib.suppress(BaseException):  # the server may be gone, or the task already over
        await asyncio.shield(sending)


async def _tell(status: StatusFn, task: Any, told: list[str]) -> None:
    """Tell ``status`` the task's status line, when it differs from the last one told."""
    line = str(task.status).replace("_", " ")
    message = _one_line(task.status_message or "")
    if message:
        line += f": {message}"
    if told and told[-1] == line:
        return
    told.append(line)
    with contextlib.suppress(Exception):  # a display must never break a call
        await status(line)


def _interval(suggested: Any) -> float:
    """Seconds until the next look: the server's ``pollInterval`` (milliseconds), kept within `_POLL`."""
    if isinstance(suggested, bool) or not isinstance(suggested, (int, float)) or suggested != suggested:
        return _DEFAULT_POLL
    return min(max(suggested / 1000, _POLL[0]), _POLL[1])


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _STATUS else text[: _STATUS - 1] + "\u2026"
