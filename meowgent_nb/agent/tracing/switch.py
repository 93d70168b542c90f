"""Whether a run is traced, and whether content goes into its spans: no OpenTelemetry imported.

A run is traced when its agent was given a ``tracer_provider``, or when a person set one as
OpenTelemetry's global provider (which needs ``opentelemetry.trace`` imported: until then nothing
is, and a run costs one dictionary look-up more).
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = [
    "CONTENT_ENV",
    "call_context",
    "captures_content",
    "forget_call",
    "hold_call",
    "tracer_provider_of",
]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI conventions' switch: ``true`` puts prompts, answers, arguments and results in spans."""

TRACE_FILE_ENV = "MEOWGENT_TRACE_FILE"
"""A file each kernel's ``%%agent`` runs write their spans to, as OTLP JSON lines, from
``%load_ext meowgent_nb`` on (``pytest --meowgent-trace FILE`` sets it for nbval's kernels)."""
INSTALL = "pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http"
"""What sending spans anywhere needs installed (the SDK, and its OTLP exporter and encoder)."""

# id(call) -> (the call, the OpenTelemetry context of its execute_tool span), while the span is open.
_CALLS: dict[int, tuple[Any, Any]] = {}


def tracer_provider_of(given: Any = None) -> Any:
    """The tracer provider a run's spans go to, or None: the run is not traced.

    Args:
        given: The agent's own ``tracer_provider``; without one, OpenTelemetry's global provider
            when a person set one (not the API's default, which records nothing).
    """
    if given is not None:
        return given
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:  # no one imported it, so no one set a provider: import nothing
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider


def captures_content(given: bool | None = None) -> bool:
    """Whether prompts, answers, tool arguments and results go into spans (always masked).

    Args:
        given: The agent's ``trace_content``; None: `CONTENT_ENV` decides (``true``, any case).
    """
    if given is not None:
        return given
    return os.environ.get(CONTENT_ENV, "").strip().lower() == "true"


def call_context(call: Any) -> Any:
    """The OpenTelemetry ``Context`` whose current span is ``call``'s ``execute_tool`` span while a
    traced run has it open, or None (the run is not traced, or the call is over).

    What a tool reaches while it runs (`McpToolbox`) sends it on, so the call's span is the parent
    of what the call causes elsewhere (a served call's span on another kernel).

    Args:
        call: The `ToolCall` running (`agent.running_call.RunningCall.call`).
    """
    held = _CALLS.get(id(call))
    return held[1] if held is not None and held[0] is call else None


def hold_call(call: Any, context: Any) -> None:
    """Make ``context`` what `call_context` gives for ``call`` until `forget_call`."""
    _CALLS[id(call)] = (call, context)


def forget_call(call: Any) -> None:
    """``call``'s span ended: `call_context` gives None for it from now on."""
    held = _CALLS.get(id(call))
    if held is not None and held[0] is call:
        del _CALLS[id(call)]
