"""A server's address as shown to a person: any ``user:password@`` left out."""

from __future__ import annotations

__all__ = ["shown_address"]


def shown_address(url: str) -> str:
    """``http://user:secret@gpu:8000/v1`` -> ``http://gpu:8000/v1`` (for descriptions and errors)."""
    scheme, sep, rest = url.rpartition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{slash}{path}"
