"""Where a person authorizes: the link shown (or handed to ``authorize``), the answer read back.

Without an ``authorize`` handler, a server on 127.0.0.1 is started for the flow and stopped
after it: the browser comes back to it with the code, and nothing has to be copied.
"""

from __future__ import annotations

import asyncio
import http.server
import inspect
import socket
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

from ....errors import MeowgentError
from .options import OAuth

__all__ = ["Flow", "OAuthWaitError", "free_port"]


class Flow:
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


class OAuthWaitError(MeowgentError):
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

            def log_message(self, format: str, *args: Any) -> None:  # not on the kernel's stderr
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _print_link(name: str, link: str) -> None:
    print(
        f"To let meowgent_nb use the MCP server {name!r}, open this link and allow access:\n{link}",
        flush=True,
    )
