"""MCP in the notebook: ``%tools mcp ...`` (add, load, list, remove, refresh, resources, prompts, log) and ``%tools serve``, and their listings."""
