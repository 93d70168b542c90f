"""`Secrets`: a box's secrets never leave it.

`Secrets.redact` masks every secret in the box's own messages; `Secrets.masking` wraps the
session's transport so each message from the server has the box's credentials masked before the
SDK reads it, so no result, log, card or cassette ever holds them. Masking is the cassettes'
`Mask`, which also finds encoded forms. Plain env settings (a folder) are not credentials, and
stay in what the server says.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from ...recording import CassetteError, Mask
from ..config import redact, secret_mask

__all__ = ["Secrets", "masked_message"]

UNMASKABLE = -32603  # JSON-RPC's internal error: the answer is refused here, not the server's fault alone


class Secrets:
    """An `McpToolbox`'s secrets: `redact` for its messages, `masking` for what its server sends.

    Args:
        given: The box's ``secrets=``, the values of its ``env`` and its headers' secrets.
        credentials: What is masked in everything the server sends: its headers' secrets (see
            `header_secrets`) and the env values named as credentials (see `env_credentials`).
    """

    def __init__(self, given: set[str], credentials: set[str]):
        self.all = set(given)
        """Every secret: the given ones, and the OAuth tokens and client secrets seen so far."""
        self._credentials = set(credentials)  # OAuth adds its tokens

    def redact(self, text: str) -> str:
        """``text`` with every secret shown as ``***``."""
        return redact(text, self.all)

    def add(self, value: str) -> None:
        """An OAuth token or client secret the box's provider read or wrote (`oauth.tokens`)."""
        self.all.add(value)
        self._credentials.add(value)

    def masking(self, transport: Any) -> Any:
        """``transport`` (an MCP client transport) whose every message from the server is masked."""
        return _masked_transport(transport, lambda: secret_mask(self._credentials))


@contextlib.asynccontextmanager
async def _masked_transport(transport: Any, mask: Callable[[], Mask]) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (reads, writes):
        yield _MaskedReads(reads, mask), writes


class _MaskedReads:
    """A transport's read stream, each message masked (the SDK's ``ReadStream``)."""

    def __init__(self, inner: Any, mask: Callable[[], Mask]):
        self._inner, self._mask = inner, mask

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, where the inner stream keeps one (the SDK reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return masked_message(self._mask(), await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _MaskedReads:
        return self

    async def __anext__(self) -> Any:
        return masked_message(self._mask(), await self._inner.__anext__())

    async def __aenter__(self) -> _MaskedReads:  # noqa: PYI034 (Python 3.10 has no Self)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def masked_message(mask: Mask, item: Any) -> Any:
    """One item of a transport's read stream with ``mask`` applied; a message that no longer
    parses once masked becomes an error (an answer) or an exception the SDK drops."""
    message = getattr(item, "message", None)
    if not mask or message is None:
        return item
    from mcp_types import ErrorData
    from mcp_types.jsonrpc import JSONRPCError, JSONRPCResponse
    from pydantic import ValidationError
    from pydantic_core import PydanticSerializationError

    try:
        if not mask.found(message.model_dump_json(by_alias=True, exclude_unset=True)):
            return item  # every string is in the JSON text, escaped as the mask reads it
        masked = mask(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
        return type(item)(type(message).model_validate(masked), item.metadata)
    except (CassetteError, ValidationError, PydanticSerializationError):  # too deep, or no longer valid
        problem = (
            "a message from the MCP server could not be masked (nested too deep, or a credential where text"
            " cannot stand)"
        )
        if isinstance(message, (JSONRPCResponse, JSONRPCError)):
            error = ErrorData(code=UNMASKABLE, message=f"{problem}; it was not used")
            return type(item)(JSONRPCError(jsonrpc="2.0", id=message.id, error=error), item.metadata)
        return ValueError(f"{problem}; it was dropped")
