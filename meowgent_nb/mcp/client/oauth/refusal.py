"""One line for a connection refused for want of authorization, with the fix."""

from __future__ import annotations

import sys

from .browser import OAuthWaitError
from .identity import CrossAppRefused
from .legacy import IssuerRefused
from .options import OAuth, token_dir

if sys.version_info < (3, 11):  # pragma: no cover  (anyio depends on the backport there)
    from exceptiongroup import BaseExceptionGroup

__all__ = ["refusal"]


def refusal(
    name: str, url: str, refused: tuple[int, str] | None, options: OAuth | None, error: BaseException
) -> str | None:
    """One line for a connection the server refused for want of authorization, with the fix; else None.

    Args:
        refused: The server's last 401 or 403 (status, ``WWW-Authenticate``), or None.
        options: The box's OAuth, or None.
        error: What ended the connection (an OAuth flow's error says what went wrong in it).
    """
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    told = isinstance(
        error, (OAuthWaitError, IssuerRefused, CrossAppRefused)
    )  # their message says how to go on
    flow = told or isinstance(error, (OAuthFlowError, OAuthRegistrationError, OAuthTokenError))
    if options is not None and (flow or refused is not None):
        detail = str(error) if flow else f"it answered HTTP {refused[0]} after authorization"  # type: ignore[index]
        if told:
            return f"the MCP server {name!r} ({url}) could not be authorized with OAuth: {detail}."
        return (
            f"the MCP server {name!r} ({url}) could not be authorized with OAuth: {detail}."
            f" Check the client id and redirect address given in OAuth(...), then %tools mcp reconnect {name}"
            f" (to start afresh, delete its token file in {token_dir(options)})."
        )
    if refused is None or refused[0] != 401:
        return None
    wants = " (it uses OAuth)" if "bearer" in refused[1].lower() else ""
    return (
        f"the MCP server {name!r} ({url}) answered HTTP 401 Unauthorized: it needs authorization{wants} and none is"
        f" configured; add it with %tools mcp add {name} --url {url} --oauth, or McpToolbox(..., oauth=True)"
        " (a fixed token: --token T, or headers={'Authorization': 'Bearer T'})."
    )
