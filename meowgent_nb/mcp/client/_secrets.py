"""A box's secrets (tokens, header and env values) never leave it: masked in what it says and what its tools return.

The masking is the cassettes' `Mask` (through `secret_mask`), so a secret is masked as it is,
percent-encoded and base64-encoded alike. A tool's result is masked where it arrives, before it
becomes the call's value: what the model reads, the card shows, the history keeps and a cassette
records never held the secret.
"""

from __future__ import annotations

from typing import Any

from ..config import redact, secret_mask

__all__ = ["Secrets"]


class Secrets:
    """Mixin of `McpToolbox`: `_redact` for its messages, `_masked` for its tools' results."""

    _secrets: set[str]
    """The given secrets, env and header values, and the OAuth tokens and client secrets seen so far."""

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _masked(self, result: Any) -> Any:
        """A call's result (the SDK's ``CallToolResult``, or text) with the box's secrets masked."""
        mask = secret_mask(self._secrets)
        if not mask or result is None:
            return result
        if isinstance(result, str):
            return mask.string(result)
        sent = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        masked = mask(sent)
        return result if masked == sent else type(result).model_validate(masked)
