"""A 2025-03-26 server (no protected-resource metadata) whose root metadata names another origin.

The same-origin case (an issuer ``ORIGIN/oauth``) is the conformance suite's scenario
``auth/2025-03-26-oauth-metadata-backcompat`` (tests/mcp/test_mcp_conformance.py).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from meowgent_nb.mcp.client.toolbox import McpServerError, McpToolbox, OAuth
from tests.mcp_servers import serving

GUARDED = str(Path(__file__).parents[1] / "mcp_servers" / "oauth_server.py")


def test_an_issuer_on_another_origin_is_refused_in_one_line_naming_both(tmp_path):
    # The SDK's authorization server, laid out as in 2025-03-26, its metadata naming localhost:
    # the same process, but another origin than the 127.0.0.1 the MCP server was reached at.
    with serving.http_server(GUARDED, tmp_path, "3600", "http://localhost:{port}") as url:
        origin = f"http://{urlsplit(url).netloc}"
        with pytest.raises(McpServerError) as refused:
            McpToolbox("legacy", url=url, connect_timeout=20, oauth=OAuth(token_dir=tmp_path, show=lambda n, link: None))
    port = urlsplit(url).port
    assert str(refused.value) == (
        f"the MCP server 'legacy' ({url}) could not be authorized with OAuth: the authorization server metadata at"
        f" {origin}/.well-known/oauth-authorization-server names the issuer http://localhost:{port}, which is not on"
        f" the MCP server's origin {origin}; refused as a possible mix-up attack (RFC 8414 §3.3). Ask the server's"
        " operator to publish protected-resource metadata naming its authorization server, or metadata naming its"
        " own origin."
    )
