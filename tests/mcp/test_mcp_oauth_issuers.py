"""Which authorization server a box trusts: a 2025-03-26 server's own, and cross-app access's configured one.

The module's server: the SDK's authorization server laid out as in 2025-03-26 (no
protected-resource metadata), its root metadata naming ``http://localhost:PORT``: another origin
than the ``127.0.0.1`` the MCP server is reached at. The same-origin case (an issuer
``ORIGIN/oauth``) has a server of its own. A complete cross-app flow is the conformance suite's
``auth/cross-app-access-complete-flow`` (tests/mcp/test_mcp_conformance.py); the identity
provider here is a real local HTTP server.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from meowgent_nb.mcp import McpServerError, McpToolbox, OAuth
from tests.mcp_servers import serving

GUARDED = str(Path(__file__).parents[1] / "mcp_servers" / "oauth_server.py")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with serving.http_server(
        GUARDED, tmp_path_factory.mktemp("legacy"), "3600", "http://localhost:{port}"
    ) as address:
        yield address


def test_an_issuer_on_another_origin_is_refused_in_one_line_naming_both(url, tmp_path):
    origin, port = f"http://{urlsplit(url).netloc}", urlsplit(url).port
    with pytest.raises(McpServerError) as refused:
        McpToolbox(
            "legacy", url=url, connect_timeout=20, oauth=OAuth(token_dir=tmp_path, show=lambda n, link: None)
        )
    assert str(refused.value) == (
        f"the MCP server 'legacy' ({url}) could not be authorized with OAuth: the authorization server metadata at"
        f" {origin}/.well-known/oauth-authorization-server names the issuer http://localhost:{port}, which is not on"
        f" the MCP server's origin {origin}; refused as a possible mix-up attack (RFC 8414 §3.3). Ask the server's"
        " operator to publish protected-resource metadata naming its authorization server, or metadata naming its"
        " own origin."
    )


def test_an_issuer_with_a_path_on_the_servers_own_origin_is_accepted_once_and_kept(tmp_path):
    # The SDK's authorization server naming http://127.0.0.1:PORT/oauth, its endpoints under /oauth.
    with serving.http_server(GUARDED, tmp_path, "3600", "http://127.0.0.1:{port}/oauth") as url:
        options = OAuth(token_dir=tmp_path / "t", authorize=follow)
        with McpToolbox("legacy", url=url, connect_timeout=20, oauth=options) as box:
            assert box["legacy_which_token"].run({}) == "1"
        [kept] = (tmp_path / "t").iterdir()
        client = json.loads(kept.read_text())["client"]
        with McpToolbox("legacy", url=url, connect_timeout=20, oauth=options) as box:
            assert box["legacy_which_token"].run({}) == "1"  # the kept token
    assert client["issuer"] == f"http://{urlsplit(url).netloc}/oauth"


async def follow(link: str) -> str:
    """The person: the SDK's authorization server answers at once with a redirect carrying the code."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        return (await http.get(link, follow_redirects=False)).headers["location"]


ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def _cross_app(url: str, tmp_path, idp_endpoint: str) -> OAuth:
    return OAuth(
        grant="identity_assertion",
        client_id="notes-app",
        client_secret="app-secret-1234",
        issuer=f"http://localhost:{urlsplit(url).port}",
        id_token="the-persons-id-token",
        idp_token_endpoint=idp_endpoint,
        idp_client_id="idp-client",
        token_dir=tmp_path,
    )


def test_cross_app_access_a_refusal_by_the_identity_provider_names_leg_1_and_the_fix(
    url, tmp_path, httpserver
):
    httpserver.expect_request("/token", method="POST").respond_with_json(
        {"error": "invalid_grant", "error_description": "ID token expired"}, status=400
    )
    idp = httpserver.url_for("/token")
    with pytest.raises(McpServerError) as refused:
        McpToolbox("notes", url=url, connect_timeout=20, oauth=_cross_app(url, tmp_path, idp))
    [(request, _)] = httpserver.log
    assert {
        k: request.form[k]
        for k in (
            "grant_type",
            "subject_token",
            "subject_token_type",
            "requested_token_type",
            "audience",
            "resource",
            "client_id",
        )
    } == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": "the-persons-id-token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": ID_JAG,
        "audience": f"http://localhost:{urlsplit(url).port}",
        "resource": url,
        "client_id": "idp-client",
    }
    assert str(refused.value) == (
        f"the MCP server 'notes' ({url}) could not be authorized with OAuth: the identity provider's token endpoint"
        f" {idp} refused to exchange the ID token for an ID-JAG (cross-app access, leg 1): HTTP 400, invalid_grant:"
        " ID token expired; sign in to the identity provider again for a fresh ID token, and check"
        " OAuth(idp_client_id=...)."
    )


def test_cross_app_access_a_refusal_by_the_authorization_server_names_leg_2_and_the_fix(
    url, tmp_path, httpserver
):
    # The identity provider grants an ID-JAG; the SDK's authorization server here knows no such client.
    httpserver.expect_request("/token", method="POST").respond_with_json(
        {"access_token": "header.claims.signature", "issued_token_type": ID_JAG, "token_type": "N_A"}
    )
    with pytest.raises(McpServerError) as refused:
        McpToolbox(
            "notes",
            url=url,
            connect_timeout=20,
            oauth=_cross_app(url, tmp_path, httpserver.url_for("/token")),
        )
    assert str(refused.value) == (
        f"the MCP server 'notes' ({url}) could not be authorized with OAuth: the authorization server"
        f" http://localhost:{urlsplit(url).port} did not take the identity provider's grant (cross-app access, leg 2:"
        ' a JWT-bearer grant): Token exchange failed (401): {"error":"invalid_client","error_description":"Invalid client_id"}; check OAuth(client_id=..., client_secret=...,'
        " issuer=...) against the client registered there."
    )
