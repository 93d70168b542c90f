"""Which protocol a model gets when none is chosen: what its Ollama server says of its template.

A real local HTTP server answers ``/api/show`` with real models' answers
(tests/support/ollama_show/) and ``/api/chat`` in Ollama's wire format, in front of the real
``ollama`` client.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import meowgent_nb.models
from meowgent_nb import Agent, tool
from meowgent_nb.models import OllamaModel, ToolSupport
from meowgent_nb.models.wire_values import template_opens_thinking
from tests.support.ollama_wire import FINAL, ndjson, part, real_show

NATIVE = "the model's template has tools"
NO_TOOLS = "the model's template has no tools"


@pytest.fixture
def allow_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", True)


def serve(httpserver, shown: dict, answer: str = "Hello.") -> list[dict]:
    """/api/show answers ``shown``; /api/chat answers ``answer``. Returns the chat bodies."""
    from werkzeug.wrappers import Response

    bodies: list[dict] = []

    def chat(request):
        bodies.append(json.loads(request.data))
        return Response(ndjson(part(answer), FINAL), content_type="application/x-ndjson")

    httpserver.expect_request("/api/show", method="POST").respond_with_json(shown)
    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(chat)
    return bodies


@pytest.mark.parametrize(
    ("family", "name", "support"),
    [
        ("qwen3", "qwen3:0.6b", ToolSupport("native", NATIVE)),
        ("llama3.2", "llama3.2:3b", ToolSupport("native", NATIVE)),
        ("granite4", "granite4:micro", ToolSupport("native", NATIVE)),
        ("gemma3", "gemma3:4b", ToolSupport("xml", NO_TOOLS)),
    ],
)
def test_a_model_whose_template_has_tools_gets_native_and_one_without_xml(
    httpserver, allow_requests, family, name, support
):
    serve(httpserver, real_show(family))
    model = OllamaModel(name, host=httpserver.url_for("/").rstrip("/"))
    assert asyncio.run(model.tool_support()) == support
    asyncio.run(model.accepts_images())  # the images work reads the same answer
    shows = [json.loads(request.data) for request, _ in httpserver.log if request.path == "/api/show"]
    assert shows == [{"model": name}]  # asked once per model


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_an_agent_left_to_choose_sends_qwen3_its_tools_natively_and_gemma3_them_as_xml(
    httpserver, allow_requests
):
    host = httpserver.url_for("/").rstrip("/")
    sent = {}
    for family, name in (("qwen3", "qwen3:0.6b"), ("gemma3", "gemma3:4b")):
        httpserver.clear()
        bodies = serve(httpserver, real_show(family))
        agent = Agent(OllamaModel(name, host=host), tools=[add])
        assert agent.protocol == "xml"  # until the model is asked, at the first run
        assert agent.run("Hi").text == "Hello."
        sent[name] = (agent.protocol, [t["function"]["name"] for t in bodies[0].get("tools") or []])
    assert sent == {"qwen3:0.6b": ("native", ["add"]), "gemma3:4b": ("xml", [])}


def test_a_chosen_protocol_wins_and_the_server_is_not_asked(httpserver, allow_requests):
    serve(httpserver, real_show("gemma3"))
    model = OllamaModel("qwen3:0.6b", host=httpserver.url_for("/").rstrip("/"))
    agent = Agent(model, tools=[add], protocol="native")
    assert (agent.run("Hi").text, agent.protocol, agent.tool_support) == ("Hello.", "native", None)
    assert [request.path for request, _ in httpserver.log] == ["/api/chat"]


def test_an_agent_with_no_tools_to_offer_asks_nothing(httpserver, allow_requests):
    serve(httpserver, real_show("qwen3"))
    agent = Agent(OllamaModel("qwen3:0.6b", host=httpserver.url_for("/").rstrip("/")))
    assert (agent.run("Hi").text, agent.protocol, agent.tool_support) == ("Hello.", "xml", None)
    assert [request.path for request, _ in httpserver.log] == ["/api/chat"]


def test_a_server_that_cannot_be_asked_means_xml_which_any_model_reads(allow_requests):
    model = OllamaModel("qwen3:0.6b", host="http://127.0.0.1:9")
    assert asyncio.run(model.tool_support()) == ToolSupport(
        "xml", "Ollama did not say what the model's template has"
    )


# --- a template that opens thinking ------------------------------------------------------------------

THINKING_2507 = (
    "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n<think>\\n' }}\n{%- endif %}\n"
)
"""The generation prompt of Qwen3-4B-Thinking-2507's chat template (tokenizer_config.json)."""
HYBRID = (
    "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n"
    "    {%- if enable_thinking is defined and enable_thinking is false %}\n"
    "        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}\n{%- endif %}"
)
"""Qwen3's (hybrid) chat template's: thinking switched off pre-fills an empty block."""


@pytest.mark.parametrize(
    ("template", "opens"),
    [
        (THINKING_2507, True),
        ("<|im_start|>assistant\n<think>\n", True),  # the generation prompt it renders
        ("{{'<｜Assistant｜><think>\\n'}}", True),  # DeepSeek-R1's
        (HYBRID, False),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),  # rendered with thinking off
        ("<|im_start|>assistant\n", False),
        ("", False),
    ],
)
def test_a_template_opens_thinking_when_it_writes_an_unclosed_think_after_the_assistant_header(
    template, opens
):
    assert template_opens_thinking(template) is opens


def test_a_thinking_model_whose_template_opens_thinking_has_its_answer_read_as_thinking_first(
    httpserver, allow_requests
):
    shown = {**real_show("gemma3"), "capabilities": ["completion", "thinking"], "template": THINKING_2507}
    serve(httpserver, shown, answer="The user says hi.\n</think>\n\nHello.")
    agent = Agent(OllamaModel("thinker", host=httpserver.url_for("/").rstrip("/")), tools=[add])
    result = agent.run("Hi")
    assert agent.tool_support == ToolSupport("xml", NO_TOOLS, thinking_first=True)
    assert (result.text, agent.messages[-1].get("thinking")) == ("Hello.", "The user says hi.")


def test_a_bare_name_is_looked_up_once_and_the_answer_says_its_protocol_too(
    httpserver, allow_requests, monkeypatch
):
    from meowgent_nb.models.resolve import resolve_model

    httpserver.expect_request("/api/version", method="GET").respond_with_json({"version": "0.12.6"})
    bodies = serve(httpserver, real_show("qwen3"))
    monkeypatch.setenv("OLLAMA_HOST", httpserver.url_for("/").rstrip("/"))
    agent = Agent(resolve_model("qwen3:0.6b"), tools=[add])
    assert (agent.run("Hi").text, agent.protocol) == ("Hello.", "native")
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["add"]
    assert [request.path for request, _ in httpserver.log] == ["/api/version", "/api/show", "/api/chat"]


# --- OpenAI-compatible servers: native unless the server refuses tools -------------------------------

VLLM_REFUSAL = {
    "object": "error",
    "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
"""vLLM's answer to a request with tools when it was started without a tool parser
(vllm/entrypoints/openai/serving_chat.py)."""


def serve_openai(httpserver, *refusals: dict) -> list[dict]:
    """/v1/chat/completions: ``refusals`` first (HTTP 400), then "Hello." every time. Returns the bodies."""
    from werkzeug.wrappers import Response

    from tests.models.test_openai_wire import event, sse

    bodies: list[dict] = []

    def chat(request):
        bodies.append(json.loads(request.data))
        if len(bodies) <= len(refusals):
            return Response(
                json.dumps(refusals[len(bodies) - 1]), status=400, content_type="application/json"
            )
        answer = sse(event({"role": "assistant", "content": "Hello."}), event({}, finish_reason="stop"))
        return Response(answer, content_type="text/event-stream")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(chat)
    return bodies


def test_an_openai_compatible_server_gets_native_tool_calls(httpserver, allow_requests):
    from meowgent_nb.models import OpenAIModel

    bodies = serve_openai(httpserver)
    agent = Agent(OpenAIModel("m", base_url=httpserver.url_for("/v1")), tools=[add])
    assert (agent.run("Hi").text, agent.protocol) == ("Hello.", "native")
    assert agent.tool_support == ToolSupport("native", "an OpenAI-compatible server takes tools")
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["add"]


def test_a_server_that_refuses_tools_is_asked_the_same_turn_with_xml_which_the_model_keeps(
    httpserver, allow_requests
):
    from meowgent_nb.models import OpenAIModel

    bodies = serve_openai(httpserver, VLLM_REFUSAL)
    model = OpenAIModel("m", base_url=httpserver.url_for("/v1"))
    agent = Agent(model, tools=[add])
    assert (agent.run("Hi").text, agent.protocol) == ("Hello.", "xml")
    said = "the server refuses tools: " + VLLM_REFUSAL["message"]
    assert agent.tool_support == ToolSupport("xml", said)
    assert ["tools" in body for body in bodies] == [True, False]
    assert "<tools>" in bodies[1]["messages"][0]["content"]
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]  # the refused attempt left nothing
    later = Agent(model, tools=[add])  # the model remembers: the next cell asks with xml at once
    assert (later.run("Hi").text, later.tool_support) == ("Hello.", ToolSupport("xml", said))
    assert len(bodies) == 3 and "tools" not in bodies[2]


def test_a_chosen_native_protocol_is_not_replaced_when_the_server_refuses_tools(httpserver, allow_requests):
    from meowgent_nb.models import ModelError, OpenAIModel

    serve_openai(httpserver, VLLM_REFUSAL)
    agent = Agent(OpenAIModel("m", base_url=httpserver.url_for("/v1")), tools=[add], protocol="native")
    with pytest.raises(ModelError) as caught:
        agent.run("Hi")
    assert str(caught.value).endswith(
        f"{VLLM_REFUSAL['message']} (use the `xml` tool protocol, which works with any model)"
    )


def test_the_embedded_models_get_decide_and_say_so_without_loading_anything(tmp_path):
    from meowgent_nb.models import LlamaCppModel, SharedLocalModel

    missing = tmp_path / "none.gguf"  # never read: asking is free, as making the model is
    for model in (LlamaCppModel(missing), SharedLocalModel(missing, directory=tmp_path / "shared")):
        agent = Agent(model, tools=[add])
        support = asyncio.run(agent.choose_protocol())
        assert (support, agent.protocol) == (ToolSupport("decide", "the embedded models' protocol"), "decide")
        assert str(support) == "decide tool calls (the embedded models' protocol)"
        chosen = Agent(model, tools=[add], protocol="xml")
        assert (asyncio.run(chosen.choose_protocol()), chosen.protocol) == (None, "xml")
    assert list(tmp_path.iterdir()) == []  # no socket folder made, no process started
