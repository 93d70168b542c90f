"""The notebook side: the only wing that imports IPython and ipywidgets.

Five rooms: `magics` (the magic families and their shared `NotebookSession`), `mcp` (``%tools
mcp``, ``%tools serve``, and what MCP servers ask of a running cell), `approvals` (asking a
person: buttons, ``input()``, a policy; trust in a rules file), `views` (the transcript, the
live view, the context window, eval tables) and `workspace` (the notebook as the agent's
workspace: the risk scan of code it would run, the person's variables as tools). What the rooms share: `_kernel` finds the running
shell and kernel; `_setting_words` reads the approval and cassette-mode words and their old
spellings; `_labels` holds every button's words; `_shown_run` the run a ``%%agent`` cell shows.
"""
