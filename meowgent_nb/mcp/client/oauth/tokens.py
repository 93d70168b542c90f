"""The SDK's token storage as one file per server, readable by its owner only."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TokenFile"]


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
