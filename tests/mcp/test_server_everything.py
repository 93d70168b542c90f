"""The MCP reference server (`@modelcontextprotocol/server-everything`, from npm) through the client.

It exercises what the protocol carries: structured content with an output schema, images and
resource links in results, resources, prompts, a form with every field kind (elicitation),
sampling, progress and logging. The package is installed from npm once per version, into a folder
under the temporary directory that later runs reuse (tests/mcp_servers/npm_packages.py; pinned, so
the expected values hold); without npm or the registry the tests are skipped.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from meowgent_nb import Agent, Approved, ScriptedModel
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.mcp.client.asking import ElicitAnswer
from tests.mcp_servers import npm_packages
from tests.support.tool_calls import call

PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
ANSWER = {
    "name": "Ada Lovelace",
    "check": True,
    "integer": 7,
    "untitledMultipleSelectEnum": ["Piano", "Drums"],
    "titledSingleSelectEnum": "hero-3",
}


@pytest.fixture(scope="module")
def everything():
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    try:
        folder = npm_packages.installed(PACKAGE, ["npm"])  # once per version, kept between runs
    except RuntimeError as error:
        pytest.skip(str(error))
    command = [str(folder / "node_modules" / ".bin" / "mcp-server-everything"), "stdio"]
    poet = ScriptedModel(["Hello from the notebook."] * 5)
    # roots: the server offers get-roots-list only to a client that offers roots.
    with McpToolbox(
        "every", command, connect_timeout=60, sampling="allow", sampling_model=poet, roots=["."]
    ) as box:
        yield box


class Person:
    """Approves every call and fills in every form with `ANSWER`."""

    def __init__(self):
        self.fields, self.told = [], []

    async def approve(self, requests):
        return [Approved("by the test") for _ in requests]

    async def elicit(self, request):
        self.fields = [(f.name, f.kind) for f in request.form.fields]
        return ElicitAnswer("accept", dict(ANSWER))

    async def review_sampling(self, review):  # pragma: no cover - sampling="allow" does not ask
        return True, "by the test"

    def tell(self, running, text):
        self.told.append(text)


def test_the_listing_offers_every_tool_the_task_one_too(everything):
    assert everything.names == [
        "every_echo",
        "every_get-annotated-message",
        "every_get-env",
        "every_get-resource-links",
        "every_get-resource-reference",
        "every_get-structured-content",
        "every_get-sum",
        "every_get-tiny-image",
        "every_gzip-file-as-resource",
        "every_toggle-simulated-logging",
        "every_toggle-subscriber-updates",
        "every_trigger-long-running-operation",
        "every_get-roots-list",
        "every_trigger-elicitation-request",
        "every_trigger-url-elicitation",
        "every_trigger-sampling-request",
        "every_simulate-research-query",
    ]
    assert everything.skipped == {}
    assert everything["every_simulate-research-query"].runs_as_task is True
    assert sorted(everything["every_get-structured-content"].output_schema["properties"]) == [
        "conditions",
        "humidity",
        "temperature",
    ]


def test_structured_content_images_and_links_become_values(everything):
    weather = everything["every_get-structured-content"].run({"location": "Chicago"})
    assert weather == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
    image = everything["every_get-tiny-image"].run({})
    assert image == "Here's the image you requested:\n[image: image/png]\nThe image above is the MCP logo."
    assert [repr(m) for m in image.media] == ["<McpImage image/png, 4,033 bytes>"]
    links = everything["every_get-resource-links"].run({"count": 2})
    assert [(link.name, link.uri) for link in links.links] == [
        ("Blob Resource 1", "demo://resource/dynamic/blob/1"),
        ("Text Resource 2", "demo://resource/dynamic/text/2"),
    ]
    assert everything["every_get-sum"].run({"a": 2, "b": 3}) == "The sum of 2 and 3 is 5."


def test_resources_and_prompts_are_listed_and_read(everything):
    assert [p.name for p in everything.prompts()] == [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ]
    uris = [str(r.uri) for r in everything.resources()]
    assert "demo://resource/static/document/features.md" in uris
    text = everything.read("demo://resource/static/document/features.md")
    assert isinstance(text, str) and text.startswith("#")


def test_a_form_with_every_field_kind_and_a_sampling_request_are_answered_in_the_call(everything):
    person = Person()
    model = ScriptedModel(
        [
            call("every_trigger-elicitation-request")
            + call("every_trigger-sampling-request", prompt="Say hi"),
            "Done.",
        ]
    )
    result = Agent(model, tools=everything, approver=person).run("Ask me, then ask the model")
    form, sampled = result.tool_results
    assert [kind for _, kind in person.fields] == [
        "string",
        "boolean",
        "string",
        "string",
        "string",
        "string",
        "integer",
        "number",
        "choice",
        "choices",
        "choice",
        "choices",
        "choice",
    ]
    head, raw = form.output.split("\n\nRaw result: ")
    assert (form.kind, json.loads(raw)) == (
        "ok",
        {"action": "accept", "content": ANSWER},
    )  # exactly what was accepted
    assert head.splitlines()[0] == "\u2705 User provided the requested information!"
    label, answer = sampled.output.split("\n", 1)
    assert (sampled.kind, label, json.loads(answer)) == (
        "ok",
        "LLM sampling result: ",
        {
            "model": "scripted",
            "stopReason": "endTurn",
            "role": "assistant",
            "content": {"type": "text", "text": "Hello from the notebook."},
        },
    )
    outcomes = [(a.kind, a.outcome) for a in everything.history if a.kind != "roots"]
    assert outcomes[-2:] == [("elicitation", "accept"), ("sampling", "answered by scripted")]


def test_a_long_operation_runs_and_its_progress_is_ignored_outside_a_cell(everything):
    done = everything["every_trigger-long-running-operation"].run({"duration": 1, "steps": 2})
    assert done == "Long running operation completed. Duration: 1 seconds, Steps: 2."


class Clarifier(Person):
    """Answers the research task's question (one choice of three) and keeps its cards' lines."""

    def __init__(self):
        super().__init__()
        self.lines, self.choices = [], []

    async def elicit(self, request):
        (field,) = request.form.fields
        self.fields, self.choices = [(field.name, field.kind)], [value for value, _ in field.options]
        await asyncio.sleep(2.5)  # a person takes a moment: the task's next status reads "input required"
        return ElicitAnswer("accept", {"interpretation": "snake"})

    def progress(self, running, progress):
        self.lines.append(progress.text())


STAGES = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]


def test_a_task_asks_its_question_through_the_wait_for_its_result_and_tells_its_stages(everything):
    person = Clarifier()
    model = ScriptedModel([call("every_simulate-research-query", topic="python", ambiguous=True), "Done."])
    result = Agent(model, tools=everything, approver=person).run("Research python")
    (report,) = result.tool_results
    assert report.kind == "ok"
    assert report.output.startswith(
        "# Research Report: python (snake)\n\n## Research Parameters\n- **Topic**: python\n"
        "- **Clarification**: snake\n"
    )
    assert (person.fields, person.choices) == (
        [("interpretation", "choice")],
        ["programming", "snake", "comedy"],
    )
    assert person.lines[0] == "working: Gathering sources..."
    asked = 'input required: Found multiple interpretations for "python". Requesting clarification...'
    assert asked in person.lines  # the form was open while the task said so
    allowed = [f"working: {stage}" for stage in STAGES] + [
        asked,
        'working: Continuing with interpretation: "snake"...',
    ]
    assert all(line in allowed or line.startswith("completed: ") for line in person.lines), person.lines
    assert [a.kind for a in everything.history][-1:] == ["elicitation"]
