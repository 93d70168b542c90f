"""The magics: one IPython `Magics` class per family, sharing the shell's `NotebookSession`.

`extension` loads and unloads them; `session` holds `NotebookSession` and the families' base
`SessionMagics`. ``%%agent`` / ``%agent`` are `agent_magics` (`AgentMagics`, whose traits are the
settings), its commands `agent_commands`, `rules_magics` (allow, deny, rules, trust),
`decisions_magic`, `policy_magic` (the site's policy) and `trace_magic` (``%agent trace``: runs
as OpenTelemetry spans over OTLP/HTTP); ``%tools`` and ``%tools eval`` are
`tools_magics` (``%tools mcp`` and ``%tools serve`` are `notebook.mcp`'s). Private helpers:
`_options` (option parsing), `_model_choice`, `_cassette_choice`, `_cell_expectation`,
`_prompt_text`, `_collected_tools`, `_busy` (the kernel's busy status while a cell runs) and
`_run_record` (results for `testing.run_notebook`).
"""
