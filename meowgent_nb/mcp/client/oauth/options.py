"""`OAuth`: how an `McpToolbox` authorizes, checked before connecting; where its tokens are kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import SettingsError

__all__ = ["OAuth", "oauth_options", "token_dir"]


@dataclass(frozen=True)
class OAuth:
    """How an `McpToolbox` authorizes with an OAuth-protected server (``oauth=True`` is ``OAuth()``).

    Args:
        client_id: A client registered beforehand; None: dynamic client registration.
        client_secret: That client's secret, if it has one.
        authorize: Called with the authorization link, returns the address the browser was sent
            back to (may be async); None: the person opens the link, a local server receives it.
        redirect_uri: Where the browser is sent back; None: the local server's address.
        client_metadata_url: An HTTPS URL of this client's metadata document (CIMD).
        token_dir: The folder of the token files; None: the user's config directory.
        wait: Seconds to wait for the person to authorize.
        show: Shows the authorization link: ``show(server_name, link)``; None: it is printed.
        grant: ``"authorization_code"`` (the default), ``"client_credentials"`` or
            ``"identity_assertion"`` (cross-app access); each needs the fields in `GRANTS`.
        private_key: With ``client_credentials``: a PEM key signing the client's assertion.
        signing_algorithm: The JWT algorithm of ``private_key`` (``RS256``, ``ES256``, ...).
        issuer: The authorization server the credentials belong to, so they go nowhere else.
        id_token: With ``identity_assertion``: the person's ID token, or a function giving one.
        idp_token_endpoint: With ``identity_assertion``: the identity provider's token endpoint.
        idp_client_id: With ``identity_assertion``: this client's id at the identity provider.
        idp_client_secret: Its secret there, if it has one.
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
    id_token: str | Callable[[], Any] | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None


GRANTS = {
    "authorization_code": (),
    "client_credentials": ("client_id", "client_secret"),
    "identity_assertion": (
        "client_id",
        "client_secret",
        "issuer",
        "id_token",
        "idp_token_endpoint",
        "idp_client_id",
    ),
}
"""The grants, and the fields each needs."""


def oauth_options(name: str, oauth: OAuth | bool | None) -> OAuth | None:
    """``oauth=`` of `McpToolbox` as an `OAuth`, or None (no OAuth)."""
    if oauth is None or oauth is False:
        return None
    if oauth is True:
        return OAuth()
    if not isinstance(oauth, OAuth):
        raise SettingsError(f"McpToolbox {name!r}: oauth must be True, False or an OAuth(...), got {oauth!r}")
    if oauth.grant not in GRANTS:
        raise SettingsError(
            f"McpToolbox {name!r}: OAuth grant must be {', '.join(map(repr, GRANTS))}, got {oauth.grant!r}"
        )
    needs = GRANTS[oauth.grant]
    if oauth.grant == "client_credentials" and oauth.private_key:  # a key signs instead of a secret
        needs = ("client_id",)
    missing = [field for field in needs if not getattr(oauth, field)]
    if missing:
        given = " (or private_key)" if oauth.grant == "client_credentials" else ""
        raise SettingsError(
            f"McpToolbox {name!r}: OAuth(grant={oauth.grant!r}) needs {', '.join(needs)}{given};"
            f" missing: {', '.join(missing)}"
        )
    idp = [
        f
        for f in ("id_token", "idp_token_endpoint", "idp_client_id", "idp_client_secret")
        if getattr(oauth, f)
    ]
    if idp and oauth.grant != "identity_assertion":
        raise SettingsError(
            f"McpToolbox {name!r}: {', '.join(idp)} are for OAuth(grant='identity_assertion')"
        )
    return oauth


def token_dir(options: OAuth) -> Path:
    """The folder of the token files."""
    if options.token_dir is not None:
        return Path(options.token_dir).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("meowgent_nb")) / "oauth"
