"""Serving notebook tools over MCP: a real `ToolServer` on 127.0.0.1, called by the real `mcp`
client (and by `McpToolbox`, the notebook's own client)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Annotated

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from meowgent_nb import Approved, Denied, tool
from meowgent_nb.mcp import McpServerError, McpToolbox, McpToolError, ToolServer


@tool(examples=[{"text": "hello", "times": 3}])
def shout(text: Annotated[str, "What to shout."], times: int = 1) -> str:
    """Shout some text."""
    return " ".join([text.upper()] * times)


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def nap(seconds: float) -> str:
    """Sleep a while."""
    time.sleep(seconds)
    return "awake"


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


class Recording:
    """An approver that answers from a list and records what it was asked."""

    def __init__(self, *decisions):
        self.decisions = list(decisions)
        self.asked = []

    async def approve(self, requests):
        self.asked.extend((r.tool.name, dict(r.arguments)) for r in requests)
        return [self.decisions.pop(0) for _ in requests]


@contextlib.asynccontextmanager
async def client(server: ToolServer):
    """The SDK's own client with the server's token (the transport leaves our HTTP client open)."""
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(server.url, http_client=http), cache=None) as mcp:
            yield mcp


@pytest.fixture(scope="module")
def served():
    server = ToolServer([shout, delete_file, nap, divide], timeout=0.5)
    yield server
    server.stop()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = "application/json, text/event-stream"
REFUSED = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32600,
        "message": (
            "missing or wrong bearer token: send the header 'Authorization: Bearer TOKEN' with the token"
            " %tools serve printed (ToolServer.token)"
        ),
    },
}
MESSAGE = REFUSED["error"]["message"]


def test_the_bearer_scheme_is_read_in_any_case_and_after_several_spaces(served):
    for scheme in ("Bearer ", "bearer ", "BEARER ", "bEaReR ", "Bearer  ", "Bearer   "):
        headers = {"Authorization": scheme + served.token, "Accept": ACCEPT}
        response = httpx2.post(served.url, json=INITIALIZE, headers=headers)
        assert (scheme, response.status_code) == (scheme, 200)
        assert '"serverInfo":{"name":"meowgent-notebook"' in response.text


def test_a_request_without_the_right_token_is_refused_with_the_reason(served):
    realm = 'Bearer realm="meowgent_nb"'
    invalid = f'{realm}, error="invalid_token", error_description="{MESSAGE}"'
    cases = [
        ({}, realm),  # no credentials: no error code (RFC 6750 section 3.1)
        ({"Authorization": "Bearer wrong"}, invalid),
        ({"Authorization": "Bearer " + served.token[:-1]}, invalid),
        ({"Authorization": "Bearer " + served.token + "x"}, invalid),
        ({"Authorization": served.token}, invalid),  # the token without its scheme
        ({"Authorization": "Basic " + served.token}, invalid),
        ({"Authorization": "Bearer"}, invalid),  # an empty token
        ({"Authorization": "Bearer" + served.token}, invalid),  # no space
        ({"Authorization": "Bearer\t" + served.token}, invalid),
    ]
    for headers, challenge in cases:
        response = httpx2.post(served.url, json=INITIALIZE, headers={**headers, "Accept": ACCEPT})
        assert (headers, response.status_code) == (headers, 403)
        assert response.headers["www-authenticate"] == challenge
        assert response.json() == REFUSED


def test_oauth_discovery_finds_plain_404s(served):
    origin = served.url.removesuffix("/mcp")
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ):
        for headers in ({}, {"Authorization": f"Bearer {served.token}"}):
            response = httpx2.get(origin + path, headers=headers)
            assert (path, response.status_code, response.text) == (path, 404, "Not Found")
            assert "www-authenticate" not in response.headers


class _NoTokens:
    """OAuth token storage that has nothing stored (a client's first connection)."""

    async def get_tokens(self):
        return None

    async def set_tokens(self, tokens):
        raise AssertionError("no OAuth flow should have run")

    async def get_client_info(self):
        return None

    async def set_client_info(self, client_info):
        raise AssertionError("no OAuth client should have been registered")


def test_a_refused_sdk_client_shows_the_reason_and_starts_no_oauth(served):
    """The SDK's client, plain and with an OAuth provider (as the MCP Inspector has one)."""

    async def refused(oauth: bool):
        paths, redirects = [], []

        async def record(request):
            paths.append(f"{request.method} {request.url.path}")

        async def redirect(url):
            redirects.append(url)

        async def callback():
            raise AssertionError("no OAuth flow should have run")

        metadata = OAuthClientMetadata(redirect_uris=["http://127.0.0.1:1/callback"])
        auth = OAuthClientProvider(served.url, metadata, _NoTokens(), redirect, callback) if oauth else None
        headers = {"Authorization": "Bearer wrong"}
        async with httpx2.AsyncClient(headers=headers, auth=auth, event_hooks={"request": [record]}) as http:
            error = None
            try:
                async with Client(streamable_http_client(served.url, http_client=http), cache=None):
                    pass
            except BaseException as exc:  # anyio's task group wraps it
                error = exc
        while len(getattr(error, "exceptions", ())) == 1:
            error = error.exceptions[0]
        assert isinstance(error, MCPError)
        return error.message, paths, redirects

    for oauth in (False, True):
        # The server/discover probe is refused, then the initialize handshake; nothing else is tried.
        assert asyncio.run(refused(oauth)) == (MESSAGE, ["POST /mcp", "POST /mcp"], [])

    with pytest.raises(McpServerError) as caught:  # the notebook's own client, with a wrong token
        McpToolbox("nb", url=served.url, headers={"Authorization": "Bearer wrong"}, connect_timeout=10)
    assert str(caught.value) == (
        f"could not connect to the MCP server 'nb' ({served.url}): {MESSAGE}.\n"
        "Check the URL, the token or headers (a refused token reads 'Server returned an error response'),"
        " and that the server is running."
    )


def test_the_real_client_lists_and_calls_the_served_tools(served):
    async def main():
        async with client(served) as mcp:
            listed = (await mcp.list_tools()).tools
            ok = await mcp.call_tool("shout", {"text": "hi", "times": 2})
            invalid = await mcp.call_tool("shout", {"text": 3, "loud": True})
            failing = await mcp.call_tool("divide", {"a": 1, "b": 0})
            slow = await mcp.call_tool("nap", {"seconds": 3})
            unknown = await mcp.call_tool("delete_file", {"path": "/"})
            return listed, ok, invalid, failing, slow, unknown

    listed, ok, invalid, failing, slow, unknown = asyncio.run(main())
    assert [(t.name, t.description) for t in listed] == [
        ("shout", "Shout some text."),
        ("nap", "Sleep a while."),
        ("divide", "Divide a by b."),
    ]
    # Examples travel as the input schema's own "examples" keyword.
    assert listed[0].input_schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **shout.parameters,
        "examples": [{"text": "hello", "times": 3}],
    }
    assert listed[1].input_schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **nap.parameters,
    }
    assert (ok.is_error, ok.content[0].text) == (False, "HI HI")
    assert (invalid.is_error, invalid.content[0].text) == (
        True,
        (
            "Error: Invalid arguments for tool 'shout':\n- text: input should be a valid string, got 3\n"
            "- loud: unknown argument; this tool takes: text, times\nCall shout again with corrected arguments."
        ),
    )
    assert (failing.is_error, failing.content[0].text) == (
        True,
        "Error: ZeroDivisionError: float division by zero",
    )
    assert (slow.is_error, slow.content[0].text) == (True, "Timed out after 0.5 s")
    assert (unknown.is_error, unknown.content[0].text) == (
        True,
        "Error: there is no tool named 'delete_file'. The tools are: shout, nap, divide.",
    )
    assert [t.name for t in served.left_out] == ["delete_file"]


def test_approval_tools_are_served_on_request_and_each_call_asks():
    approver = Recording(Approved("ok"), Denied("not that one"))
    server = ToolServer([shout, delete_file], include_approval_tools=True, approver=approver)
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            assert box.names == ["nb_shout", "nb_delete_file"]
            assert box["nb_shout"].examples == ({"text": "hello", "times": 3},)  # read back as examples
            assert "examples" not in box["nb_shout"].parameters
            assert box["nb_delete_file"].run({"path": "a.txt"}) == "deleted a.txt"
            with pytest.raises(McpToolError) as caught:
                box["nb_delete_file"].run({"path": "b.txt"})
            assert str(caught.value) == "Denied: not that one"
            assert box["nb_shout"].run({"text": "x"}) == "X"
    finally:
        server.stop()
    assert approver.asked == [("delete_file", {"path": "a.txt"}), ("delete_file", {"path": "b.txt"})]
    assert server.running is False


def test_approve_every_asks_about_every_call_and_ask_every_is_its_old_spelling():
    approver = Recording(Approved("ok"))
    server = ToolServer([shout], approver=approver, approve="every")
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            assert box["nb_shout"].run({"text": "x"}) == "X"
    finally:
        server.stop()
    assert approver.asked == [("shout", {"text": "x", "times": 1})]
    with pytest.warns(
        DeprecationWarning,
        match=r"^ToolServer\(ask_every=True\) is deprecated; write ToolServer\(approve='every'\)$",
    ):
        old = ToolServer([shout], ask_every=True)
    old.stop()
    assert (old.approve, old.ask_every) == ("every", True)
    with pytest.raises(ValueError) as caught:
        ToolServer([shout], approve="allow")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "ToolServer(approve='allow'): approve must be 'ask' or 'every'; to run or deny calls without asking"
        " anyone, give an approver that does (AutoApprove, DenyAll)."
    )


def test_a_busy_port_and_a_repeated_name_are_refused(served):
    with pytest.raises(OSError) as caught:
        ToolServer([shout], port=served.port)
    assert caught.value.strerror == "Address already in use"

    @tool(name="shout")
    def whisper(text: str) -> str:
        """Whisper some text."""
        return text.lower()

    with pytest.raises(ValueError) as caught:
        ToolServer([shout, whisper])
    assert str(caught.value) == "ToolServer: two tools share a name: shout; serve one of each"
