"""Tools: `Tool`, `@tool`, `ToolCall`, `ToolResult`, `Toolbox`; their schemas, validation and XML.

A tool is one source of truth (a pydantic model built from the function's signature, or a JSON
Schema from elsewhere); the compact XML and JSON Schema the model reads are renderings of it.
A tool's return value becomes the text the model reads in `output`, through the views of `values`
(which also show a notebook's variables to the model); one room: `media` (images and audio in
tool values).
"""

from __future__ import annotations

from .calls import ToolCall, ToolResult
from .core import Tool, tool
from .toolbox import Toolbox

__all__ = ["Tool", "ToolCall", "ToolResult", "Toolbox", "tool"]
