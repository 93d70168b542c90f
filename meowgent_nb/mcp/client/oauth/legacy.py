"""`LegacyIssuer`: a 2025-03-26 server's own authorization server, whose issuer has a path.

Without protected-resource metadata the SDK requires the root metadata to name the server's
origin as its issuer (a guard against mix-up attacks); servers of that era often name
``ORIGIN/oauth``. Only on that legacy path, an issuer on the MCP server's own origin is
accepted; any other is refused (`IssuerRefused`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlsplit

from ....errors import MeowgentError

__all__ = ["IssuerRefused", "LegacyIssuer"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlsplit(url)
    return parsed.scheme, (parsed.hostname or "").lower(), parsed.port or _DEFAULT_PORTS.get(parsed.scheme)


class IssuerRefused(MeowgentError):
    """The authorization server's metadata names an issuer not on the MCP server's origin; the
    message names both and what the server's operator can do."""


class LegacyIssuer:
    """Mixin of the SDK's ``OAuthClientProvider``: `_expected_issuer` trusts a same-origin issuer
    that the legacy root metadata named, and the refused flow is run once more."""

    context: Any
    _legacy_issuer: str | None = None

    def _expected_issuer(self) -> str:
        if self.context.auth_server_url is None and self._legacy_issuer is not None:
            return self._legacy_issuer
        return super()._expected_issuer()  # type: ignore[misc]

    async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
        from mcp.client.auth import OAuthFlowError

        for attempt in (1, 2):
            flow = super()._auth_flow(request)  # type: ignore[misc]
            named: tuple[str, str] | None = None  # (metadata URL, issuer) of the legacy root metadata
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    named = await self._root_metadata_issuer(outgoing, response) or named
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            except OAuthFlowError as error:
                if named is None or "issuer mismatch" not in str(error) or attempt == 2:
                    raise
                url, issuer = named
                origin = urlsplit(self.context.server_url)
                if _origin(issuer) != _origin(self.context.server_url):
                    raise IssuerRefused(
                        f"the authorization server metadata at {url} names the issuer {issuer}, which is not on the"
                        f" MCP server's origin {origin.scheme}://{origin.netloc}; refused as a possible mix-up attack"
                        " (RFC 8414 §3.3). Ask the server's operator to publish protected-resource metadata naming"
                        " its authorization server, or metadata naming its own origin"
                    ) from None
                self._legacy_issuer = issuer
            finally:
                await flow.aclose()

    async def _root_metadata_issuer(self, sent: Any, response: Any) -> tuple[str, str] | None:
        """(URL, issuer) when ``sent`` read the legacy root metadata and it names an issuer."""
        if self.context.auth_server_url is not None or response.status_code != 200:
            return None
        server = urlsplit(self.context.server_url)
        root = f"{server.scheme}://{server.netloc}/.well-known/oauth-authorization-server"
        if str(sent.url) != root:
            return None
        try:
            issuer = json.loads(await response.aread()).get("issuer")  # the SDK reads it again: kept
        except (ValueError, AttributeError):
            return None
        return (root, issuer) if isinstance(issuer, str) else None
