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

__all__ = ["BASELINES", "FOLLOW_MODEL", "PROTOCOLS", "get_protocol"]

PROTOCOLS: dict[str, ToolProtocol] = {
    "xml": XmlProtocol(),
    "native": NativeProtocol(),
    "json": JsonProtocol(),
    "list": ListProtocol(),
    "decide": DecideProtocol(),
}
"""The protocols to choose from, in the order error messages list them."""

BASELINES: dict[str, ToolProtocol] = {
    "xml-seed": XmlSeedProtocol(),
    "decide-unchecked": DecideProtocol(grounding=False),
}
"""Accepted by name as well, but not offered: variants the benchmarks measure the protocols against."""

FOLLOW_MODEL = "auto"
"""The protocol setting that follows the model (`Agent.choose_protocol`): ``native`` where its
template has tools, else ``xml``; the default of `Agent` and ``%%agent``."""


def get_protocol(protocol: str | ToolProtocol, *, thinking_first: bool = False) -> ToolProtocol:
    """The protocol of that name; a protocol object is returned as it is.

    Args:
        protocol: A name in `PROTOCOLS` or `BASELINES`, or a `ToolProtocol`.
        thinking_first: The model's template opens a think block (`models.base.ToolSupport`):
            ``xml``'s parser then reads the answer as thinking up to ``</think>``. Other protocols
            read no thinking from the text, and a protocol object is returned as it is.

    Raises:
        SettingsError: No protocol has that name; the message lists the protocols to choose from.
    """
    if not isinstance(protocol, str):
        found = protocol if isinstance(protocol, ToolProtocol) else None
    else:
        found = PROTOCOLS.get(protocol) or BASELINES.get(protocol)
        if thinking_first and protocol == "xml":
            found = XmlProtocol(thinking_first=True)
    if found is None:
        *rest, final = (repr(name) for name in PROTOCOLS)
        raise SettingsError(f"protocol must be {', '.join(rest)} or {final}, got {protocol!r}")
    return found
