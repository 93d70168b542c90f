"""The magics: ``%%agent`` / ``%agent`` (`agent_magics`, `agent_commands`), ``%tools`` (`tools_magics`).

One `Magics` class per family, all reading the shell's `session.NotebookSession`, registered and
unregistered by `extension`. ``%agent allow|deny|rules|trust`` are `rules_magics`, ``%agent
decisions`` `decisions_magic`; ``%tools mcp`` and ``%tools serve`` are the `notebook.mcp` room's.
Options are read by `_options`.
"""
