"""OAuth for an `McpToolbox` on streamable HTTP: the mcp SDK's client provider, with tokens kept per server.

`OAuth` says how a box authorizes; `provider` makes the SDK's ``OAuthClientProvider`` from it,
which does the protocol: discovery of the server's protected-resource and authorization-server
metadata, dynamic client registration (or the client id given), the authorization code with
PKCE, and token refresh. What this module adds is the two ends the SDK leaves open:

- Where the person authorizes. Without an ``authorize`` handler, a server on 127.0.0.1 (a free
  port, kept with the registration) is started for the flow and stopped after it: the
  authorization link is shown (`OAuth.show`, a button in a notebook cell), the browser comes back
  to it with the code, and nothing has to be copied. A program or a test passes ``authorize``: it
  is given the link and returns the address the authorization server sent the browser back to.
- Where tokens live: a file per server under the user's config directory
  (``platformdirs.user_config_dir("meowgent_nb")/oauth``), readable by its owner only (0600),
  never in a notebook or a cassette. Every token and client secret read or written is added to
  the box's secrets, so `redact` masks it in every error and listing.
"""

from __future__ import annotations

import asyncio
import sys
import hashlib
import http.server
import inspect
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

if sys.version_info < (3, 11):  # pragma: no cover  (anyio depends on the backport there)
    from exceptiongroup import BaseExceptionGroup

__all__ = ["OAuth", "OAuthWaitError", "TokenFile", "oauth_options", "provider", "refusal", "token_dir"]


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


class TokenFile:
    """The SDK's ``TokenStorage`` as one JSON file per server, 0600; what it holds is told to ``secret``.

    Args:
        path: The file.
        server: The server's URL, kept in the file (which server the tokens are for).
        secret: Called with each secret value read or written (tokens, a client secret).
        client: The client the person gave (``OAuth.client_id``): used instead of any registration kept.
    """

    def __init__(self, path: Path, server: str, secret: Callable[[str], None], client: Any = None):
        self.path, self.server, self.secret, self.client = path, server, secret, client
        self.expires_at: float | None = None
        """When the kept access token expires (seconds since the epoch), if the server said."""

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):  # none yet, or unreadable: authorize again
            return {}
        return data if isinstance(data, dict) and data.get("server") == self.server else {}

    def _write(self, key: str, value: dict[str, Any], **more: Any) -> None:
        data = {**self._read(), "server": self.server, key: value, **more}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(data, file)
        os.chmod(temporary, 0o600)  # whatever the umask
        os.replace(temporary, self.path)

    def _told(self, *values: Any) -> None:
        for value in values:
            if isinstance(value, str) and value:
                self.secret(value)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        data = self._read()
        stored, self.expires_at = data.get("tokens"), data.get("expires_at")
        if not stored:
            return None
        tokens = OAuthToken.model_validate(stored)
        self._told(tokens.access_token, tokens.refresh_token)
        return tokens

    async def set_tokens(self, tokens: Any) -> None:
        from mcp.shared.auth_utils import calculate_token_expiry

        self._told(tokens.access_token, tokens.refresh_token)
        self.expires_at = calculate_token_expiry(tokens.expires_in)
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True), expires_at=self.expires_at)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.client is not None:
            return self.client
        stored = self._read().get("client")
        if not stored:
            return None
        client = OAuthClientInformationFull.model_validate(stored)
        self._told(client.client_secret)
        return client

    async def set_client_info(self, client_info: Any) -> None:
        self._told(client_info.client_secret)
        if self.client is None:  # a client the person gave is theirs to keep, not ours
            self._write("client", client_info.model_dump(mode="json", exclude_none=True))


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
    redirect = options.redirect_uri or kept[0] or f"http://127.0.0.1:{_free_port()}/callback"  # its port is registered
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
    flow = _Flow(name, redirect, options)

    class Provider(OAuthClientProvider):
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
        return ClientCredentialsOAuthProvider(url, storage, client_id, str(options.client_secret), issuer=options.issuer)
    secret(options.private_key)
    signed = SignedJWTParameters(
        issuer=client_id, subject=client_id, signing_key=options.private_key, signing_algorithm=options.signing_algorithm
    )
    return PrivateKeyJWTOAuthProvider(url, storage, client_id, signed.create_assertion_provider(), issuer=options.issuer)


class _Flow:
    """One box's authorization: shows the link (or hands it to ``authorize``) and reads the answer."""

    def __init__(self, name: str, redirect: str, options: OAuth):
        self.name, self.redirect_uri, self.options = name, redirect, options
        self._answer: asyncio.Future[str] | None = None

    async def redirect(self, link: str) -> None:
        loop = asyncio.get_running_loop()
        self._answer = loop.create_future()
        if self.options.authorize is not None:
            answered = self.options.authorize(link)
            self._answer.set_result(await answered if inspect.isawaitable(answered) else answered)
            return
        _Callback(self.redirect_uri, self._answer, loop).start()
        try:
            (self.options.show or _print_link)(self.name, link)
        except BaseException:
            self._answer.cancel()  # no one will answer: the local server stops
            raise

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._answer is not None  # the SDK calls redirect first
        try:
            address = await asyncio.wait_for(asyncio.shield(self._answer), self.options.wait)
        except asyncio.TimeoutError:
            raise OAuthWaitError(
                f"no authorization for the MCP server {self.name!r} arrived within {self.options.wait:g} s;"
                " open the link shown and allow access, or give OAuth(wait=...) more time"
            ) from None
        finally:
            if not self._answer.done():
                self._answer.cancel()  # stops the local server
        query = {key: values[0] for key, values in parse_qs(urlparse(str(address)).query).items()}
        if "code" not in query:
            why = query.get("error_description") or query.get("error") or f"no code in {address!r}"
            raise OAuthWaitError(
                f"the authorization server did not authorize meowgent_nb for {self.name!r} ({why});"
                f" allow access on its page, then %tools mcp reconnect {self.name}"
            )
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


class OAuthWaitError(Exception):
    """No one authorized (in time, or at all: a headless run), or the authorization server refused;
    the message says how to go on."""


class _Callback(threading.Thread):
    """A server on 127.0.0.1 that takes the one redirect of a flow, then stops."""

    def __init__(self, redirect_uri: str, answer: asyncio.Future[str], loop: asyncio.AbstractEventLoop):
        super().__init__(daemon=True, name="meowgent-oauth-callback")
        parsed = urlparse(redirect_uri)
        answered = self._answered = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if urlparse(self.path).path != parsed.path:
                    self.send_error(404)
                    return
                address = f"{parsed.scheme}://{parsed.netloc}{self.path}"
                loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(address))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(b"<p>meowgent_nb has the answer; you can close this tab.</p>")
                answered.set()

            def log_message(self, *args: Any) -> None:  # not on the kernel's stderr
                pass

        address = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        for attempt in range(20):  # the server of a flow that just ended may still hold the port
            try:
                self.server = http.server.HTTPServer(address, Handler)
                break
            except OSError as error:
                if attempt == 19:
                    raise OAuthWaitError(
                        f"cannot receive the authorization's answer at {redirect_uri} ({error}); give another"
                        " address with OAuth(redirect_uri=...)"
                    ) from None
                time.sleep(0.05)
        self.server.timeout = 0.2
        loop.call_soon_threadsafe(answer.add_done_callback, lambda _: answered.set())

    def run(self) -> None:
        try:
            while not self._answered.is_set():
                self.server.handle_request()
        finally:
            self.server.server_close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _print_link(name: str, link: str) -> None:
    print(f"To let meowgent_nb use the MCP server {name!r}, open this link and allow access:\n{link}", flush=True)



def refusal(name: str, url: str, refused: tuple[int, str] | None, options: OAuth | None, error: BaseException) -> str | None:
    """One line for a connection the server refused for want of authorization, with the fix; else None.

    Args:
        refused: The server's last 401 or 403 (status, ``WWW-Authenticate``), or None.
        options: The box's OAuth, or None.
        error: What ended the connection (an OAuth flow's error says what went wrong in it).
    """
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    flow = isinstance(error, (OAuthFlowError, OAuthRegistrationError, OAuthTokenError, OAuthWaitError))
    if options is not None and (flow or refused is not None):
        detail = str(error) if flow else f"it answered HTTP {refused[0]} after authorization"  # type: ignore[index]
        if isinstance(error, OAuthWaitError):  # its message says how to go on
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
