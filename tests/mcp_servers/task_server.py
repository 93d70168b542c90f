"""A low-level MCP server for the tests whose tools declare task support (MCP 2025-11-25, stdio).

- ``render`` needs task mode (``execution.taskSupport: "required"``): a client that cannot run
  tasks cannot call it.
- ``resize`` may run as a task (``"optional"``) and also answers a plain call.
- ``crop`` says tasks are ``"forbidden"``; ``rotate`` says nothing (the same).

Tasks exist only in the 2025-11-25 protocol (2026-07-28 moved them to an extension, and the SDK
leaves ``execution`` out there), so this server speaks 2025-11-25 like the servers that publish
tasks: it serves only the ``initialize`` handshake (`serve_loop`), so the client's
``server/discover`` probe fails and the client falls back to the handshake.

``task_server.py`` alone does not say it runs tool calls as tasks (``render`` is then not
offered). ``task_server.py tasks`` does, and runs them (the SDK has no server side for tasks, so
their requests are answered here, on the wire, before the SDK's server sees them):

- ``render(degrees)``: a task of three steps (0.2 s each), each a new status message; its
  ``pollInterval`` is 0 (a client must not look without pause). Its result: "rendered by N".
- ``render_fails``: fails in its second step with a hostile status message (markup, newlines,
  5,000 characters); ``tasks/result`` answers with an error.
- ``render_hangs``: works until it is cancelled (``tasks/cancel``); its ``pollInterval`` is
  absurdly long. ``cancelled`` (a plain tool) lists the tasks cancelled so far.
- ``render_at_once``: answered with the result itself, as a server may for a short call.
- ``render_odd``: answered with a task that is not one (a number for its id, an unknown status).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

_ANGLE = {"type": "object", "properties": {"degrees": {"type": "integer"}}, "required": ["degrees"]}
TASKS_ON = sys.argv[1:] == ["tasks"]
HOSTILE = "<b>out of memory</b>\nframe 2\r\n" + "x" * 5000


def _tool(name: str, description: str, support: str | None) -> types.Tool:
    execution = None if support is None else types.ToolExecution(task_support=support)
    return types.Tool(name=name, description=description, input_schema=_ANGLE, execution=execution)


TOOLS = [
    _tool("render", "Render a long video (only as a task).", "required"),
    _tool("resize", "Resize an image.", "optional"),
    _tool("crop", "Crop an image.", "forbidden"),
    _tool("rotate", "Rotate an image.", None),
]
if TASKS_ON:
    TOOLS += [
        _tool("render_fails", "A render that fails.", "required"),
        _tool("render_hangs", "A render that never ends.", "required"),
        _tool("render_at_once", "A render answered at once.", "required"),
        _tool("render_odd", "A render answered with a broken task.", "required"),
        types.Tool(
            name="cancelled", description="The tasks cancelled so far.", input_schema={"type": "object"}
        ),
    ]

TASKS: dict[str, dict] = {}
CANCELLED: list[str] = []


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def _text(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def call_tool(ctx, params) -> types.CallToolResult:
    if params.name == "cancelled":
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(CANCELLED))])
    text = f"{params.name} by {params.arguments['degrees']}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _task(task_id: str) -> dict:
    entry = TASKS[task_id]
    task = {key: entry[key] for key in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl")}
    if entry.get("statusMessage") is not None:
        task["statusMessage"] = entry["statusMessage"]
    if "pollInterval" in entry:
        task["pollInterval"] = entry["pollInterval"]
    return task


def _update(task_id: str, status: str, message: str | None) -> None:
    entry = TASKS[task_id]
    if entry["status"] in ("completed", "failed", "cancelled"):
        return
    entry.update(status=status, statusMessage=message, lastUpdatedAt=_now())
    if status in ("completed", "failed", "cancelled"):
        entry["ended"].set()


async def _work(task_id: str, name: str, degrees: int) -> None:
    steps = 3 if name == "render" else 10**6
    for step in range(1, steps + 1):
        if TASKS[task_id]["status"] == "cancelled":
            return
        if name == "render_fails" and step == 2:
            _update(task_id, "failed", HOSTILE)
            return
        _update(task_id, "working", f"frame {step} of {steps}" if steps == 3 else "still rendering")
        await anyio.sleep(0.2)
    TASKS[task_id]["result"] = _text(f"rendered by {degrees}")
    _update(task_id, "completed", "all frames done")


async def _answer(message: JSONRPCRequest, write_stream, group) -> bool:
    """Answer a task request here; False for anything the SDK's server should answer."""
    params = message.params or {}

    async def reply(result: dict | None = None, error: str | None = None) -> None:
        if error is not None:
            out = JSONRPCError(
                jsonrpc="2.0", id=message.id, error=types.ErrorData(code=-32603, message=error)
            )
        else:
            out = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        await write_stream.send(SessionMessage(out))

    if message.method == "tools/call" and "task" in params and TASKS_ON:
        name, degrees = params["name"], params["arguments"]["degrees"]
        if name == "render_odd":
            await reply({"task": {"taskId": 5, "status": "dreaming"}})
            return True
        if name == "render_at_once":
            await reply(_text(f"rendered at once by {degrees}"))
            return True
        task_id = f"task-{len(TASKS) + 1}"
        poll = {"render": 0, "render_hangs": 10**12}.get(name, 100)
        TASKS[task_id] = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": "queued",
            "createdAt": _now(),
            "lastUpdatedAt": _now(),
            "ttl": params["task"].get("ttl"),
            "pollInterval": poll,
            "ended": anyio.Event(),
            "name": name,
        }
        await reply({"task": _task(task_id)})
        group.start_soon(_work, task_id, name, degrees)
        return True
    if message.method == "tasks/get":
        task_id = params.get("taskId")
        await (reply(_task(task_id)) if task_id in TASKS else reply(error=f"no task {task_id}"))
        return True
    if message.method == "tasks/result":
        task_id = params.get("taskId")
        if task_id not in TASKS:
            await reply(error=f"no task {task_id}")
            return True

        async def later() -> None:
            await TASKS[task_id]["ended"].wait()
            entry = TASKS[task_id]
            if entry["status"] == "completed":
                await reply(entry["result"])
            else:
                await reply(error=f"the render {entry['status']}")

        group.start_soon(later)
        return True
    if message.method == "tasks/cancel":
        task_id = params.get("taskId")
        if task_id not in TASKS:
            await reply(error=f"no task {task_id}")
            return True
        CANCELLED.append(task_id)
        _update(task_id, "cancelled", "cancelled by the client")
        await reply(_task(task_id))
        return True
    return False


server = Server("tasks", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        options = server.create_initialization_options()
        if TASKS_ON:
            options.capabilities.tasks = types.ServerTasksCapability(
                cancel=types.TasksCancelCapability(),
                requests=types.ServerTasksRequestsCapability(
                    tools=types.TasksToolsCapability(call=types.TasksCallCapability())
                ),
            )
        send, receive = anyio.create_memory_object_stream(100)

        async def sift(group) -> None:
            async with send:
                async for item in read_stream:
                    message = getattr(item, "message", None)
                    if isinstance(message, JSONRPCRequest) and await _answer(message, write_stream, group):
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(sift, group)
            await serve_loop(server, receive, write_stream, lifespan_state={}, init_options=options)
            group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
