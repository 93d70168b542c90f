"""A served tool's `ToolContext` over both protocols, with the SDK's real client: progress, logs at
the level the client set, a form (elicitation) and the client's model (sampling); what a client
that cannot answer gets; a retry with an unknown request_state; the context never an argument."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meowgent_nb import ToolContext, ToolDefinitionError, tool
from meowgent_nb.mcp import ToolServer

STYLE = {
    "type": "object",
    "properties": {"style": {"type": "string", "enum": ["neat", "loose"]}},
    "required": ["style"],
}


@tool
def tidy(folder: str, ctx: ToolContext) -> str:
    """Tidy a folder."""
    ctx.log("debug", "details")
    ctx.log("info", f"looking at {folder}")
    ctx.log("error", "one file was locked")
    for done in (1, 2):
        ctx.progress(done, 2, f"file {done}")
    answer = ctx.ask("Which style?", STYLE)
    if not answer.accepted:
        return f"not tidied: {answer.action}"
    summary = ctx.sample(f"Summarize {folder}", system="Be brief.", max_tokens=40)
    return f"tidied {folder} ({answer.content['style']}): {summary}"


@tool
def ask_only(ctx: ToolContext) -> str:
    """Ask, and say what came of it."""
    try:
        return f"answered: {ctx.ask('Name?', {'type': 'object', 'properties': {'name': {'type': 'string'}}})}"
    except Exception as error:  # the tool reads why it could not ask
        return f"could not ask: {type(error).__name__}: {error}"


@tool
async def ask_async(ctx: ToolContext) -> str:
    """An async tool runs to completion on a tool thread's own loop, so it may wait for its client too."""
    answer = ctx.ask("Style?", STYLE)
    return f"asked: {answer.content}"


@pytest.fixture(scope="module")
def served():
    server = ToolServer([tidy, ask_only, ask_async])
    yield server
    server.stop()


class Client_:
    """What one client saw: log messages, progress, and the questions it answered."""

    def __init__(self, answer: str = "accept") -> None:
        self.logs: list[tuple[str, str]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.asked: list[Any] = []
        self.answer = answer

    async def on_log(self, params: Any) -> None:
        self.logs.append((params.level, params.data))

    async def on_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.progress.append((done, total, message))

    async def on_elicit(self, context: Any, params: Any) -> Any:
        self.asked.append(("form", params.message))
        if self.answer != "accept":
            return types.ElicitResult(action=self.answer)
        return types.ElicitResult(action="accept", content={"style": "neat"})

    async def on_sample(self, context: Any, params: Any) -> Any:
        self.asked.append(("model", params.system_prompt, params.messages[0].content.text, params.max_tokens))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Short."), model="m"
        )


@contextlib.asynccontextmanager
async def connect(server: ToolServer, seen: Client_, mode: str, asks: bool = True, **options: Any):
    callbacks = {"elicitation_callback": seen.on_elicit, "sampling_callback": seen.on_sample} if asks else {}
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {server.token}"}, timeout=120
    ) as http:  # a loaded machine is slow
        transport = streamable_http_client(server.url, http_client=http)
        async with Client(
            transport, cache=None, mode=mode, logging_callback=seen.on_log, **callbacks, **options
        ) as mcp:
            yield mcp


@pytest.mark.parametrize(
    "mode", ["legacy", "auto"]
)  # 2025-11-25 (requests of their own), 2026-07-28 (rounds)
def test_the_context_reaches_the_client_over_either_protocol(served, mode):
    seen = Client_()

    async def main() -> Any:
        # 2025: the level is set with logging/setLevel; 2026: each request carries it in its _meta.
        async with connect(served, seen, mode, **({"log_level": "info"} if mode == "auto" else {})) as mcp:
            if mode == "legacy":
                with __import__("warnings").catch_warnings():
                    __import__("warnings").simplefilter("ignore")
                    await mcp.set_logging_level("info")
            listed = {t.name: t.input_schema for t in (await mcp.list_tools()).tools}
            return listed, await mcp.call_tool("tidy", {"folder": "docs"}, progress_callback=seen.on_progress)

    listed, result = asyncio.run(main())
    assert listed["tidy"] == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "additionalProperties": False,
        "properties": {"folder": {"type": "string"}},
        "required": ["folder"],
        "type": "object",
    }
    assert (result.is_error, [c.text for c in result.content]) == (False, ["tidied docs (neat): Short."])
    assert seen.logs == [("info", "looking at docs"), ("error", "one file was locked")]
    assert seen.progress == [(1.0, 2.0, "file 1"), (2.0, 2.0, "file 2")]
    assert seen.asked == [("form", "Which style?"), ("model", "Be brief.", "Summarize docs", 40)]
    assert served._parked == {}  # nothing waits once the call is answered


def test_the_level_the_client_set_holds_and_a_declined_form_is_the_tool_s_to_read(served):
    seen = Client_(answer="decline")

    async def main() -> Any:
        async with connect(served, seen, "legacy") as mcp:
            with __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                await mcp.set_logging_level("error")
            return await mcp.call_tool("tidy", {"folder": "src"})

    result = asyncio.run(main())
    assert [c.text for c in result.content] == ["not tidied: decline"]
    assert seen.logs == [("error", "one file was locked")]
    assert seen.asked == [("form", "Which style?")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_that_cannot_answer_forms_is_named_in_the_tool_s_error(served, mode):
    async def main() -> Any:
        async with connect(served, Client_(), mode, asks=False) as mcp:
            return await mcp.call_tool("ask_only", {})

    result = asyncio.run(main())
    assert [c.text for c in result.content] == [
        "could not ask: ToolContextError: the tool 'ask_only' asked to ask its person (elicitation), but the MCP"
        " client did not declare 'elicitation': use a client that offers elicitation"
    ]


def test_an_async_tool_asks_too_and_an_unknown_request_state_or_a_sent_context_is_refused(served):
    async def main() -> Any:
        async with connect(served, Client_(), "auto") as mcp:
            failed = await mcp.call_tool("ask_async", {})
            stale = await mcp.session.call_tool(
                "tidy", {"folder": "x"}, request_state="made-up", input_responses={}
            )
            sent = await mcp.call_tool("tidy", {"folder": "x", "ctx": "mine"})
            return failed, stale, sent

    failed, stale, sent = asyncio.run(main())
    assert (failed.is_error, failed.content[0].text) == (False, "asked: {'style': 'neat'}")
    assert (stale.is_error, stale.content[0].text) == (
        True,
        "Error: no call waits for this answer: its request_state is unknown, answered already or expired;"
        " call the tool again",
    )
    assert sent.is_error and "- ctx: unknown argument; this tool takes: folder" in sent.content[0].text


def test_a_tool_without_a_caller_drops_progress_declines_forms_and_cannot_sample():
    seen = []

    @tool
    def alone(ctx: ToolContext) -> str:
        """Runs with nobody to talk to."""
        ctx.progress(1, 2)
        answer = ctx.ask("Name?", {"type": "object", "properties": {}})
        try:
            ctx.sample("hi")
        except Exception as error:
            seen.append(str(error))
        return f"{answer.action}: {answer.reason}"

    assert alone.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert alone.run({}) == "decline: no one to ask: the tool runs outside an agent and a served call"
    assert seen == [
        "the tool 'alone' asked to use a model, but it runs outside an agent and a served call:"
        " call it from %%agent or through %tools serve"
    ]


def test_two_context_parameters_or_a_positional_only_one_are_refused_at_decoration():
    def two(a: ToolContext, b: ToolContext) -> str:
        return ""

    def positional(ctx: ToolContext, /) -> str:
        return ""

    with pytest.raises(ToolDefinitionError) as caught:
        tool(two)
    assert "one ToolContext parameter is enough, it has 2: a, b" in str(caught.value)
    with pytest.raises(ToolDefinitionError) as caught:
        tool(positional)
    assert "the context parameter 'ctx' cannot be positional-only (it is passed by name)" in str(caught.value)


def test_an_answer_is_taken_once_and_only_as_far_as_the_form_allows(served):
    async def main() -> Any:
        async with connect(served, Client_(), "auto") as mcp:
            asked = await mcp.session.call_tool("ask_only", {}, allow_input_required=True)
            state = asked.request_state
            ((key, question),) = asked.input_requests.items()
            misfit = await mcp.session.call_tool(
                "ask_only",
                {},
                request_state=state,
                input_responses={key: types.ElicitResult(action="accept", content={"name": 7})},
            )
            again = await mcp.session.call_tool(
                "ask_only",
                {},
                request_state=state,
                input_responses={key: types.ElicitResult(action="accept", content={"name": "Eve"})},
            )
            return question.params.message, misfit, again

    message, misfit, again = asyncio.run(main())
    assert message == "Name?"
    assert (misfit.is_error, misfit.content[0].text) == (
        False,
        "could not ask: ToolContextError: the tool 'ask_only' asked for a form, and the client's answer does not"
        " fit it: name: expected text, got int",
    )
    assert (again.is_error, again.content[0].text) == (
        True,
        "Error: no call waits for this answer: its request_state is unknown, answered already or expired;"
        " call the tool again",
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "3", True])
def test_progress_takes_finite_numbers_only(bad):
    with pytest.raises(TypeError) as caught:
        ToolContext().progress(bad)
    assert str(caught.value) == f"ctx.progress: done must be a finite number, got {bad!r}"
