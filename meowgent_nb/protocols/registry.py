"""The protocols by name: what `Agent(protocol=...)` accepts.

Adding a protocol is one module in `protocols/` (a class with the `ToolProtocol` methods) and one
name here.
"""

from __future__ import annotations

from ..errors import SettingsError
from .base import ToolProtocol
from .decide import DecideProtocol
from .json import JsonProtocol
from .list import ListProtocol
from .native import NativeProtocol
from .xml import XmlProtocol
from .xml_seed import XmlSeedProtocol

__all__ = ["BASELINES", "PROTOCOLS", "get_protocol"]

PROTOCOLS: dict[str, ToolProtocol] = {
    "xml": XmlProtocol(),
    "native": NativeProtocol(),
    "json": JsonProtocol(),
    "list": ListProtocol(),
    "decide": DecideProtocol(),
}
"""The protocols to choose from, in the order error messages list them."""

BASELINES: dict[str, ToolProtocol] = {"xml-seed": XmlSeedProtocol()}
"""Accepted by name as well, but not offered: variants the benchmarks measure the protocols against."""


def get_protocol(protocol: str | ToolProtocol) -> ToolProtocol:
    """The protocol of that name; a protocol object is returned as it is.

    Raises:
        SettingsError: No protocol has that name; the message lists the protocols to choose from.
    """
    if not isinstance(protocol, str):
        found = protocol if isinstance(protocol, ToolProtocol) else None
    else:
        found = PROTOCOLS.get(protocol) or BASELINES.get(protocol)
    if found is None:
        *rest, final = (repr(name) for name in PROTOCOLS)
        raise SettingsError(f"protocol must be {', '.join(rest)} or {final}, got {protocol!r}")
    return found
