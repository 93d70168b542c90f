"""The MCP client: a server's tools, resources and prompts in the notebook (`toolbox.McpToolbox`,
whose tools are `tool.McpTool`).

Also what a server asks of the notebook while a call runs (`asking`), what it says meanwhile
(`progress`), and a tool's `ToolContext` under the agent (`agent_context`). One room: `oauth`
(authorizing a box on streamable HTTP, and where its tokens are kept).
"""
