"""Serve a test server as an older (2025-11-25) server does: it refuses the 2026 probe.

The client then falls back to the 2025 handshake, and what the 2026 protocol carries inside a
call's result (questions, ...) arrives as requests and notifications of their own.
"""

from __future__ import annotations

from typing import Any


async def serve_legacy(low: Any, options: Any = None) -> None:
    """Run the low-level server ``low`` on stdio, answering ``server/discover`` with "Method not found"."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import METHOD_NOT_FOUND, ErrorData
    from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest

    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream(100)

        async def without_probe() -> None:
            async with send:
                async for item in read_stream:
                    message = getattr(item, "message", None)
                    if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                        error = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
                        await write_stream.send(
                            SessionMessage(JSONRPCError(jsonrpc="2.0", id=message.id, error=error))
                        )
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(without_probe)
            await low.run(receive, write_stream, options or low.create_initialization_options())
            group.cancel_scope.cancel()


def run_server(server: Any, argv: list[str]) -> None:
    """Run an `MCPServer` as its command line says: ``legacy`` (the 2025 handshake only, see
    `serve_legacy`), ``http PORT`` (streamable HTTP on 127.0.0.1), or nothing (stdio)."""
    if argv[:1] == ["legacy"]:
        import anyio

        anyio.run(serve_legacy, server._lowlevel_server)
    elif argv[:1] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run()
