"""The MCP client: an MCP server's tools, resources and prompts in the notebook.

- `toolbox`: `McpToolbox`, the box a person makes; `tool`: `McpTool`, each of its tools.
- `_connection`: `Connection`, the box's session, secrets, time limits and reconnecting.
- `_session`: `Session`, one MCP session on the background loop; `McpServerError`, `McpToolError`.
- `_server_tool`: `mcp_tool`, an `McpTool` from a listing entry, and `needs_approval`.
- `_refresh`: `ToolRefresh`, the tools listed again; `_replayed`: tools from a cassette.
- `_server_resources`: `ServerResources`, resources, prompts, completions and ``read_resource``.
- `_tasks`: tools that run as MCP tasks; `_given_up`: a given-up call cancelled on the server.
- `_secrets`: `Secrets`, what a box masks.
- `asking`: the server's elicitation, sampling and roots requests; `progress`: its progress and logs.
- `resources`: server resources and prompts as notebook values and model text.
- `agent_context`: a tool's `ToolContext` under the agent.
- `oauth`: authorizing a box on streamable HTTP, and where its tokens are kept.
"""
