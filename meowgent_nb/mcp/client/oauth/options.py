"""`OAuth`: how an `McpToolbox` authorizes, checked before connecting; where its tokens are kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["OAuth", "oauth_options", "token_dir"]


@dataclass(frozen=True)
class OAuth:
    """How an `McpToolbox` authorizes with an OAuth-protected server (``oauth=True`` is ``OAuth()``).

    Args:
        client_id: A client registered with the authorization server beforehand; None: the box
            registers itself (dynamic client registration) the first time.
        client_secret: That client's secret, if it has one.
        authorize: For programs and tests: called with the authorization link, returns the
            address the browser was sent back to (with ``code`` and ``state``); may be async.
            None: the person opens the link, and a server on 127.0.0.1 receives the answer.
        redirect_uri: Where the authorization server sends the browser back; None: the local
            server's address (``http://127.0.0.1:PORT/callback``).
        client_metadata_url: An HTTPS URL of this client's metadata document, used as its client
            id where the authorization server takes one (CIMD) instead of registering.
        token_dir: The folder of the token files; None: the user's config directory.
        wait: Seconds to wait for the person to authorize.
        show: Shows the authorization link: ``show(server_name, link)``; None: it is printed.
        grant: ``"authorization_code"`` (a person allows access; the default), or
            ``"client_credentials"`` (a program's own credentials, no person: give ``client_id``
            and ``client_secret``, or ``private_key``).
        private_key: With ``client_credentials``: a PEM private key that signs the client's
            assertion (``private_key_jwt``) instead of sending a secret.
        signing_algorithm: The JWT algorithm of ``private_key`` (``RS256``, ``ES256``, ...).
        issuer: With ``client_credentials``: the authorization server (its issuer URL) the
            credentials belong to, so they are sent nowhere else; without it the MCP server
            decides (the SDK warns).
    """

    client_id: str | None = None
    client_secret: str | None = None
    authorize: Callable[[str], Any] | None = None
    redirect_uri: str | None = None
    client_metadata_url: str | None = None
    token_dir: str | os.PathLike[str] | None = None
    wait: float = 300.0
    show: Callable[[str, str], None] | None = None
    grant: str = "authorization_code"
    private_key: str | None = None
    signing_algorithm: str = "RS256"
    issuer: str | None = None


def oauth_options(name: str, oauth: OAuth | bool | None) -> OAuth | None:
    """``oauth=`` of `McpToolbox` as an `OAuth`, or None (no OAuth)."""
    if oauth is None or oauth is False:
        return None
    if oauth is True:
        return OAuth()
    if not isinstance(oauth, OAuth):
        raise ValueError(f"McpToolbox {name!r}: oauth must be True, False or an OAuth(...), got {oauth!r}")
    if oauth.grant not in ("authorization_code", "client_credentials"):
        raise ValueError(
            f"McpToolbox {name!r}: OAuth grant must be 'authorization_code' or 'client_credentials', got {oauth.grant!r}"
        )
    if oauth.grant == "client_credentials" and not (oauth.client_id and (oauth.client_secret or oauth.private_key)):
        raise ValueError(
            f"McpToolbox {name!r}: OAuth(grant='client_credentials') needs client_id and client_secret (or private_key)"
        )
    return oauth


def token_dir(options: OAuth) -> Path:
    """The folder of the token files."""
    if options.token_dir is not None:
        return Path(options.token_dir).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("meowgent_nb")) / "oauth"
