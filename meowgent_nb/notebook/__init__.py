"""The notebook side: magics, the live display and its HTML, approvals in a running cell.

Four rooms: `magics` (``%%agent``, ``%agent``, ``%tools``, ``%tools eval``), `mcp` (``%tools mcp``
and ``%tools serve``, their listings, and what MCP servers ask of the notebook: forms and sampling),
`approvals` (asking a person: buttons, ``input()``, a policy when no one is there; trust in a rules
file), and `views` (the transcript, its cards and the live view, the context window, eval tables).
Beside them, what the rooms share: `_kernel` (the running shell and kernel, whether a run is
headless), `_setting_words` (the approval and cassette-mode words, old spellings noticed),
`_labels` (every button's words) and `_shown_run` (the run a ``%%agent`` cell is showing).
The only wing that imports IPython and ipywidgets; `load_ipython_extension` imports it.
"""
