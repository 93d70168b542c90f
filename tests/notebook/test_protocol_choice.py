"""The protocol a ``%%agent`` cell uses when none is chosen, said in its model line and kept in its cassette.

A real IPython shell; Ollama is a real local HTTP server answering ``/api/show`` with real models'
answers (tests/support/ollama_show/) and ``/api/chat`` in its wire format.
"""

from __future__ import annotations

import json
import re

import pytest
from IPython.utils.capture import capture_output

import meowgent_nb.models
from tests.support.ollama_wire import FINAL, ndjson, part, real_show


@pytest.fixture(autouse=True)
def _settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEOWGENT_MODEL", "MEOWGENT_CASSETTE", "MEOWGENT_CASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)


@pytest.fixture(autouse=True)
def _a_tool(ip) -> None:
    ip.run_cell(
        'from meowgent_nb import tool\n@tool\ndef add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a + b\n'
    )


def serve(httpserver, family: str, monkeypatch) -> tuple[str, list[dict]]:
    """An Ollama with one model whose /api/show is ``family``'s; returns its address and the chat bodies."""
    from werkzeug.wrappers import Response

    bodies: list[dict] = []

    def chat(request):
        bodies.append(json.loads(request.data))
        return Response(ndjson(part("Hello."), FINAL), content_type="application/x-ndjson")

    httpserver.expect_request("/api/show", method="POST").respond_with_json(real_show(family))
    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(chat)
    host = f"http://{httpserver.host}:{httpserver.port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host, bodies


def model_line(ip, line: str) -> str:
    """The model line of the transcript a ``%%agent`` cell with this line displays last."""
    with capture_output() as out:
        ip.run_cell_magic("agent", line, "Hi")
    found = [
        re.search(r'<span class="meowgent-model">(.*?)</span>', shown.data.get("text/html", ""))
        for shown in out.outputs
    ]
    return [match.group(1) for match in found if match][-1]


def test_qwen3_gets_native_tool_calls_with_no_flag_and_says_why(ip, httpserver, monkeypatch):
    host, bodies = serve(httpserver, "qwen3", monkeypatch)
    assert model_line(ip, "-m ollama:qwen3:0.6b") == (
        f"qwen3:0.6b via Ollama at {host}, native tool calls (the model&#x27;s template has tools)"
    )
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["add"]


def test_a_model_without_tools_gets_xml_and_says_why(ip, httpserver, monkeypatch):
    host, bodies = serve(httpserver, "gemma3", monkeypatch)
    assert model_line(ip, "-m ollama:gemma3:4b") == (
        f"gemma3:4b via Ollama at {host}, xml tool calls (the model&#x27;s template has no tools)"
    )
    assert not bodies[0].get("tools") and "<tools>" in bodies[0]["messages"][0]["content"]


@pytest.mark.parametrize("chosen", ["--protocol xml", "config"])
def test_a_chosen_protocol_wins_says_nothing_and_asks_nothing(ip, httpserver, monkeypatch, chosen):
    host, bodies = serve(httpserver, "qwen3", monkeypatch)
    if chosen == "config":
        ip.run_line_magic("config", 'AgentMagics.protocol = "xml"')
        chosen = ""
    assert model_line(ip, f"-m ollama:qwen3:0.6b {chosen}") == f"qwen3:0.6b via Ollama at {host}"
    assert not bodies[0].get("tools")
    assert [request.path for request, _ in httpserver.log] == ["/api/chat"]


def test_a_cassette_keeps_the_choice_and_its_replay_asks_no_server(ip, httpserver, monkeypatch, tmp_path):
    host, _ = serve(httpserver, "qwen3", monkeypatch)
    cassette = tmp_path / "qwen3.cassette.json"
    recorded = model_line(ip, f"-m ollama:qwen3:0.6b --record {cassette}")
    said = "native tool calls (the model&#x27;s template has tools)"
    assert recorded == f"qwen3:0.6b via Ollama at {host}, recorded to {cassette}, {said}"
    entries = cassette.read_text()
    assert (
        '{"support": "native", "model": "ollama:qwen3:0.6b", "why": "the model\'s template has tools"}'
        in entries
    )
    httpserver.clear()  # no server: the replay must not ask one
    replayed = model_line(ip, f"-m ollama:qwen3:0.6b --new --replay {cassette}")
    assert replayed == f"cassette replay of ollama:qwen3:0.6b ({cassette}), {said}"
    assert httpserver.log == []


def test_a_cassette_recorded_with_xml_before_models_were_asked_replays_as_xml(
    ip, httpserver, monkeypatch, tmp_path
):
    serve(httpserver, "qwen3", monkeypatch)
    cassette = tmp_path / "old.cassette.json"
    model_line(ip, f"-m ollama:qwen3:0.6b --protocol xml --record {cassette}")  # as every cell did before
    assert '"support"' not in cassette.read_text()
    httpserver.clear()
    assert model_line(ip, f"-m ollama:qwen3:0.6b --new --replay {cassette}") == (
        f"cassette replay of ollama:qwen3:0.6b ({cassette})"
    )
    ip.run_line_magic("config", 'AgentMagics.cassette_mode = "auto"')  # could record what is missing
    assert model_line(ip, f"-m ollama:qwen3:0.6b --new --cassette {cassette}") == (
        f"cassette replay of ollama:qwen3:0.6b ({cassette}), recording what is missing"
    )
    assert httpserver.log == []


def test_a_server_that_refuses_tools_is_said_once_and_later_cells_say_xml(ip, httpserver, monkeypatch):
    from tests.models.test_tool_support import VLLM_REFUSAL, serve_openai

    serve_openai(httpserver, VLLM_REFUSAL)
    monkeypatch.setenv("OPENAI_BASE_URL", httpserver.url_for("/v1"))
    with capture_output() as out:
        ip.run_cell_magic("agent", "-m openai:m", "Hi")
    refused = "xml tool calls (the server refuses tools: " + VLLM_REFUSAL["message"] + ")"
    assert out.stdout == f"Switched to {refused}.\n"
    later = model_line(ip, "-m openai:m")
    assert later.endswith(", " + refused.replace('"', "&quot;"))
