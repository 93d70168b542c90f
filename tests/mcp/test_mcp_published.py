"""``@resource`` and ``@prompt``: a notebook's resources and prompts served by `ToolServer` and
read back by the notebook's own client over real HTTP."""

from __future__ import annotations

import pytest

from meowgent_nb import ToolDefinitionError, tool
from meowgent_nb.mcp import McpServerError, McpToolbox, ToolServer, prompt, resource

NOTES = {"groceries": "Milk, eggs.", "a b": "A note with a space."}


@resource("notes://index", description="The notes' names.")
def index() -> list:
    return sorted(NOTES)


@resource("notes://note/{name}", mime_type="text/plain")
def note(name: str) -> str:
    """A note by its name."""
    return NOTES[name]


@resource("notes://logo.png", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\nfake"


@prompt
def review(topic: str, tone: str = "kind") -> str:
    """Ask for a review of a topic.

    More text that is not the description.
    """
    return f"Review {topic} in a {tone} tone."


@prompt(name="two-turns")
def dialogue(question: str) -> list:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": "Let me think."}]


@prompt
def broken() -> int:
    return 3


@tool
def ping() -> str:
    """Answers pong."""
    return "pong"


@pytest.fixture(scope="module")
def box():
    server = ToolServer([ping], resources=[index, note, logo], prompts=[review, dialogue, broken])
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as made:
            yield made
    finally:
        server.stop()


def test_resources_and_templates_are_listed_and_read(box):
    assert [(str(r.uri), r.name, r.description, r.mime_type) for r in box.resources()] == [
        ("notes://index", "index", "The notes' names.", None),
        ("notes://logo.png", "logo", None, "image/png"),
    ]
    assert [(t.uri_template, t.name, t.description) for t in box.resource_templates()] == [
        ("notes://note/{name}", "note", "A note by its name.")
    ]
    assert box.read("notes://index") == ["a b", "groceries"]  # JSON, parsed
    assert box.read("notes://note/{name}", name="groceries") == "Milk, eggs."
    assert box.read("notes://note/a%20b") == "A note with a space."
    assert repr(box.read("notes://logo.png")) == "<McpImage image/png, 12 bytes from notes://logo.png>"


def test_a_missing_resource_and_a_failing_one_are_clear_errors(box):
    with pytest.raises(McpServerError) as caught:
        box.read("notes://nowhere")
    assert str(caught.value) == (
        "the MCP server 'nb' refused the read of notes://nowhere: no resource at notes://nowhere (error -32602)"
    )
    with pytest.raises(McpServerError) as failed:
        box.read("notes://note/{name}", name="missing")
    assert "reading notes://note/missing failed: KeyError: 'missing'" in str(failed.value)


def test_prompts_are_listed_and_give_messages(box):
    assert [(p.name, p.description, [(a.name, a.required) for a in p.arguments]) for p in box.prompts()] == [
        ("review", "Ask for a review of a topic.", [("topic", True), ("tone", False)]),
        ("two-turns", None, [("question", True)]),
        ("broken", None, []),
    ]
    assert box.prompt("review", topic="cats") == [{"role": "user", "content": "Review cats in a kind tone."}]
    assert box.prompt("two-turns", question="Why?") == [
        {"role": "user", "content": "Why?"},
        {"role": "assistant", "content": "Let me think."},
    ]


def test_bad_prompt_arguments_and_results_are_errors_that_say_why(box):
    with pytest.raises(ValueError) as missing:  # the client checks before it asks
        box.prompt("review", tone="harsh")
    assert str(missing.value) == "the prompt nb/review needs topic; its arguments: topic (required), tone"
    with pytest.raises(ValueError) as unknown:  # the server checks too (another client may not)
        review.messages({"tone": "harsh", "mood": "x"})
    assert str(unknown.value) == (
        "prompt 'review': unknown argument(s): mood; missing argument(s): topic; it takes: topic, tone"
    )
    with pytest.raises(McpServerError) as broken_result:
        box.prompt("broken")
    assert "prompt 'broken' returned int; return a str or a list of" in str(broken_result.value)


def test_decorators_check_what_they_are_given():
    with pytest.raises(ToolDefinitionError) as caught:
        resource("notes://{name}")(lambda other: other)
    assert caught.value.problems == ("its parameters (other) must be the URI's placeholders (name)",)
    with pytest.raises(ToolDefinitionError) as bad_uri:
        resource("not a uri")(lambda: "x")
    assert bad_uri.value.problems == ("the URI 'not a uri' is not a URI (scheme://...)",)
    with pytest.raises(ToolDefinitionError) as bad_prompt:
        prompt(lambda *words: "x")
    assert bad_prompt.value.problems == (
        "the name '<lambda>' is not a valid prompt name (letters, digits, '_', '-', '.')",
        "*args / **kwargs cannot be prompt arguments: words",
    )
    assert note("groceries") == "Milk, eggs." and review("dogs", "dry") == "Review dogs in a dry tone."
