"""A real trace viewer receives a notebook's run: Arize Phoenix, started on 127.0.0.1, and a real
kernel running ``%agent trace on`` with ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at it. A scripted
model asks for two calls; a rule allows one and another denies the other. Phoenix's REST API then
returns the run's spans as the kernel sent them: names, parents, the approval on each call's span.

Phoenix comes from its own venv (tests/support/phoenix.py): without it these tests are skipped,
saying the command that makes it; with ``CI`` set they fail instead (.ci/run makes it).

test_the_trace_in_phoenixs_ui saves phoenix-trace-light.png (the trace, its denied call open) into
$MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/phoenix-trace-light.png is it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser_pages import chromium_browser
from tests.support.kernel_driver import Kernel
from tests.support.phoenix import Phoenix, require_phoenix

PROJECT = "meowgent-notebook"
SETUP = '''
%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

def call(path):
    return "<tool_call>" + json.dumps({"name": "delete_file", "arguments": {"path": path}}) + "</tool_call>"

model = ScriptedModel([call("scratch/a.txt") + call("keep/b.txt"), "Deleted scratch/a.txt; keep/b.txt is kept."])
'''
RULES = "%agent allow delete_file path=scratch/**\n%agent deny delete_file path=keep/**"
CELL = "%%agent --model-object model --new\nClean up scratch/a.txt and keep/b.txt."
OURS = ("gen_ai.", "meowgent.", "error.")  # what meowgent_nb sends; Phoenix adds its own names beside them
TIMED = ("gen_ai.response.time_to_first_chunk", "meowgent.tool.run_seconds")


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> Any:
    """Phoenix holding a notebook kernel's traced run (the kernel shut down), and the run's conversation id."""
    executable = require_phoenix()
    phoenix = Phoenix(executable, tmp_path_factory.mktemp("phoenix"))
    phoenix.start()  # it migrates its database meanwhile the kernel starts
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = phoenix.url
    env["OTEL_RESOURCE_ATTRIBUTES"] = f"openinference.project.name={PROJECT}"  # Phoenix's project
    kernel = None
    try:
        kernel = Kernel(str(tmp_path_factory.mktemp("phoenix-notebook")), env=env)
        kernel.ok(SETUP)
        kernel.ok(RULES)
        phoenix.wait_ready()
        kernel.ok("%agent trace on")
        kernel.ok(CELL)
        conversation = kernel.ok("print(get_ipython().meowgent.conversation_id)").stdout.strip()
        kernel.ok("%agent trace off")  # sends the batch still waiting
        kernel.shutdown()
        kernel = None
        yield phoenix, conversation
    finally:
        if kernel is not None:
            kernel.shutdown()
        phoenix.stop()


def ours(span: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value for key, value in span["attributes"].items() if key.startswith(OURS) and key not in TIMED
    }


def test_phoenix_returns_the_notebooks_run_with_its_approvals(traced):
    phoenix, conversation = traced
    spans = phoenix.spans(PROJECT, count=5)
    assert sorted((span["name"], span["span_kind"], span["status_code"]) for span in spans) == [
        ("chat scripted", "LLM", "UNSET"),
        ("chat scripted", "LLM", "UNSET"),
        ("execute_tool delete_file", "TOOL", "ERROR"),
        ("execute_tool delete_file", "TOOL", "UNSET"),
        ("invoke_agent meowgent", "AGENT", "UNSET"),
    ]
    [run] = [span for span in spans if span["name"] == "invoke_agent meowgent"]
    assert run["parent_id"] is None
    assert {span["context"]["trace_id"] for span in spans} == {run["context"]["trace_id"]}
    assert [span["parent_id"] for span in spans if span is not run] == [run["context"]["span_id"]] * 4
    assert ours(run) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "meowgent",
        "gen_ai.provider.name": "ScriptedModel",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": conversation,
        "gen_ai.usage.output_tokens": 14,
        "meowgent.tools.offered": 1,
        "meowgent.turns": 2,
        "meowgent.stopped": "answer",
    }
    assert run["attributes"]["session.id"] == conversation  # Phoenix's Sessions view groups a notebook's runs

    chats = sorted(
        (s for s in spans if s["span_kind"] == "LLM"), key=lambda s: s["attributes"]["meowgent.turn"]
    )
    assert [ours(chat) for chat in chats] == [
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "ScriptedModel",
            "gen_ai.request.model": "scripted",
            "gen_ai.usage.output_tokens": output,
            "gen_ai.response.finish_reasons": ["stop"],
            "meowgent.turn": turn,
        }
        for turn, output in [(1, 9), (2, 5)]  # the run's 14
    ]
    calls = sorted(
        (s for s in spans if s["span_kind"] == "TOOL"), key=lambda s: s["attributes"]["gen_ai.tool.call.id"]
    )
    assert [ours(call) for call in calls] == [
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "delete_file",
            "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.type": "function",
            "meowgent.approval.decision": "approved",
            "meowgent.approval.decided_by": "rule",
            "meowgent.approval.decider": "rule 1 (delete_file path=scratch/**)",
            "meowgent.approval.reason": "allowed by rule 1 (delete_file path=scratch/**)",
            "meowgent.approval.rule": 1,
            "meowgent.tool.result_kind": "ok",
        },
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "delete_file",
            "gen_ai.tool.call.id": "call_2",
            "gen_ai.tool.type": "function",
            "meowgent.approval.decision": "denied",
            "meowgent.approval.decided_by": "rule",
            "meowgent.approval.decider": "rule 2 (delete_file path=keep/**)",
            "meowgent.approval.reason": "rule 2 (delete_file path=keep/**) denies this call.",
            "meowgent.approval.rule": 2,
            "meowgent.tool.result_kind": "denied",
            "error.type": "denied",
        },
    ]
    # The allowed call ran; the denied one did not.
    assert 0 < calls[0]["attributes"]["meowgent.tool.run_seconds"] < 5
    assert "meowgent.tool.run_seconds" not in calls[1]["attributes"]


def test_the_trace_in_phoenixs_ui(traced, tmp_path):
    """The run as a person sees it in Phoenix (light): the span tree, the denied call open, its approval."""
    phoenix, _ = traced
    screenshots = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    [run] = [span for span in phoenix.spans(PROJECT, count=5) if span["name"] == "invoke_agent meowgent"]
    address = f"{phoenix.url}/projects/{phoenix.project_id(PROJECT)}/traces/{run['context']['trace_id']}"
    browsing = chromium_browser()
    browser = next(browsing)
    try:
        context = browser.new_context(viewport={"width": 1280, "height": 1120}, color_scheme="light")
        page = context.new_page()
        # Phoenix's own default is dark; its preferences page keeps a person's choice here.
        page.add_init_script("localStorage.setItem('arize-phoenix-theme', 'light')")
        page.goto(address)
        tree = page.get_by_text("execute_tool delete_file")
        tree.nth(1).click()  # the second call, the denied one
        details = page.get_by_role("tabpanel")
        denied = details.get_by_text("rule 2 (delete_file path=keep/**)", exact=True)
        denied.wait_for()
        assert page.evaluate("document.body.classList.contains('theme--light')")
        assert details.get_by_text("meowgent.approval.decided_by", exact=True).is_visible()
        page.screenshot(path=str(screenshots / "phoenix-trace-light.png"))
        context.close()
    finally:
        browsing.close()  # closes Chromium and playwright
