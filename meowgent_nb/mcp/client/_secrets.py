"""A box's secrets never leave it: masked in what it says, and its credentials in what its tools return.

The masking is the cassettes' `Mask` (through `secret_mask`), so a secret is masked as it is,
percent-encoded and base64-encoded alike. Messages mask every secret (given ones, env and header
values, OAuth tokens and client secrets). A tool's result masks the box's credentials (the
values of its headers, and its OAuth tokens and client secrets) where it arrives, before it
becomes the call's value: what the model reads, the card shows, the history keeps and a cassette
records never held them. (Env values, which may be plain settings such as a folder, are left in
results: a server reports on its own configuration.)
"""

from __future__ import annotations

from typing import Any

from ..config import redact, secret_mask

__all__ = ["Secrets"]


class Secrets:
    """Mixin of `McpToolbox`: `_redact` for its messages, `_masked` for its tools' results."""

    _secrets: set[str]
    """The given secrets, env and header values, and the OAuth tokens and client secrets seen so far."""
    _connection: Any

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _secret(self, value: str) -> None:
        """An OAuth token or client secret the box's provider read or wrote (`oauth.tokens`)."""
        self._secrets.add(value)
        self.__dict__.setdefault("_oauth_secrets", set()).add(value)

    def _masked(self, result: Any) -> Any:
        """A call's result (the SDK's ``CallToolResult``, or text) with the box's secrets masked."""
        mask = secret_mask({*self._connection.headers.values(), *self.__dict__.get("_oauth_secrets", ())})
        if not mask or result is None:
            return result
        if isinstance(result, str):
            return mask.string(result)
        sent = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        masked = mask(sent)
        return result if masked == sent else type(result).model_validate(masked)
