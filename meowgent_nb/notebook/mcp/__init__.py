"""MCP in the notebook: ``%tools mcp ...`` (add, load, list, remove, refresh, resources, prompts, log) and ``%tools serve``,
their listings, and what servers ask of the notebook during a call (`server_asks`: forms, sampling, progress)."""
