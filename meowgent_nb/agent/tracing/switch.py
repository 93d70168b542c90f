"""Whether a run is traced, and whether content goes into its spans: no OpenTelemetry imported.

A run is traced when its agent was given a ``tracer_provider``, or when a person set one as
OpenTelemetry's global provider (which needs ``opentelemetry.trace`` imported: until then nothing
is, and a run costs one dictionary look-up more).
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["CONTENT_ENV", "captures_content", "tracer_provider_of"]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI conventions' switch: ``true`` puts prompts, answers, arguments and results in spans."""


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
