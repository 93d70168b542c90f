"""The notebook side: magics, the live display and its HTML, approvals in a running cell.

Three rooms: `magics` (``%%agent``, ``%agent``, ``%tools``, ``%tools mcp``, ``%tools serve``),
`approvals` (asking a person: buttons, ``input()``, a policy when no one is there; and a server's
forms), and `views` (the transcript, its cards and the live view, the context window, eval tables,
MCP listings). The only wing that imports IPython and ipywidgets; `load_ipython_extension` imports it.
"""
