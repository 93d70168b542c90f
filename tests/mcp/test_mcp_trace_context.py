"""A served call in its caller's trace: a real `ToolServer` called by an `Agent` through
`McpToolbox`, each traced into its own in-memory exporter, the trace context travelling as W3C
``traceparent`` in the request's ``_meta``."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from meowgent_nb import Agent, AutoApprove, ScriptedModel, tool
from meowgent_nb.mcp import McpToolbox, ToolServer
from tests.mcp.test_mcp_serve import client


@tool
def shout(text: str) -> str:
    """Shout some text."""
    return text.upper()


def traced() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def named(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


@pytest.fixture(scope="module")
def server_traced():
    provider, exporter = traced()
    server = ToolServer([shout], tracer_provider=provider)
    yield server, exporter
    server.stop()


def test_a_served_call_is_a_child_of_the_callers_execute_tool_span(server_traced):
    server, served = server_traced
    served.clear()
    provider, caller = traced()
    model = ScriptedModel(['<tool_call>{"name": "nb_shout", "arguments": {"text": "hi"}}</tool_call>', "HI."])
    with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
        result = Agent(model, tools=list(box), approver=AutoApprove(), tracer_provider=provider).run(
            "Shout hi"
        )
    assert result.text == "HI."
    calling = named(caller)
    assert {name: len(spans) for name, spans in calling.items()} == {
        "chat scripted": 2,
        "execute_tool nb_shout": 1,
        "invoke_agent meowgent": 1,
    }
    [span] = served.get_finished_spans()
    [asked] = calling["execute_tool nb_shout"]
    [run] = calling["invoke_agent meowgent"]
    assert span.name == "execute_tool shout"
    assert span.kind is SpanKind.SERVER
    assert span.context.trace_id == asked.context.trace_id == run.context.trace_id
    assert span.parent is not None and span.parent.span_id == asked.context.span_id
    assert span.parent.is_remote is True
    assert {k: v for k, v in (span.attributes or {}).items() if k != "meowgent.tool.run_seconds"} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "shout",
        "gen_ai.tool.call.id": span.attributes["gen_ai.tool.call.id"],
        "gen_ai.tool.type": "function",
        "meowgent.tool.result_kind": "ok",
    }
    assert str(span.attributes["gen_ai.tool.call.id"]).startswith("mcp_")
    assert 0 <= span.attributes["meowgent.tool.run_seconds"] < 5
    # The caller's span holds the served one in time.
    assert asked.start_time <= span.start_time <= span.end_time <= asked.end_time


def test_a_served_call_whose_client_sent_no_context_starts_its_own_trace(server_traced):
    server, served = server_traced
    served.clear()

    async def main():
        async with client(server) as mcp:
            return await mcp.call_tool("shout", {"text": "hi"})

    answer = asyncio.run(main())
    assert answer.content[0].text == "HI"
    # McpToolbox outside a traced run sends none either.
    with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
        assert box["nb_shout"].run({"text": "ho"}) == "HO"
    first, second = served.get_finished_spans()
    assert [first.name, second.name] == ["execute_tool shout", "execute_tool shout"]
    assert (first.parent, second.parent) == (None, None)
    assert first.context.trace_id != second.context.trace_id


def test_tools_serve_traces_its_calls_while_the_notebook_traces_its_runs(ip):
    from IPython.utils.capture import capture_output

    provider, served = traced()
    ip.meowgent.tracer_provider = provider  # what %agent trace on sets (there: over OTLP/HTTP)
    ip.user_ns["t_shout"] = shout
    with capture_output():
        ip.run_line_magic("tools", "serve")
    server = ip.meowgent.served
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            assert box["nb_shout"].run({"text": "on"}) == "ON"
            ip.meowgent.tracer_provider = None  # %agent trace off: from the next cell on
            ip.run_cell("pass")
            assert box["nb_shout"].run({"text": "off"}) == "OFF"
    finally:
        with capture_output():
            ip.run_line_magic("tools", "serve --stop")
    assert [span.name for span in served.get_finished_spans()] == ["execute_tool shout"]
