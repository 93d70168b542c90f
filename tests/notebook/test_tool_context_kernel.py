"""One tool that takes a `ToolContext`, both worlds, in one real kernel: run by the notebook's own
agent (its progress and log in the call's card, its form in the cell, sampling from the cell's
model after two approvals), and served with ``%tools serve`` to the SDK's client in this process
(progress notifications, a log message, ``elicitation/create`` and ``sampling/createMessage``)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.kernel_driver import Kernel, Run, running_kernel, shown

SETUP = '''
%load_ext meowgent_nb
import json, time
from meowgent_nb import ScriptedModel, ToolContext, tool

@tool
def tidy(folder: str, ctx: ToolContext) -> str:
    """Tidy a folder."""
    ctx.log("info", f"looking at {folder}")
    for done in (1, 2, 3):
        ctx.progress(done, 3, f"file {done}")
        time.sleep(0.3)
    answer = ctx.ask("Which style?", {"type": "object", "properties": {"style": {"type": "string", "enum": ["neat", "loose"]}}, "required": ["style"]})
    if not answer.accepted:
        return f"not tidied: {answer.action} ({answer.reason})"
    summary = ctx.sample(f"Summarize tidying {folder} in a {answer.content['style']} style", max_tokens=50)
    return f"tidied {folder} ({answer.content['style']}): {summary}"

@tool
def chatty(ctx: ToolContext) -> str:
    """Logs seven lines."""
    for n in range(1, 8):
        ctx.log("warning" if n == 7 else "info", f"line {n}")
    ctx.log("debug", "not in the card")
    return "said"

@tool
def loud(ctx: ToolContext) -> str:
    """Logs much."""
    ctx.log("warning", "w" * 10_000_000)
    ctx.log("error", list(range(1_000_000)))
    return "said"

def calling(name, *after, **arguments):
    call = json.dumps({"name": name, "arguments": arguments})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", *after])
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "tool-context", SETUP)


@pytest.fixture(scope="module")
def served(kernel):
    """The kernel's tools served once (``%tools serve``): its URL and token."""
    shown = kernel.ok("%tools serve").stdout
    yield re.search(r"at (http://\S+)", shown).group(1), re.search(r"Token: (\S+)", shown).group(1)
    kernel.ok("%tools serve --stop")


class Person:
    """Picks "neat" in the form and accepts it, then lets the model answer and sends its answer."""

    def __init__(self) -> None:
        self.stage = 0

    def __call__(self, kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if msg["msg_type"] != "comm_open":
            return
        if self.stage == 0 and "Accept" in run.buttons:
            field = next(c for c, s in run.models.items() if "meowgent-field-0" in s.get("_dom_classes", ()))
            kernel.set_state(field, index=1)  # the drop-down: (none), neat, loose
            kernel.click(run.buttons["Accept"][-1])
            self.stage = 1
        elif self.stage == 1 and "Let the model answer" in run.buttons:
            kernel.click(run.buttons["Let the model answer"][-1])
            self.stage = 2
        elif self.stage == 2 and "Send the answer" in run.buttons:
            kernel.click(run.buttons["Send the answer"][-1])
            self.stage = 3


def test_run_by_the_notebook_s_agent_the_context_is_the_card_the_cell_and_the_cell_s_model(kernel):
    kernel.ok('model = calling("tidy", "All neat.", "Tidied.", folder="docs")')
    person = Person()
    run = kernel.ok("%%agent --model-object model --new\nTidy docs", hook=person)
    assert person.stage == 3
    values = [shown(run, m) for m in run.messages]
    texts = [t for v in values for t in re.findall(r'<span class="meowgent-progress-text">(.*?)</span>', v)]
    assert [t for i, t in enumerate(texts) if i == 0 or t != texts[i - 1]] == [
        "1 of 3 (33 %) - file 1",
        "2 of 3 (66 %) - file 2",
        "3 of 3 (100 %) - file 3",
    ]
    assert run.panel_texts[-1].splitlines() == [
        "[tool] tidy(folder='docs') -> done",
        "  [the tool tidy logged info: looking at docs]",
        "  [the tool tidy asked for input ('Which style?'): accepted, sent style='neat']",
        "  [the tool tidy asked to use the model scripted: answer sent back: 'All neat.']",
        "  tidied docs (neat): All neat.",
        "Tidied.",
    ]
    check = kernel.ok("print(model.requests[1].messages, model.requests[1].options)")
    assert (
        check.stdout
        == "[{'role': 'user', 'content': 'Summarize tidying docs in a neat style'}] {'num_predict': 50}\n"
    )


def test_a_headless_run_declines_the_form_and_the_tool_says_why(kernel):
    kernel.ok('model = calling("tidy", "Not tidied.", folder="docs")')
    run = kernel.ok("%%agent --model-object model --new\nTidy docs", allow_stdin=False)
    assert run.panel_texts[-1].splitlines()[-2:] == [
        "  not tidied: decline (no person to answer (headless run))",
        "Not tidied.",
    ]


def test_a_chatty_tool_s_card_shows_five_lines_and_says_where_the_rest_are(kernel):
    kernel.ok('model = calling("chatty", "Said.")')
    run = kernel.ok("%%agent --model-object model --new\nTalk", allow_stdin=False)
    assert run.panel_texts[-1].splitlines() == [
        "[tool] chatty() -> done",
        *[f"  [the tool chatty logged info: line {n}]" for n in range(1, 6)],
        "  [the tool chatty logged more (Python's logging has every line: logger meowgent_nb.tool.chatty)]",
        "  said",
        "Said.",
    ]


def test_a_loud_tool_s_log_reaches_the_cell_s_stderr_bounded_as_its_card_is(kernel):
    # Nothing configured logging in the kernel: Python's last resort writes warnings to the cell's stderr.
    kernel.ok('model = calling("loud", "Said.")')
    run = kernel.ok("%%agent --model-object model --new\nShout", allow_stdin=False)
    stderr = "".join(c["text"] for c in run.of_type("stream") if c["name"] == "stderr")
    listed = str(list(range(1_000_000)))
    assert stderr.splitlines() == [
        "w" * 2000 + "... (9,998,000 more characters)",
        listed[:2000] + "... (7,886,890 more characters)",
    ]
    assert run.panel_texts[-1].splitlines() == [
        "[tool] loud() -> done",
        f"  [the tool loud logged warning: {'w' * 199}\u2026]",
        f"  [the tool loud logged error: {listed[:199]}\u2026]",
        "  said",
        "Said.",
    ]


def test_served_the_same_tool_talks_to_the_mcp_client_over_its_request(served):
    url, token = served
    logs, progress, asked = [], [], []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.logger, params.data))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_elicit(context: Any, params: Any) -> Any:
        asked.append(("form", params.message, params.requested_schema["properties"]["style"]["enum"]))
        return types.ElicitResult(action="accept", content={"style": "loose"})

    async def on_sample(context: Any, params: Any) -> Any:
        asked.append(("model", params.messages[0].content.text, params.max_tokens))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Loosely done."), model="m"
        )

    async def main() -> Any:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as http:  # a loaded machine is slow
            transport = streamable_http_client(url, http_client=http)
            async with Client(
                transport,
                cache=None,
                mode="legacy",
                logging_callback=on_log,
                elicitation_callback=on_elicit,
                sampling_callback=on_sample,
            ) as mcp:
                listed = (await mcp.list_tools()).tools
                return listed, await mcp.call_tool("tidy", {"folder": "src"}, progress_callback=on_progress)

    listed, result = asyncio.run(main())
    assert listed[0].input_schema["properties"] == {"folder": {"type": "string"}}  # no ctx argument
    assert (result.is_error, [c.text for c in result.content]) == (
        False,
        ["tidied src (loose): Loosely done."],
    )
    assert logs == [("info", "tidy", "looking at src")]
    assert progress == [(1.0, 3.0, "file 1"), (2.0, 3.0, "file 2"), (3.0, 3.0, "file 3")]
    assert asked == [
        ("form", "Which style?", ["neat", "loose"]),
        ("model", "Summarize tidying src in a loose style", 50),
    ]


def test_served_to_another_notebook_s_client_the_form_and_sampling_show_in_that_cell(kernel, served):
    # The notebook's own client (McpToolbox) negotiates the 2026-07-28 protocol: the tool's questions
    # travel inside its result, and its thread waits for the retry with the answer.
    url, token = served
    try:
        kernel.ok(
            f"from meowgent_nb.mcp.client.toolbox import McpToolbox\n"
            f'remote = McpToolbox("remote", url={url!r}, headers={{"Authorization": "Bearer {token}"}}, approval=False)\n'
            'model = calling("remote_tidy", "All neat.", "Tidied remotely.", folder="lib")'
        )
        person = Person()
        run = kernel.ok("%%agent --model-object model --new\nTidy lib remotely", hook=person)
        assert person.stage == 3
        assert run.panel_texts[-1].splitlines() == [
            "[tool] remote_tidy(folder='lib') -> done",
            "  [remote asked for input ('Which style?'): accepted, sent style='neat']",
            "  [remote asked to use the model scripted: answer sent back: 'All neat.']",
            "  tidied lib (neat): All neat.",
            "Tidied remotely.",
        ]
        log = kernel.ok("print([(e.level, e.text) for e in remote.log])")
        assert log.stdout == "[('info', 'looking at lib')]\n"
    finally:
        kernel.ok("remote.close()")
