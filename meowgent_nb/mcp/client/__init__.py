"""The MCP client: a server's tools, resources and prompts in the notebook (`toolbox.McpToolbox`), and what a server asks of the notebook while a call runs."""
