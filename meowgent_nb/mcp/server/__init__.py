"""The notebook's tools served over MCP (what ``%tools serve`` runs).

- `serve`: `ToolServer`, streamable HTTP on 127.0.0.1 behind a bearer token (`_token_gate`).
- `_serve_types`: what is published about a tool besides its arguments, and structured results.
- `published`: ``@resource`` and ``@prompt``, what a notebook publishes besides tools;
  `published_handlers`: the server's answers about them.
- `served_context`: a served tool's `ToolContext`; `served_rounds`: its questions to the client
  on the 2026-07-28 protocol; `served_events`: change notifications to clients.
"""
