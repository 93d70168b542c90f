"""The notebook's tools served over MCP (`serve.ToolServer`, what ``%tools serve`` runs), with the resources and prompts a notebook publishes."""
