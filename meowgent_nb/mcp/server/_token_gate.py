"""`RequireToken`: the bearer-token gate in front of `ToolServer`, an ASGI middleware.

A request passes with ``Authorization: Bearer TOKEN`` (scheme in any case, token compared in
constant time). A refused one gets 403 with the reason, not 401: OAuth-capable clients start
OAuth discovery on any 401, and the person would see a failed registration instead of the reason.
Nothing here advertises OAuth.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

__all__ = ["REFUSED", "RequireToken"]

REFUSED = (
    "missing or wrong bearer token: send the header 'Authorization: Bearer TOKEN' with the token"
    " %tools serve printed (ToolServer.token)"
)
"""The message a refused client shows."""

_REALM = b'Bearer realm="meowgent_nb"'
_INVALID_TOKEN = f', error="invalid_token", error_description="{REFUSED}"'.encode()
_INVALID_REQUEST = -32600  # not -32001: the SDK reads that code as a request timeout


class RequireToken:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer TOKEN`` are refused.

    Args:
        app: The ASGI app behind the gate.
        token: The token requests must carry.
    """

    def __init__(self, app: Any, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope.get("path", "").startswith("/.well-known/"):
            await _answer(send, 404, [(b"content-type", b"text/plain; charset=utf-8")], b"Not Found")
        else:
            given = dict(scope.get("headers") or []).get(b"authorization")
            if given is not None and self._accepts(given):
                await self.app(scope, receive, send)
            else:
                challenge = _REALM if given is None else _REALM + _INVALID_TOKEN
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": _INVALID_REQUEST, "message": REFUSED}}
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", challenge)]
                await _answer(send, 403, headers, json.dumps(body).encode())

    def _accepts(self, header: bytes) -> bool:
        scheme, _, token = header.partition(b" ")
        token = token.lstrip(b" ")
        # compare_digest takes as long for any token of a length; the length itself is no secret.
        return scheme.lower() == b"bearer" and hmac.compare_digest(token, self.token)


async def _answer(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
