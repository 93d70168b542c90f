"""MCP in the notebook: ``%tools mcp ...`` and ``%tools serve``, and what servers ask of a running cell.

`mcp_magics` holds `McpMagics` and `ServeMagics` (the families ``%tools`` hands these words to);
``%tools mcp add`` is `mcp_add_magic`, ``list`` `mcp_listing`, ``refresh`` / ``reconnect``
`mcp_refresh_magics`, ``resources`` / ``prompts`` / ``complete`` `mcp_resource_magics` (also
``%%agent --attach`` / ``--prompt``), ``log`` `mcp_log`; `served_approvals` asks a person
about a served call in the serving cell's output. `server_asks` answers a server's forms,
sampling requests and progress during a call, with the widgets of `_elicit_form`.
"""
