"""How a live view cuts the transcript: under a waiting card (for its buttons) and after each folded turn."""

from __future__ import annotations

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.events import ApprovalRequested, ToolCallEvent, TurnEnd
from meowgent_nb.notebook.views.transcript import Transcript
from tests.notebook.test_display import call, events_of, ticking


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def test_a_folded_turn_is_a_section_of_its_own_that_later_events_leave_alone():
    model = ScriptedModel(
        [call("get_weather", city="Paris"), call("get_weather", city="Oslo"), "Sunny both."]
    )
    events = events_of(Agent(model, tools=[get_weather]))
    transcript = Transcript(clock=ticking())
    for event in events[: events.index(next(e for e in events if isinstance(e, TurnEnd) and e.turn == 2))]:
        transcript.handle(event)  # turn 1 is over, turn 2's call has run
    before = transcript.html_sections()
    assert [call for _, call in before] == [None, None]
    assert (
        before[0][0].endswith("</details></div>") and "Paris" in before[0][0] and "Oslo" not in before[0][0]
    )
    for event in events[events.index(next(e for e in events if isinstance(e, TurnEnd) and e.turn == 2)) :]:
        transcript.handle(event)
    assert transcript.finished
    after = transcript.html_sections()
    assert after[0] == before[0]  # a person who opened turn 1 keeps it open while the run goes on
    inner = [
        html.removeprefix('<div class="meowgent-transcript">').removesuffix("</div>") for html, _ in after
    ]
    whole = transcript.to_html().removeprefix('<div class="meowgent-transcript">').removesuffix("</div>")
    assert "".join(inner) == whole


def test_the_transcript_is_cut_right_after_each_waiting_card():
    transcript = Transcript(clock=ticking())
    first = ToolCallEvent(ToolCall("delete_file", {"path": "a"}, id="1"), 1)
    second = ToolCallEvent(ToolCall("delete_file", {"path": "b"}, id="2"), 1)
    for event in (first, second, ApprovalRequested((first.call, second.call))):
        transcript.handle(event)
    sections = transcript.html_sections()
    assert [call for _, call in sections] == [first.call, second.call, None]
    assert "&quot;a&quot;" in sections[0][0] and "&quot;b&quot;" not in sections[0][0]
    assert "&quot;b&quot;" in sections[1][0] and "meowgent-timeline" not in sections[1][0]
    assert "meowgent-timeline" in sections[2][0]  # the turn's timeline comes after the last card's buttons


def test_each_live_section_has_the_font_and_line_height_of_the_finished_output():
    # An HTML widget's lines are 28 px high in a 13 px font: the card's small lines stood apart while
    # the call ran (28 px) and closed up when the finished transcript replaced them (19 px).
    from meowgent_nb.notebook.views.live_view import LiveView

    transcript = Transcript(clock=ticking())
    transcript.handle(ToolCallEvent(ToolCall("get_weather", {"city": "Paris"}, id="1"), 1))
    view = LiveView(transcript, on_stop=lambda: None, call_soon=lambda f, *a: f(*a))
    try:
        sections = transcript.html_sections()
        assert [widget.value for widget in view._html] == [
            '<div class="meowgent-live-section" style="font-size: var(--jp-content-font-size1, 14px);'
            f' line-height: var(--jp-content-line-height, 1.6)">{html}</div>'
            for html, _ in sections
        ]
    finally:
        view.close()
