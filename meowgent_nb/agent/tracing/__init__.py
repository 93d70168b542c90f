"""Tracing a run: OpenTelemetry GenAI spans made from what the run yields.

`switch`: whether a run is traced (`tracer_provider_of`: the agent's ``tracer_provider``, else the
one a person set as OpenTelemetry's global provider) and whether content goes into spans
(`captures_content`), and the context of a call's span while the call runs (`call_context`, which
`McpToolbox` sends on); it imports no OpenTelemetry. `spans`: `traced`, which reads a run's events
(`agent.events`) as they pass and turns them into an ``invoke_agent`` span with ``chat`` and
``execute_tool`` spans under it; imported only when a run is traced. `json_lines`: spans written
to a file as OTLP JSON lines (``TRACE_FILE_ENV``, ``python -m meowgent_nb trace --json``). The
attribute names are listed in docs/guides/tracing.md.
"""

from __future__ import annotations

from .switch import CONTENT_ENV, INSTALL, TRACE_FILE_ENV, call_context, captures_content, tracer_provider_of

__all__ = [
    "CONTENT_ENV",
    "INSTALL",
    "TRACE_FILE_ENV",
    "call_context",
    "captures_content",
    "tracer_provider_of",
]
