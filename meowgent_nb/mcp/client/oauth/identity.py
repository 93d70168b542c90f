"""Cross-app access (SEP-990): an enterprise identity provider vouches for the person.

Leg 1, here (RFC 8693): the person's ID token is exchanged at the identity provider for an
ID-JAG. Leg 2 (RFC 7523): the SDK's ``IdentityAssertionOAuthProvider`` presents it at the
authorization server named by ``OAuth.issuer`` (never discovered from the MCP server). A refusal
at either leg is a `CrossAppRefused` naming the leg and the fix.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable
from typing import Any

from ....errors import MeowgentError
from .options import OAuth
from .tokens import TokenFile

__all__ = ["CrossAppRefused", "identity_provider"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class CrossAppRefused(MeowgentError):
    """The identity provider or the authorization server refused a leg of cross-app access; the
    message names the leg and the fix."""


def identity_provider(url: str, options: OAuth, storage: TokenFile, secret: Callable[[str], None]) -> Any:
    """The SDK's ID-JAG provider for the MCP server at ``url``, its ID-JAG fetched by leg 1."""
    from mcp.client.auth import OAuthFlowError, OAuthTokenError
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    assert options.issuer and options.client_id and options.client_secret  # see oauth_options
    secret(options.idp_client_secret or "")

    async def id_jag(audience: str, resource: str) -> str:
        return await _exchange(options, audience, resource, secret)

    class Provider(IdentityAssertionOAuthProvider):
        async def _auth_flow(self, request: Any) -> AsyncGenerator[Any, Any]:
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    outgoing = await flow.asend((yield outgoing))
            except StopAsyncIteration:
                return
            except (OAuthFlowError, OAuthTokenError) as error:
                raise CrossAppRefused(
                    f"the authorization server {options.issuer} did not take the identity provider's grant"
                    f" (cross-app access, leg 2: a JWT-bearer grant): {error}; check OAuth(client_id=...,"
                    " client_secret=..., issuer=...) against the client registered there"
                ) from None
            finally:
                await flow.aclose()

    return Provider(
        url,
        storage,
        options.client_id,
        options.client_secret,
        options.issuer,
        id_jag,
        token_endpoint_auth_method="client_secret_basic",  # RFC 6749 §2.3.1: every server takes it
    )


async def _exchange(options: OAuth, audience: str, resource: str, secret: Callable[[str], None]) -> str:
    """Leg 1: the person's ID token exchanged at the identity provider for an ID-JAG (RFC 8693)."""
    import httpx2

    token = options.id_token() if callable(options.id_token) else options.id_token  # type: ignore[operator]
    token = await token if inspect.isawaitable(token) else token
    secret(str(token))
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": str(token),
        "subject_token_type": ID_TOKEN,
        "audience": audience,
        "resource": resource,
        "client_id": str(options.idp_client_id),
    }
    if options.idp_client_secret:
        form["client_secret"] = options.idp_client_secret
    where = f"the identity provider's token endpoint {options.idp_token_endpoint}"
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.post(str(options.idp_token_endpoint), data=form)
    except httpx2.HTTPError as error:
        raise CrossAppRefused(
            f"cannot reach {where} (cross-app access, leg 1: the ID token for an ID-JAG): {error!r};"
            " check OAuth(idp_token_endpoint=...)"
        ) from None
    try:
        body = answer.json()
    except ValueError:
        body = {}
    if (
        answer.status_code != 200
        or not isinstance(body, dict)
        or not isinstance(body.get("access_token"), str)
    ):
        said = (
            f"{body.get('error')}: {body.get('error_description', '')}".rstrip(": ")
            if isinstance(body, dict) and body.get("error")
            else answer.text[:200] or "no ID-JAG"
        )
        raise CrossAppRefused(
            f"{where} refused to exchange the ID token for an ID-JAG (cross-app access, leg 1): HTTP"
            f" {answer.status_code}, {said}; sign in to the identity provider again for a fresh ID token, and check"
            " OAuth(idp_client_id=...)"
        )
    if body.get("issued_token_type", ID_JAG) != ID_JAG:
        raise CrossAppRefused(
            f"{where} answered a {body['issued_token_type']} instead of an ID-JAG ({ID_JAG}) (cross-app access, leg 1);"
            " the identity provider must support SEP-990 cross-app access"
        )
    secret(body["access_token"])
    return body["access_token"]
