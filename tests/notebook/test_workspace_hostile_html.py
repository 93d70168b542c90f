"""Hostile text in what the workspace's cards draw stays text: code to run or to propose, the
reasons of its risk label, and the line a tool raised at (which comes from the tool's own file)."""

from __future__ import annotations

import asyncio

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.notebook.approvals.proposal_card import proposal_html
from meowgent_nb.notebook.views._code_html import code_html, risk_html
from meowgent_nb.notebook.views.transcript import Transcript
from tests.support.tool_calls import call

HOSTILE = '</pre><script>alert(1)</script><img src=x onerror="alert(2)">'


def _live(html: str) -> list[str]:
    return [tag for tag in ("<script", "<img src=x") if tag in html]  # a tag, not its escaped text


def test_code_to_run_or_propose_and_its_label_reasons_are_drawn_as_text():
    code = f"x = {HOSTILE!r}  # {HOSTILE}"
    assert _live(code_html(code)) == []
    assert _live(proposal_html(code, HOSTILE)) == []
    assert _live(risk_html("modifies", [HOSTILE])) == []
    assert "&lt;script&gt;" in code_html(code)


@tool
def explode(text: str) -> str:
    """Raise with the text."""
    raise ValueError(text)  # </pre><script>alert(1)</script><img src=x onerror="alert(2)">


def test_the_place_a_tool_raised_and_its_message_are_text_in_the_card():
    agent = Agent(ScriptedModel([call("explode", text=HOSTILE), "Done."]), tools=[explode])
    transcript = Transcript()

    async def follow() -> None:
        async for event in agent.stream("Go."):
            transcript.handle(event)

    asyncio.run(follow())
    html = transcript._repr_mimebundle_()["text/html"]
    assert "raised at " in transcript._repr_mimebundle_()["text/plain"]
    assert "raise ValueError(text)  # &lt;/pre&gt;&lt;script&gt;" in html
    assert _live(html) == []
