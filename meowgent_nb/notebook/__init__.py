"""The notebook side: magics, the live display and its HTML, approvals in a running cell.

Four rooms: `magics` (``%%agent``, ``%agent``, ``%tools``, ``%tools eval``), `mcp` (``%tools mcp``
and ``%tools serve``, and their listings), `approvals` (asking a person: buttons, ``input()``, a
policy when no one is there; a server's forms, trust in a rules file), and `views` (the
transcript, its cards and the live view, the context window, eval tables). The only wing that imports IPython and ipywidgets; `load_ipython_extension` imports it.
"""
