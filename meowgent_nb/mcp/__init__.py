"""MCP: servers' tools as notebook tools, and the notebook's tools served.

Three rooms: `client` (`client.toolbox.McpToolbox`: a server's tools, resources and prompts, and
what it asks while a call runs), `server` (`server.serve.ToolServer`, what ``%tools serve`` runs),
and `content` (MCP content as notebook values, shared by both ends). `config` and `load` read
Claude Desktop / Cursor / VS Code configuration files; `_thread` is the background loop both ends
use. The client and the server never import each other.

Nothing here is imported until a toolbox or server is made: the SDK loads then.
"""
