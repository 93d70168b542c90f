"""The SDK's OAuth client providers, made from an `OAuth`: a person's authorization or a program's own credentials."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from .browser import Flow, free_port
from .identity import identity_provider
from .legacy import LegacyIssuer
from .options import OAuth, token_dir
from .tokens import TokenFile

__all__ = ["provider"]


def provider(name: str, url: str, options: OAuth, secret: Callable[[str], None]) -> Any:
    """The SDK's ``OAuthClientProvider`` for the box ``name`` at ``url`` (an ``httpx2`` auth)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    # The SDK logs a failed flow with its traceback; our error says what failed and how to fix it,
    # and without a handler Python would print the traceback into the cell (its last resort).
    sdk_log = logging.getLogger("mcp.client.auth")
    if not any(isinstance(h, logging.NullHandler) for h in sdk_log.handlers):
        sdk_log.addHandler(logging.NullHandler())
    path = token_dir(options) / (hashlib.sha256(url.encode()).hexdigest()[:24] + ".json")
    kept = (TokenFile(path, url, secret)._read().get("client") or {}).get("redirect_uris") or [None]
    redirect = (
        options.redirect_uri or kept[0] or f"http://127.0.0.1:{free_port()}/callback"
    )  # its port is registered
    given = None
    if options.client_id is not None:
        secret(options.client_secret or "")
        given = OAuthClientInformationFull(
            client_id=options.client_id,
            client_secret=options.client_secret,
            redirect_uris=[redirect],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic" if options.client_secret else "none",
        )
    storage = TokenFile(path, url, secret, given)
    if options.grant == "client_credentials":
        return _machine(url, options, storage, secret)
    if options.grant == "identity_assertion":
        return identity_provider(url, options, storage, secret)
    flow = Flow(name, redirect, options)

    class Provider(LegacyIssuer, OAuthClientProvider):
        async def _initialize(self) -> None:
            # The SDK learns a token's expiry only when it gets one; a kept one's is in the file,
            # so an expired token is refreshed before it is sent, not authorized again after a 401.
            await super()._initialize()
            self.context.token_expiry_time = storage.expires_at

    return Provider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="meowgent_nb",
            redirect_uris=[redirect],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=flow.redirect,
        callback_handler=flow.callback,
        client_metadata_url=options.client_metadata_url,
    )


def _machine(url: str, options: OAuth, storage: TokenFile, secret: Callable[[str], None]) -> Any:
    """The SDK's provider of the client-credentials grant: a secret, or an assertion signed with a key."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    client_id = str(options.client_id)
    if options.private_key is None:
        return ClientCredentialsOAuthProvider(
            url, storage, client_id, str(options.client_secret), issuer=options.issuer
        )
    secret(options.private_key)
    signed = SignedJWTParameters(
        issuer=client_id,
        subject=client_id,
        signing_key=options.private_key,
        signing_algorithm=options.signing_algorithm,
    )
    return PrivateKeyJWTOAuthProvider(
        url, storage, client_id, signed.create_assertion_provider(), issuer=options.issuer
    )
