"""How tools reach a model and calls come back: the system rules, and the parsers of answers.

``xml`` (tools in the system prompt, calls as ``<tool_call>`` blocks: `parsing`), ``native``
(the backend's ``tools=``), ``json`` (one JSON object per answer: `json_answer`); `prompt` holds
the shared system-prompt pieces and how results are sent back.
"""
