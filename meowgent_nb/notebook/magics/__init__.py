"""The magics: ``%%agent`` / ``%agent`` (`agent_magics`), ``%tools`` (`tools_magics`) and ``%tools mcp`` / ``%tools serve`` (`mcp_magics`), with their option parsing."""
