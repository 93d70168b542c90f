"""``%agent trace on|off|status`` in a real IPython shell, posting to a real local HTTP server the
way an OpenTelemetry collector receives OTLP/HTTP: the protobuf body holds the run's spans."""

from __future__ import annotations

import sys

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from meowgent_nb import ScriptedModel, tool

NO_CONTENT = "without content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true adds it, masked)"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture
def collector(httpserver, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://{httpserver.host}:{httpserver.port}")
    httpserver.expect_request("/v1/traces", method="POST").respond_with_data(
        b"", content_type="application/x-protobuf"
    )
    return httpserver


def said(ip, line: str) -> str:
    with capture_output() as out:
        ip.run_line_magic("agent", line)
    return out.stdout


def test_trace_on_posts_each_runs_spans_over_otlp_http_and_off_stops(ip, collector):
    where = f"http://{collector.host}:{collector.port}/v1/traces"
    assert said(ip, "trace status") == (
        f"Tracing is off; %agent trace on sends each %%agent run's spans over OTLP/HTTP to {where}.\n"
    )
    try:
        assert said(ip, "trace on") == (
            f"Tracing is on: each %%agent run's spans go over OTLP/HTTP to {where}, {NO_CONTENT}.\n"
        )
        ip.user_ns.update(
            add=add,
            model=ScriptedModel(
                ['<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>', "5"]
            ),
        )
        with capture_output():
            ip.run_cell_magic("agent", "--model-object model --new", "Add 2 and 3.")
    finally:
        assert said(ip, "trace off") == (
            f"Tracing is off; %agent trace on sends each %%agent run's spans over OTLP/HTTP to {where}.\n"
        )
    assert ip.meowgent.tracer_provider is None
    spans = []
    for request, _ in collector.log:
        assert request.headers["Content-Type"] == "application/x-protobuf"
        body = ExportTraceServiceRequest.FromString(request.get_data())
        for resource in body.resource_spans:
            service = {a.key: a.value.string_value for a in resource.resource.attributes}["service.name"]
            for scope in resource.scope_spans:
                spans += [(service, scope.scope.name, span) for span in scope.spans]
    assert [(service, scope, span.name) for service, scope, span in spans] == [
        ("meowgent_nb", "meowgent_nb", "execute_tool add"),
        ("meowgent_nb", "meowgent_nb", "chat scripted"),
        ("meowgent_nb", "meowgent_nb", "chat scripted"),
        ("meowgent_nb", "meowgent_nb", "invoke_agent meowgent"),
    ]
    run = spans[-1][2]
    assert {a.key: a.value.string_value for a in run.attributes}["gen_ai.conversation.id"] == (
        ip.meowgent.conversation_id
    )
    assert all(span.trace_id == run.trace_id for _, _, span in spans)
    assert [span.parent_span_id == run.span_id for _, _, span in spans] == [True, True, True, False]


def test_trace_on_without_the_sdk_says_what_to_install(ip, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("agent", "trace on")
    assert str(raised.value) == (
        "%agent trace on needs the OpenTelemetry SDK and its OTLP/HTTP exporter"
        " (opentelemetry.exporter.otlp.proto.http.trace_exporter is missing):"
        " `pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http`, then run it again."
    )
    assert ip.meowgent.tracer_provider is None


def test_trace_takes_on_off_or_status_only(ip):
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("agent", "trace maybe")
    assert str(raised.value) == "%agent trace: unknown word 'maybe'; use %agent trace on, off or status."
