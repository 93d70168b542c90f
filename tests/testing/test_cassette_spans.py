"""A cassette read back as its model turns (`recording.read_turns`) and turned into the spans a
traced run makes (`testing.cassette_spans`), read with the SDK's in-memory exporter, from the
course's own cassettes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from meowgent_nb.recording import CassetteError, read_turns
from meowgent_nb.testing import cassette_spans
from tests.support.otel import exporter, provider  # noqa: F401 - fixtures

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
REAL_MODEL = NOTEBOOKS / "05_real_model.cassette.json"
WORKSPACE = NOTEBOOKS / "08_notebook_workspace.cassette.json"


def runs(exporter: InMemorySpanExporter) -> list[list[ReadableSpan]]:
    """Each run's spans, runs in order, each run's spans in the order they began."""
    spans = exporter.get_finished_spans()
    roots = sorted((s for s in spans if s.parent is None), key=lambda s: s.start_time or 0)
    return [
        sorted(
            (s for s in spans if s.context.trace_id == root.context.trace_id),
            key=lambda s: (s.start_time or 0, s.parent is not None),
        )
        for root in roots
    ]


def test_the_real_model_notebooks_cassette_reads_back_as_its_turns_and_runs():
    turns = read_turns(REAL_MODEL)
    assert [(t.line, t.starts_run, [(c.name, c.arguments) for c in t.calls]) for t in turns] == [
        (3, True, [("get_weather", {"city": "Paris"})]),  # line 1: the protocol the model chose
        (18, False, []),
        (44, True, []),
        (
            70,
            True,
            [
                ("get_weather", {"city": "Paris", "unit": "celsius"}),
                ("get_weather", {"city": "Oslo", "unit": "fahrenheit"}),
            ],
        ),  # decide's list of calls, in a fence
        (88, False, []),
        (125, True, []),  # the json protocol's answer object is not a call
    ]
    assert turns[0].model == "qwen2.5:0.5b" and turns[0].offered == ("get_weather", "add")
    assert turns[0].usage is not None and (
        turns[0].usage.prompt_tokens,
        turns[0].usage.completion_tokens,
    ) == (
        212,
        18,
    )
    assert turns[5].text == '{"answer": "6.5"}'
    assert [t.finish_reason for t in turns] == ["stop"] * 6


def test_the_real_model_notebooks_cassette_gives_each_run_its_spans(provider, exporter):
    assert cassette_spans(REAL_MODEL, provider) == 4
    assert Counter(span.name for span in exporter.get_finished_spans()) == {
        "invoke_agent meowgent": 4,
        "chat qwen2.5:0.5b": 6,
        "execute_tool get_weather": 3,
    }
    assert [[span.name for span in run] for run in runs(exporter)] == [
        ["invoke_agent meowgent", "chat qwen2.5:0.5b", "execute_tool get_weather", "chat qwen2.5:0.5b"],
        ["invoke_agent meowgent", "chat qwen2.5:0.5b"],
        [
            "invoke_agent meowgent",
            "chat qwen2.5:0.5b",
            "execute_tool get_weather",
            "execute_tool get_weather",
            "chat qwen2.5:0.5b",
        ],
        ["invoke_agent meowgent", "chat qwen2.5:0.5b"],
    ]
    first = runs(exporter)[0]
    run, chat, call, answer = first
    assert all(span.parent is not None and span.parent.span_id == run.context.span_id for span in first[1:])
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "meowgent",
        "gen_ai.provider.name": "cassette",
        "gen_ai.request.model": "qwen2.5:0.5b",
        "gen_ai.conversation.id": "05_real_model.cassette.json#1",
        "meowgent.tools.offered": 2,
        "meowgent.turns": 2,
        "meowgent.stopped": "answer",
        "gen_ai.usage.input_tokens": 212 + 276,
        "gen_ai.usage.output_tokens": 18 + 10,
    }
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "cassette",
        "gen_ai.request.model": "qwen2.5:0.5b",
        "meowgent.turn": 1,
        "gen_ai.usage.input_tokens": 212,
        "gen_ai.usage.output_tokens": 18,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    assert dict(call.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
    }
    assert [link.context.span_id for link in call.links] == [chat.context.span_id]
    assert answer.attributes is not None and answer.attributes["meowgent.turn"] == 2


def test_a_recorded_decision_is_on_its_calls_span(provider, exporter):
    assert cassette_spans(WORKSPACE, provider) == 6
    calls = [span for span in exporter.get_finished_spans() if span.name == "execute_tool run_code"]
    decided = [
        {k: v for k, v in (span.attributes or {}).items() if k.startswith("meowgent.approval.")}
        for span in sorted(calls, key=lambda span: span.start_time or 0)
    ]
    assert decided == [
        {
            "meowgent.approval.decision": "approved",
            "meowgent.approval.decided_by": "replay",
            "meowgent.approval.decider": "rule 2 (run_code risk=read-only), when the cassette was recorded",
            "meowgent.approval.reason": "approved by rule 2 (run_code risk=read-only), when the cassette was recorded",
        },
        {
            "meowgent.approval.decision": "edited",
            "meowgent.approval.decided_by": "replay",
            "meowgent.approval.decider": "you (edited), when the cassette was recorded",
            "meowgent.approval.reason": "approved by you (edited), when the cassette was recorded",
        },
        {
            "meowgent.approval.decision": "approved",
            "meowgent.approval.decided_by": "replay",
            "meowgent.approval.decider": "you, when the cassette was recorded",
            "meowgent.approval.reason": "approved by you, when the cassette was recorded",
        },
    ]


def test_a_file_that_is_not_a_cassette_says_which_line(tmp_path, provider, exporter):
    bad = tmp_path / "bad.cassette.json"
    bad.write_text("[1]\n")
    with pytest.raises(CassetteError) as caught:
        cassette_spans(bad, provider)
    assert str(caught.value) == (
        f"Cassette {bad}, line 1: expected a JSON object per request, found an array."
        " Fix that line, or delete the file and record again."
    )
    assert exporter.get_finished_spans() == ()
