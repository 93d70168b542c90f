"""``%agent trace on|off|status``: the session's ``%%agent`` runs as OpenTelemetry spans over OTLP/HTTP.

``on`` makes an SDK ``TracerProvider`` whose spans go, in batches, to an OTLP/HTTP exporter
configured as the SDK's environment variables say (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``);
every ``%%agent`` cell after it passes it to its agent (`agent.tracing`). ``off`` sends what is
left and shuts it down. ``status`` says where spans go. `trace_to_file` writes them to a file
instead, from ``%load_ext`` on when ``MEOWGENT_TRACE_FILE`` names one (``pytest --meowgent-trace``). OpenTelemetry's global provider is left
alone: a person who set one traces every agent with it already.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...agent.tracing import INSTALL, captures_content, tracer_provider_of

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["INSTALL", "endpoint", "trace_command", "trace_to_file"]
_DEFAULT_ENDPOINT = "http://localhost:4318"


def trace_command(session: NotebookSession, words: str) -> None:
    """Run ``%agent trace WORDS`` (``on``, ``off`` or ``status``) for ``session``.

    Raises:
        UsageError: Another word, or ``on`` without the OpenTelemetry SDK and its OTLP/HTTP exporter.
    """
    if words == "on":
        if session.trace_file is not None:  # from a file to OTLP/HTTP
            session.tracer_provider.shutdown()
            session.tracer_provider = session.trace_file = None
        if session.tracer_provider is None:
            session.tracer_provider = _provider()
        print(_status(session))
    elif words == "off":
        provider, session.tracer_provider, session.trace_file = session.tracer_provider, None, None
        if provider is not None:
            provider.shutdown()  # sends the spans still waiting in its batch
        print(_status(session))
    elif words in ("status", ""):
        print(_status(session))
    else:
        raise UsageError(f"%agent trace: unknown word {words!r}; use %agent trace on, off or status.")


def trace_to_file(session: NotebookSession, path: str) -> None:
    """Write ``session``'s ``%%agent`` runs' spans to ``path`` as OTLP JSON lines, each span as it
    ends (`agent.tracing.json_lines`).

    Raises:
        UsageError: The OpenTelemetry SDK or its OTLP exporter is missing.
    """
    try:
        from ...agent.tracing.json_lines import file_tracer_provider
    except ImportError as error:
        raise UsageError(
            f"Writing spans to {path} needs the OpenTelemetry SDK and its OTLP exporter ({error.name}"
            f" is missing): `{INSTALL}`."
        ) from None
    if session.tracer_provider is not None:
        session.tracer_provider.shutdown()
    session.tracer_provider, session.trace_file = file_tracer_provider(path), path


def endpoint() -> str:
    """Where the OTLP/HTTP exporter posts spans, as the SDK reads its environment variables."""
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or _DEFAULT_ENDPOINT
    return base.rstrip("/") + "/v1/traces"


def _provider() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise UsageError(
            f"%agent trace on needs the OpenTelemetry SDK and its OTLP/HTTP exporter ({error.name} is"
            f" missing): `{INSTALL}`, then run it again."
        ) from None
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "meowgent_nb"}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _status(session: NotebookSession) -> str:
    content = (
        "with prompts, answers, arguments and results (masked)"
        if captures_content()
        else "without content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true adds it, masked)"
    )
    if session.trace_file is not None:
        return f"Tracing is on: each %%agent run's spans are written to {session.trace_file} as OTLP JSON lines, {content}."
    if session.tracer_provider is not None:
        return f"Tracing is on: each %%agent run's spans go over OTLP/HTTP to {endpoint()}, {content}."
    if tracer_provider_of(None) is not None:
        return f"Tracing is on through the tracer provider this kernel set for OpenTelemetry, {content}."
    return f"Tracing is off; %agent trace on sends each %%agent run's spans over OTLP/HTTP to {endpoint()}."
