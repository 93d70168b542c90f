"""A run as OpenTelemetry GenAI spans (`agent.tracing`), read with the SDK's in-memory exporter.

The model is scripted (it is not what is tested) except for the cut stream, which a real local
HTTP server cuts in front of the real ``openai`` client as tests/agent/test_model_retry.py does.
Names, parent links and attributes are checked exactly; times only within what the test waited.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import meowgent_nb.models
from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.agent.approvals import PERSON_DECIDED, ApprovalRequest, Approved, Decision, Denied
from meowgent_nb.models import OpenAIModel
from tests.agent.test_model_retry import ANSWER, CUT, CUT_WORDS, MODEL, answer_next
from tests.support.otel import exporter, provider  # noqa: F401 - fixtures

SECRET = "sk-live-0123456789abcdef"


def spans(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def attributes(span: ReadableSpan, *timed: str) -> dict:
    """The span's attributes, without those that are times (checked apart)."""
    return {k: v for k, v in (span.attributes or {}).items() if k not in timed}


def seconds(span: ReadableSpan) -> float:
    assert span.start_time is not None and span.end_time is not None
    return (span.end_time - span.start_time) / 1e9


def under(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None
    return (
        child.parent.span_id == parent.context.span_id and child.context.trace_id == parent.context.trace_id
    )


@tool
def slow(seconds: float) -> str:
    """Wait, then say so."""
    time.sleep(seconds)
    return f"waited {seconds}"


@tool(
    approval=True, facts={"risk": lambda values: "destructive" if values["path"].startswith("/") else "local"}
)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def call(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def test_two_parallel_calls_are_two_overlapping_execute_tool_spans_under_one_run(provider, exporter):
    model = ScriptedModel([call("slow", seconds=0.3) + call("slow", seconds=0.3), "Both waited."])
    agent = Agent(model, tools=[slow], tracer_provider=provider)
    assert agent.run("Wait twice.").text == "Both waited."

    found = spans(exporter)
    assert sorted(found) == ["chat scripted", "execute_tool slow", "invoke_agent meowgent"]
    [run] = found["invoke_agent meowgent"]
    assert run.parent is None
    assert attributes(run) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "meowgent",
        "gen_ai.provider.name": "ScriptedModel",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": agent.conversation_id,
        "meowgent.tools.offered": 1,
        "meowgent.turns": 2,
        "meowgent.stopped": "answer",
        "gen_ai.usage.output_tokens": 11,
    }
    first, second = found["chat scripted"]
    for turn, chat, tokens in ((1, first, 9), (2, second, 2)):
        assert under(chat, run)
        ttft = chat.attributes["gen_ai.response.time_to_first_chunk"]
        assert 0 <= ttft <= seconds(chat)
        assert attributes(chat, "gen_ai.response.time_to_first_chunk") == {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "ScriptedModel",
            "gen_ai.request.model": "scripted",
            "meowgent.turn": turn,
            "gen_ai.usage.output_tokens": tokens,
            "gen_ai.response.finish_reasons": ("stop",),
        }
    one, two = sorted(found["execute_tool slow"], key=lambda s: s.attributes["gen_ai.tool.call.id"])
    for span, call_id in ((one, "call_1"), (two, "call_2")):
        assert under(span, run)
        assert [link.context.span_id for link in span.links] == [first.context.span_id]
        assert span.status.status_code is StatusCode.UNSET
        assert 0.3 <= span.attributes["meowgent.tool.run_seconds"] <= seconds(span)
        assert attributes(span, "meowgent.tool.run_seconds") == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "slow",
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "meowgent.tool.result_kind": "ok",
        }
        assert 0.3 <= seconds(span) < 0.55  # one after the other, the second would take 0.6 s
    assert one.start_time < two.end_time and two.start_time < one.end_time  # overlapping
    assert first.end_time <= min(one.start_time, two.start_time)  # the request ended before the calls
    assert max(one.end_time, two.end_time) <= second.start_time <= run.end_time


class Person:
    """An approver that takes ``wait`` seconds, as a person does, then approves ``allow`` and
    denies the rest, saying why."""

    def __init__(self, wait: float, allow: str):
        self.wait, self.allow = wait, allow
        self.asked: list[str] = []

    async def approve(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        self.asked += [request.arguments["path"] for request in requests]
        await asyncio.sleep(self.wait)
        return [
            Approved("approved by you", by=PERSON_DECIDED)
            if request.arguments["path"] == self.allow
            else Denied("keep the system files", "by you", PERSON_DECIDED)
            for request in requests
        ]


def test_an_approved_and_a_denied_call_carry_who_decided_and_how_long_the_person_took(provider, exporter):
    model = ScriptedModel([call("delete", path="notes.txt") + call("delete", path="/etc/hosts"), "Done."])
    person = Person(0.25, allow="notes.txt")
    agent = Agent(model, tools=[delete], approver=person, tracer_provider=provider)
    started = time.perf_counter()
    agent.run("Delete both.")
    waited = time.perf_counter() - started
    assert person.asked == ["notes.txt", "/etc/hosts"]

    found = spans(exporter)
    [run] = found["invoke_agent meowgent"]
    approved, denied = sorted(found["execute_tool delete"], key=lambda s: s.attributes["gen_ai.tool.call.id"])
    for span in (approved, denied):
        assert under(span, run)
        assert 0.25 <= span.attributes["meowgent.approval.wait_seconds"] <= waited
        assert span.attributes["meowgent.approval.wait_seconds"] <= seconds(span)
    assert attributes(approved, "meowgent.approval.wait_seconds", "meowgent.tool.run_seconds") == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "delete",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "meowgent.approval.decision": "approved",
        "meowgent.approval.decided_by": "person",
        "meowgent.approval.decider": "you",
        "meowgent.approval.reason": "approved by you",
        "meowgent.tool.risk": "local",
        "meowgent.tool.result_kind": "ok",
    }
    assert approved.status.status_code is StatusCode.UNSET
    assert attributes(denied, "meowgent.approval.wait_seconds") == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "delete",
        "gen_ai.tool.call.id": "call_2",
        "gen_ai.tool.type": "function",
        "meowgent.approval.decision": "denied",
        "meowgent.approval.decided_by": "person",
        "meowgent.approval.decider": "you",
        "meowgent.approval.reason": "keep the system files",
        "meowgent.tool.risk": "destructive",
        "meowgent.tool.result_kind": "denied",
        "error.type": "denied",
    }
    assert denied.status.status_code is StatusCode.ERROR


def test_a_rules_decision_names_the_rule_and_waits_for_no_one(provider, exporter):
    model = ScriptedModel([call("delete", path="scratch/a.txt") + call("delete", path="/etc/hosts"), "Done."])
    rules = ["delete path=scratch/** -> allow", "delete risk=destructive -> deny"]
    agent = Agent(model, tools=[delete], rules=rules, tracer_provider=provider)
    agent.run("Clean up.")

    allowed, denied = sorted(
        spans(exporter)["execute_tool delete"], key=lambda s: s.attributes["gen_ai.tool.call.id"]
    )
    assert attributes(allowed, "meowgent.tool.run_seconds") == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "delete",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "meowgent.approval.decision": "approved",
        "meowgent.approval.decided_by": "rule",
        "meowgent.approval.decider": "rule 1 (delete path=scratch/**)",
        "meowgent.approval.reason": "allowed by rule 1 (delete path=scratch/**)",
        "meowgent.approval.rule": 1,
        "meowgent.tool.risk": "local",
        "meowgent.tool.result_kind": "ok",
    }
    assert attributes(denied) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "delete",
        "gen_ai.tool.call.id": "call_2",
        "gen_ai.tool.type": "function",
        "meowgent.approval.decision": "denied",
        "meowgent.approval.decided_by": "rule",
        "meowgent.approval.decider": "rule 2 (delete risk=destructive)",
        "meowgent.approval.reason": "rule 2 (delete risk=destructive) denies this call.",
        "meowgent.approval.rule": 2,
        "meowgent.tool.risk": "destructive",
        "meowgent.tool.result_kind": "denied",
        "error.type": "denied",
    }


def test_an_unknown_tools_call_still_has_its_span(provider, exporter):
    agent = Agent(ScriptedModel([call("nope"), "Sorry."]), tools=[slow], tracer_provider=provider)
    agent.run("Go.")
    [span] = spans(exporter)["execute_tool nope"]
    assert attributes(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "nope",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "meowgent.tool.result_kind": "unknown_tool",
        "error.type": "unknown_tool",
    }
    assert span.status.status_code is StatusCode.ERROR


PAGE = "lorem ipsum dolor sit amet " * 60


@tool
def fetch(page: int) -> str:
    """Fetch a page of a long document."""
    return f"page {page}: {PAGE}"


def test_a_compaction_is_an_event_of_the_runs_span(provider, exporter):
    model = ScriptedModel([a for i in range(2) for a in (call("fetch", page=i), f"Page {i} read.")])
    model.n_ctx = 1024
    agent = Agent(model, tools=[fetch], tracer_provider=provider)
    for i in range(2):
        agent.run(f"Read page {i}")

    runs = spans(exporter)["invoke_agent meowgent"]
    assert [[event.name for event in run.events] for run in runs] == [[], ["meowgent.context.compacted"]]
    [event] = runs[1].events
    assert dict(event.attributes) == {
        "meowgent.turn": 2,
        "meowgent.context.shortened": 2,
        "meowgent.context.left_out": 1,
        "meowgent.context.tokens_before": 1114,
        "meowgent.context.tokens_after": 368,
        "meowgent.context.window": 1024,
    }
    assert runs[1].start_time <= event.timestamp <= runs[1].end_time
    chats = [chat for chat in spans(exporter)["chat scripted"] if under(chat, runs[1])]
    assert [chat.attributes["meowgent.turn"] for chat in chats] == [1, 2]
    assert chats[0].end_time <= event.timestamp <= chats[1].start_time  # the second request was made smaller
    assert {run.attributes["gen_ai.conversation.id"] for run in runs} == {agent.conversation_id}


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_a_cut_stream_asked_again_is_one_chat_span_with_a_retry_event(
    httpserver, allow_requests, provider, exporter
):
    answer_next(httpserver, CUT)
    answer_next(httpserver, ANSWER)
    model = OpenAIModel(MODEL, base_url=f"http://{httpserver.host}:{httpserver.port}/v1")
    agent = Agent(model, retry_delay=0.01, tracer_provider=provider)
    assert agent.run("Hi").text == "Hello there."

    found = spans(exporter)
    assert sorted(found) == [f"chat {MODEL}", "invoke_agent meowgent"]
    [chat] = found[f"chat {MODEL}"]
    assert attributes(chat, "gen_ai.response.time_to_first_chunk") == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": MODEL,
        "meowgent.turn": 1,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    [retry] = chat.events
    assert retry.name == "meowgent.model.retry"
    assert 0.005 <= retry.attributes["meowgent.retry.wait_seconds"] <= 0.015
    assert {k: v for k, v in retry.attributes.items() if k != "meowgent.retry.wait_seconds"} == {
        "meowgent.retry.attempt": 2,
        "meowgent.retry.attempts": 8,
        "meowgent.retry.cause": CUT_WORDS,
    }
    assert chat.start_time <= retry.timestamp <= chat.end_time
    # The first token is the answer's that stood: after the retry.
    assert (
        chat.start_time + chat.attributes["gen_ai.response.time_to_first_chunk"] * 1e9
        >= retry.timestamp - 1e6
    )


@tool
def read_key() -> str:
    """Read the API key."""
    return f"the key is {SECRET}"


def all_text(exporter: InMemorySpanExporter) -> str:
    return "\n".join(span.to_json() for span in exporter.get_finished_spans())


def test_content_goes_in_only_when_asked_and_then_masked(provider, exporter, monkeypatch):
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    script = [call("read_key"), f"It is {SECRET}."]
    Agent(ScriptedModel(script), tools=[read_key], tracer_provider=provider).run("What is the key?")
    assert "gen_ai.tool.call.result" not in all_text(exporter)
    assert "What is the key?" not in all_text(exporter)
    exporter.clear()

    agent = Agent(
        ScriptedModel(script),
        tools=[read_key],
        tracer_provider=provider,
        trace_content=True,
        trace_mask=[r"sk-live-\w+"],
    )
    agent.run("What is the key?")
    assert SECRET not in all_text(exporter)
    found = spans(exporter)
    [span] = found["execute_tool read_key"]
    assert span.attributes["gen_ai.tool.call.result"] == "the key is ***"
    assert span.attributes["gen_ai.tool.call.arguments"] == "{}"
    [run] = found["invoke_agent meowgent"]
    assert json.loads(run.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is the key?"}]}
    ]
    assert json.loads(run.attributes["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "It is ***."}]}
    ]
    first, _ = found["chat scripted"]
    assert json.loads(first.attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_1", "name": "read_key", "arguments": {}}],
        }
    ]


def test_the_conventions_environment_variable_turns_content_on(provider, exporter, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "True")
    Agent(ScriptedModel([call("read_key"), "Done."]), tools=[read_key], tracer_provider=provider).run("Key?")
    [span] = spans(exporter)["execute_tool read_key"]
    assert span.attributes["gen_ai.tool.call.result"] == f"the key is {SECRET}"  # no mask was given


def test_without_a_provider_nothing_of_opentelemetry_is_imported_and_a_global_one_is_used():
    script = """
import sys
from meowgent_nb import Agent, ScriptedModel, tool

@tool
def add(a: int, b: int) -> int:
    "Add."
    return a + b

def run():
    model = ScriptedModel(['<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>', "5"])
    return Agent(model, tools=[add]).run("2 + 3?").text

print(run(), sorted(m for m in sys.modules if m.startswith("opentelemetry")))
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
print(run(), "no provider set:", InMemorySpanExporter().get_finished_spans())
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
print(run(), [span.name for span in exporter.get_finished_spans()])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "5 []",
        "5 no provider set: ()",
        "5 ['execute_tool add', 'chat scripted', 'chat scripted', 'invoke_agent meowgent']",
    ]


def test_a_run_that_fails_ends_its_open_spans_with_the_errors_class(provider, exporter):
    agent = Agent(ScriptedModel([call("slow", seconds=0.0)]), tools=[slow], tracer_provider=provider)
    with pytest.raises(meowgent_nb.models.ModelError):
        agent.run("Wait, then answer.")  # the script has no second answer

    found = spans(exporter)
    assert sorted(found) == ["chat scripted", "execute_tool slow", "invoke_agent meowgent"]
    [run] = found["invoke_agent meowgent"]
    first, second = found["chat scripted"]
    assert [span.status.status_code for span in (first, second, run)] == [
        StatusCode.UNSET,
        StatusCode.ERROR,
        StatusCode.ERROR,
    ]
    assert second.attributes["error.type"] == run.attributes["error.type"] == "ModelError"
    assert run.status.description.startswith("ScriptedModel 'scripted' has no answer left")
    assert under(second, run) and "meowgent.turns" not in run.attributes
