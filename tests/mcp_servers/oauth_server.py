"""An MCP server that wants OAuth, with its own authorization server (the mcp SDK's, in memory).

``python oauth_server.py http PORT [SECONDS [ISSUER]]``: the MCP endpoint is ``/mcp``; the
authorization server (metadata, dynamic registration, /authorize, /token with PKCE and refresh)
is the SDK's, at the same origin. With ISSUER (``{port}`` in it is the port), the server is laid
out as in 2025-03-26: no protected-resource metadata, and the root metadata names ISSUER; an
ISSUER with a path (``/oauth``) has its endpoints under that path, as the authorization servers of
that era did. Access tokens last SECONDS (default 3600). /authorize answers at once with a
redirect carrying the code, as a consent page would once the person allowed access; to a
redirect address ending in ``/deny`` it answers with ``error=access_denied``. Its tools say which token the call came with.
"""

from __future__ import annotations

import base64
import secrets
import sys
import time
import warnings
from urllib.parse import quote, urlsplit

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 8765
LIFETIME = int(sys.argv[3]) if len(sys.argv) > 3 else 3600
ORIGIN = f"http://127.0.0.1:{PORT}"
LEGACY = sys.argv[4].format(port=PORT) if len(sys.argv) > 4 else None


class Memory:
    """The SDK's ``OAuthAuthorizationServerProvider``, in memory; every person allows access."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued = 0

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        if str(params.redirect_uri).endswith("/deny"):
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied", state=params.state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        del self.refresh[refresh_token.token]
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        access = self.tokens.get(token)
        return access if access is not None and access.expires_at > time.time() else None

    async def revoke_token(self, token):
        self.tokens.pop(getattr(token, "token", ""), None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        self.issued += 1
        access, refresh = f"access-{self.issued}-{secrets.token_urlsafe(12)}", secrets.token_urlsafe(16)
        self.tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + LIFETIME,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=LIFETIME,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


server = MCPServer(
    "guarded",
    auth_server_provider=Memory(),
    auth=AuthSettings(
        issuer_url=LEGACY or ORIGIN,
        resource_server_url=None if LEGACY else f"{ORIGIN}/mcp",
        validate_token_resource=False,
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["read"]),
    ),
)


@server.tool()
def which_token() -> str:
    """Which access token this call came with (its number: 1 for the first issued)."""
    return get_access_token().token.split("-")[1]


@server.tool()
def echo_authorization() -> str:
    """Succeeds, echoing the call's Authorization header as it is, base64- and percent-encoded (a careless server)."""
    header = f"Bearer {get_access_token().token}"
    return f"{header} | {base64.b64encode(header.encode()).decode()} | {quote(header)}"


@server.tool()
async def quote_token(ctx: Context) -> str:
    """Fails, quoting the call's access token in a log message (percent-encoded, lowercase hex) and in
    its error (a careless server)."""
    token = get_access_token().token
    with warnings.catch_warnings():  # the SDK marks logging deprecated (SEP-2577); used here on purpose
        warnings.simplefilter("ignore")
        await ctx.warning(f"refused Bearer%20{token.replace('-', '%2d')}", logger_name="auth")
    raise ToolError(f"token {token} is not allowed to do that")


def _under_issuer_path(app, prefix: str):
    """The app, its authorization endpoints also answered under ``prefix`` (``/oauth/token``)."""

    async def routed(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith(prefix + "/"):
            scope = {
                **scope,
                "path": scope["path"][len(prefix) :],
                "raw_path": scope["path"][len(prefix) :].encode(),
            }
        await app(scope, receive, send)

    return routed


if __name__ == "__main__":
    path = urlsplit(LEGACY).path.rstrip("/") if LEGACY else ""
    if path:
        import uvicorn

        uvicorn.run(_under_issuer_path(server.streamable_http_app(), path), host="127.0.0.1", port=PORT)
    else:
        server.run("streamable-http", host="127.0.0.1", port=PORT)
