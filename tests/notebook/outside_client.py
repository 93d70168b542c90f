"""An MCP client in another process (the `mcp` SDK's, named ``outside-agent``), for the tests of a
served notebook: `outside` starts it on one request, `answer` is what it got."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.kernel_driver import TIMEOUT

CLIENT_NAME = "outside-agent"
_SCRIPT = """
import asyncio, json, sys
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

url, token, call = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

async def main():
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        info = types.Implementation(name=sys.argv[4], version="1.0")
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, cache=None, mode="legacy", client_info=info) as mcp:
            if call is None:
                return [t.name for t in (await mcp.list_tools()).tools]
            result = await mcp.call_tool(call["name"], call["arguments"])
            return [result.is_error, [c.text for c in result.content]]

print(json.dumps(asyncio.run(main())))
"""


def outside(url: str, token: str, call: dict | None = None) -> subprocess.Popen:
    """The client, in a process of its own: it lists the tools (``call`` None) or makes ``call``
    (``{"name": ..., "arguments": {...}}``) and prints what it got as one line of JSON."""
    arguments = [sys.executable, "-c", _SCRIPT, url, token, json.dumps(call), CLIENT_NAME]
    return subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def answer(client: subprocess.Popen, timeout: float = TIMEOUT) -> object:
    """The tool names, or ``[is_error, texts]``, the client got."""
    out, err = client.communicate(timeout=timeout)
    assert client.returncode == 0, err
    return json.loads(out)
