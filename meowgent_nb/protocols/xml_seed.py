"""The ``xml-seed`` protocol: `XmlProtocol` with the older, seed-style verbose XML tools block.

Kept as a baseline to measure the compact block against (``benchmarks/toolcall_accuracy.py``
and ``benchmarks/tool_tokens.py``), not to choose: the compact block costs fewer tokens for the
same tool choices. It also shows what a protocol variant takes: this module and one name in
`registry`.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from ..tools.core import Tool
from .xml import XmlProtocol

__all__ = ["XmlSeedProtocol", "seed_xml"]


class XmlSeedProtocol(XmlProtocol):
    """The ``xml`` protocol, with the tools block written by `seed_xml`."""

    name = "xml-seed"

    def tools_block(self, tools: Sequence[Tool]) -> str:
        return seed_xml(tools)


def seed_xml(tools: Sequence[Tool]) -> str:
    """The older design: one element per concept, every parameter says whether it is required."""
    root = ET.Element("tools")
    for item in tools:
        element = ET.SubElement(root, "tool", name=item.name)
        ET.SubElement(element, "description").text = item.description
        _seed_parameters(element, item.parameters)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode")


def _seed_parameters(parent: ET.Element, schema: dict[str, Any]) -> None:
    required = schema.get("required", [])
    group = ET.SubElement(parent, "parameters")
    for name, value in schema.get("properties", {}).items():
        group.append(_seed_parameter("parameter", value, name, name in required))


def _seed_parameter(tag: str, schema: dict[str, Any], name: str | None, required: bool | None) -> ET.Element:
    options = schema.get("anyOf", [schema])
    detail = {k: v for o in options if o.get("type") != "null" for k, v in o.items()} | schema
    element = ET.Element(tag, {} if name is None else {"name": name})
    element.set("type", "|".join(str(o.get("type", "any")) for o in options))
    if required is not None:
        element.set("required", "true" if required else "false")
    if "enum" in detail:
        element.set("enum", ", ".join(map(str, detail["enum"])))
    if "default" in detail:
        default = detail["default"]
        element.set("default", default if isinstance(default, str) else json.dumps(default))
    for key in ("minimum", "maximum", "format"):
        if key in detail:
            element.set(key, str(detail[key]))
    if isinstance(detail.get("items"), dict):
        element.append(_seed_parameter("items", detail["items"], None, None))
    if isinstance(detail.get("additionalProperties"), dict):
        element.append(_seed_parameter("values", detail["additionalProperties"], None, None))
    if "properties" in detail:
        _seed_parameters(element, detail)
    description = detail.get("description")
    if description and len(element):
        element.insert(0, ET.Element("description"))
        element[0].text = description
    elif description:
        element.text = description
    return element
