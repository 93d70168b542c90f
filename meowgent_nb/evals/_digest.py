"""A short digest of each tool as the model is told about it: what a baseline notices has changed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from ..tools.core import Tool

__all__ = ["tool_digests"]


def tool_digests(tools: Iterable[Tool]) -> dict[str, str]:
    """``{name: digest}``: the first 16 hex digits of the SHA-256 of the tool's JSON schema (its
    name, description and parameters with theirs, keys sorted), the one source every protocol
    renders the tool from. An edit of a docstring, an ``Annotated`` text or a type changes it."""
    return {
        tool.name: hashlib.sha256(
            json.dumps(tool.to_json_schema(), sort_keys=True, ensure_ascii=False, default=repr).encode()
        ).hexdigest()[:16]
        for tool in tools
    }
