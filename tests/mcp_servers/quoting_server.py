"""A careless MCP server that quotes its bearer token back, everywhere, written with the `mcp` SDK.

``quoting_server.py http PORT TOKEN`` serves streamable HTTP on 127.0.0.1. It quotes the token of
the ``Authorization: Bearer ...`` header each call came with (`HEARD`) in its result (in the forms
of `forms`), its error, a log message and a progress message; and the token it was started with
(`TOKEN`, the one clients are given) in its instructions, a tool's description, a resource, a
prompt, and in the elicitation and sampling requests it sends.
"""

from __future__ import annotations

import asyncio
import base64
import html
import os
import sys
from typing import Annotated

from mcp import types
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.types import ToolAnnotations
from pydantic import BaseModel

TOKEN = sys.argv[3] if len(sys.argv) > 3 else "no token given"
server = MCPServer("quoting", instructions=f"Send {TOKEN} with each request.")
READ_ONLY = ToolAnnotations(read_only_hint=True)


def heard(ctx: Context) -> str:
    """The bearer token the call came with."""
    return (ctx.headers or {}).get("authorization", "").partition(" ")[2]


def forms(token: str) -> list[str]:
    """``token`` as a careless server writes it: as it is, percent-encoded in lowercase hex,
    JSON-escaped, HTML-escaped, and the whole header base64-encoded."""
    lower = "".join(char if char.isalnum() else f"%{ord(char):02x}" for char in token)
    escaped = token.replace("/", "\\/").replace("+", "\\u002b")
    marked_up = html.escape(token).replace("/", "&#x2f;").replace("+", "&plus;").replace("=", "&#61;")
    return [token, lower, escaped, marked_up, base64.b64encode(f"Bearer {token}".encode()).decode()]


@server.tool(annotations=READ_ONLY, description=f"Echoes the token; clients send {TOKEN}.")
async def echo_bearer(ctx: Context) -> str:
    return " | ".join(forms(heard(ctx)))


@server.tool(annotations=READ_ONLY)
async def refuse_bearer(ctx: Context) -> str:
    """Fails, quoting the call's token in its error."""
    raise ToolError(f"the token {heard(ctx)} may not do that")


@server.tool(annotations=READ_ONLY)
async def chat_bearer(ctx: Context) -> str:
    """Logs a warning and reports progress, each quoting the call's token."""
    token = heard(ctx)
    await ctx.report_progress(1, 2, f"authorized as {token}")
    await ctx.warning(f"the token {token.replace('/', '%2f')} was used", logger_name="auth")
    await asyncio.sleep(0.3)  # the notifications reach the client before the result
    return "chatted"


class Nothing(BaseModel):
    pass


def confirm_form() -> Elicit[Nothing]:
    return Elicit(f"Confirm that {TOKEN} may be used.", Nothing)


@server.tool(annotations=READ_ONLY)
async def confirm(answer: Annotated[ElicitationResult[Nothing], Resolve(confirm_form)]) -> str:
    """Asks the person about the token (elicitation)."""
    return answer.action


def token_request() -> Sample:
    text = types.TextContent(type="text", text=f"Is {TOKEN} a good token?")
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=20)


@server.tool(annotations=READ_ONLY)
async def judge(verdict: Annotated[types.CreateMessageResult, Resolve(token_request)]) -> str:
    """Asks the client's model about the token (sampling)."""
    return verdict.content.text


@server.resource("notes://token", description="The token this server was given.")
def token_note() -> str:
    return f"token={TOKEN}"


@server.prompt()
def use_token() -> str:
    """How to call this server."""
    return f"Call me with {TOKEN}."


@server.tool(annotations=READ_ONLY)
def say_env(name: str) -> str:
    """Says an environment variable of the server, whatever it holds (a careless server)."""
    return f"{name}={os.environ.get(name, '')}"


if __name__ == "__main__":
    from legacy import run_server  # beside this file, on the path of a script run as one

    run_server(server, sys.argv[1:])
