"""``python -m meowgent_nb trace CASSETTE [--otlp URL | --json FILE]``, as a terminal user types it,
on the course's real-model cassette: a tree, OTLP JSON lines, a real local HTTP server reading the
OTLP/HTTP protobuf body as a collector does."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.test_course_command import ROOT, command

CASSETTE = "notebooks/05_real_model.cassette.json"
NAMES = {"invoke_agent meowgent": 4, "chat qwen2.5:0.5b": 6, "execute_tool get_weather": 3}


def test_trace_prints_a_cassettes_runs_as_a_tree_of_spans():
    done = command("trace", CASSETTE, cwd=ROOT)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        f"{CASSETTE}: 4 runs, 13 spans:",
        "invoke_agent meowgent",
        "  chat qwen2.5:0.5b",
        "  execute_tool get_weather",
        "  chat qwen2.5:0.5b",
        "invoke_agent meowgent",
        "  chat qwen2.5:0.5b",
        "invoke_agent meowgent",
        "  chat qwen2.5:0.5b",
        "  execute_tool get_weather",
        "  execute_tool get_weather",
        "  chat qwen2.5:0.5b",
        "invoke_agent meowgent",
        "  chat qwen2.5:0.5b",
    ]


def test_a_cassettes_names_reach_the_terminal_with_their_control_characters_escaped(tmp_path):
    # A cassette from someone else names the tools its model called: "\x1b[2J" would clear the
    # person's terminal, U+202E reverse what follows.
    from meowgent_nb import Agent, ScriptedModel, tool
    from meowgent_nb.recording import RecordingModel

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    hostile = tmp_path / "hostile.cassette.json"
    answer = '<tool_call>{"name": "wipe\x1b[2Jall\u202e", "arguments": {}}</tool_call>'
    Agent(RecordingModel(ScriptedModel([answer, "Done."]), hostile), tools=[add]).run("hi")
    done = command("trace", str(hostile), cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout
    assert done.stdout.splitlines()[1:] == [
        "invoke_agent meowgent",
        "  chat scripted",
        "  execute_tool wipe\\x1b[2Jall\\u202e",
        "  chat scripted",
    ]


def test_trace_json_writes_otlp_json_lines(tmp_path):
    (tmp_path / "old.jsonl").write_text("a line of an earlier run\n")
    done = command("trace", str(ROOT / CASSETTE), "--json", "old.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{ROOT / CASSETTE}: 4 runs, 13 spans, written to old.jsonl as OTLP JSON lines.\n"
    lines = [json.loads(line) for line in (tmp_path / "old.jsonl").read_text().splitlines()]
    assert len(lines) == 13  # one export per span, as each ended
    spans = [
        (resource, span)
        for line in lines
        for resource in line["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert Counter(span["name"] for _, span in spans) == NAMES
    resource, first = spans[0]
    assert {"key": "service.name", "value": {"stringValue": "meowgent_nb"}} in resource["resource"][
        "attributes"
    ]
    assert len(first["traceId"]) == 32 and len(first["spanId"]) == 16 and len(first["parentSpanId"]) == 16
    int(first["traceId"], 16)  # hex, as OTLP JSON writes ids
    assert first["name"] == "execute_tool get_weather" and first["kind"] == 1  # SPAN_KIND_INTERNAL
    assert {"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}} in first["attributes"]


def test_trace_otlp_sends_the_spans_to_a_collector(httpserver):
    httpserver.expect_request("/v1/traces", method="POST").respond_with_data(
        b"", content_type="application/x-protobuf"
    )
    url = httpserver.url_for("/v1/traces")
    done = command("trace", CASSETTE, "--otlp", url, cwd=ROOT)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{CASSETTE}: 4 runs, 13 spans, sent over OTLP/HTTP to {url}.\n"
    names: Counter[str] = Counter()
    for request, _ in httpserver.log:
        body = ExportTraceServiceRequest.FromString(request.get_data())
        names.update(s.name for r in body.resource_spans for scope in r.scope_spans for s in scope.spans)
    assert names == NAMES


def test_trace_of_a_missing_cassette_says_so_and_fails(tmp_path):
    done = command("trace", "nowhere.cassette.json", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "Cannot read the cassette nowhere.cassette.json: No such file or directory.\n"


def test_trace_has_its_help_and_takes_one_place_for_the_spans():
    helped = command("trace", "--help", cwd=ROOT)
    assert helped.returncode == 0
    assert helped.stdout.startswith(
        "usage: python -m meowgent_nb trace [-h] [--otlp URL | --json FILE] cassette\n"
    )
    both = command("trace", CASSETTE, "--otlp", "http://127.0.0.1:9/v1/traces", "--json", "x.jsonl", cwd=ROOT)
    assert both.returncode == 2
    assert both.stderr.splitlines()[-1] == (
        "python -m meowgent_nb trace: error: argument --json: not allowed with argument --otlp"
    )
    assert not Path(ROOT / "x.jsonl").exists()
