"""meowgent_nb: tool-using agents on local models, in Jupyter notebooks.

Mark plain Python functions with `@tool`; the model sees them as compact XML (`render_tools_xml`),
asks for them with ``<tool_call>`` blocks, and each call is validated against the tool's schema.
Importing this package only defines names: no client, no network, no configuration is read.
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import MeowgentError, ToolArgumentsError, ToolDefinitionError
from .render import parse_tools_xml, render_tools_text, render_tools_xml, tools_json_schema
from .toolbox import Toolbox
from .tools import Tool, ToolCall, ToolResult, tool

try:
    __version__ = version("meowgent-nb")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "MeowgentError",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolResult",
    "Toolbox",
    "__version__",
    "parse_tools_xml",
    "render_tools_text",
    "render_tools_xml",
    "tool",
    "tools_json_schema",
]
