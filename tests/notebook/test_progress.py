"""Signs of life in a running transcript: the model's name, its status, counters, a call being written.

Times come from the transcript's ``clock``, a fake one here, so every string is exact. Only the
HTML carries them; text/plain stays what nbval compares.
"""

from __future__ import annotations

import asyncio

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from meowgent_nb import Agent, AgentResult, FunctionModel, ScriptedModel, ToolCall, tool
from meowgent_nb.events import (
    FinalAnswer,
    ModelStatus,
    PartialCall,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    TurnEnd,
)
from meowgent_nb.models import ModelChunk, OllamaModel, Usage
from meowgent_nb.models.base import describe_model
from meowgent_nb.notebook.views.display import LiveDisplay
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.recording import RecordingModel, ReplayModel

MUTED = "opacity: 0.65; font-size: 0.85em"


class Clock:
    """A clock that says what the test sets."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"{city}: 21 degrees"


# --- which model answers ----------------------------------------------------------------------


def test_each_model_says_what_it_is_and_where(tmp_path):
    assert describe_model(ScriptedModel()) == "ScriptedModel"
    assert describe_model(ScriptedModel(name="teacher")) == "teacher (ScriptedModel)"
    assert describe_model(FunctionModel(lambda m, t: "", name="echo")) == "echo (FunctionModel)"
    assert describe_model(OllamaModel("qwen2.5:0.5b", host="http://127.0.0.1:11434")) == (
        "qwen2.5:0.5b via Ollama at http://127.0.0.1:11434"
    )
    # A password in the host is not shown.
    assert describe_model(OllamaModel("m", host="https://me:secret@ollama.example/v1")) == (
        "m via Ollama at https://ollama.example/v1"
    )
    assert describe_model(OllamaModel("m", host="me:secret@box:11434")) == "m via Ollama at box:11434"
    path = tmp_path / "run.cassette.json"
    assert describe_model(RecordingModel(ScriptedModel(), path)) == f"ScriptedModel, recorded to {path}"
    assert (
        describe_model(RecordingModel(lambda: ScriptedModel(), path, name="local"))
        == f"local, recorded to {path}"
    )
    path.write_text("")
    assert describe_model(ReplayModel(path, name="local")) == f"cassette replay of local ({path})"
    assert describe_model(ReplayModel(path)) == f"cassette replay ({path})"
    assert describe_model(ReplayModel(path, lambda: ScriptedModel(), name="local")) == (
        f"cassette replay of local ({path}), recording what is missing"
    )

    with pytest.MonkeyPatch.context() as patch:  # under the working directory: named from there
        patch.chdir(tmp_path)
        assert (
            describe_model(ReplayModel(path, name="local")) == "cassette replay of local (run.cassette.json)"
        )

    class Plain:
        name = "plain"

    assert describe_model(Plain()) == "plain"


def test_the_run_starts_by_naming_the_model_in_the_html_only():
    async def collect():
        return [e async for e in Agent(ScriptedModel(["Hi."], name="teacher")).stream("Hello")]

    events = asyncio.run(collect())
    assert events[0] == RunStart("teacher (ScriptedModel)")
    transcript = Transcript.from_events(events)
    assert transcript.to_html().startswith(
        '<div class="meowgent-transcript">'
        f'<div class="meowgent-model-line" style="{MUTED}">model: '
        '<span class="meowgent-model">teacher (ScriptedModel)</span></div>'
    )
    assert transcript.to_text() == "Hi."


# --- waiting: the backend's status and a counter ----------------------------------------------


def waiting_line(transcript: Transcript) -> str:
    html = transcript.to_html()
    start = html.index('<div class="meowgent-waiting"')
    return html[start : html.index("</div>", start) + 6]


def test_the_waiting_line_counts_seconds_and_shows_the_backends_status():
    clock = Clock()
    transcript = Transcript(clock=clock)
    style = f"font-style: italic; {MUTED}"
    clock.now = 0.9
    assert (
        waiting_line(transcript)
        == f'<div class="meowgent-waiting" style="{style}">waiting for the model...</div>'
    )
    transcript.handle(RunStart("Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp)"))
    transcript.handle(ModelStatus("loading the model (first time, ~491 MB)"))
    clock.now = 12.7
    assert waiting_line(transcript) == (
        f'<div class="meowgent-waiting" style="{style}">loading the model (first time, ~491 MB)...'
        ' <span class="meowgent-elapsed">12 s</span></div>'
    )
    transcript.handle(ModelStatus("reading the prompt"))
    assert "reading the prompt... <span" in waiting_line(transcript)
    assert transcript.to_text() == "[waiting for the model...]"
    transcript.handle(TextDelta("Hello."))
    assert "meowgent-waiting" not in transcript.to_html() and transcript.to_text() == "Hello."
    clock.now = 20.0
    transcript.handle(TurnEnd(1, None, 0))
    clock.now = 23.5  # the next turn's wait counts from the end of the last one; the status is gone
    assert waiting_line(transcript) == (
        f'<div class="meowgent-waiting" style="{style}">waiting for the model...'
        ' <span class="meowgent-elapsed">3 s</span></div>'
    )
    assert transcript.to_text() == "Hello.\n[waiting for the model...]"
    transcript.handle(FinalAnswer(AgentResult(text="Hello.")))
    assert "meowgent-waiting" not in transcript.to_html() and "meowgent-elapsed" not in transcript.to_html()


# --- thinking: how long -----------------------------------------------------------------------


def test_thinking_says_how_long_live_and_after():
    clock = Clock()
    transcript = Transcript(clock=clock)
    clock.now = 1.0
    transcript.handle(ThinkingDelta("The person wants"))
    clock.now = 3.4
    transcript.handle(ThinkingDelta(" the weather."))
    assert transcript.clock_running
    assert (
        f'<details class="meowgent-thinking" open><summary style="cursor: pointer; {MUTED}">'
        'thinking... <span class="meowgent-elapsed">2 s</span> (5 words)</summary>'
    ) in transcript.to_html()
    clock.now = 4.25
    transcript.handle(TextDelta("Sunny."))
    clock.now = 9.0  # later redraws keep the time it thought
    assert (
        f'<details class="meowgent-thinking"><summary style="cursor: pointer; {MUTED}">'
        'thought for <span class="meowgent-thought-time">3.2 s</span> (5 words)</summary>'
    ) in transcript.to_html()
    assert not transcript.clock_running
    assert transcript.to_text() == "[thinking]\nSunny."


def test_thinking_cut_off_by_an_error_keeps_its_time():
    clock = Clock()
    transcript = Transcript(clock=clock)
    transcript.handle(ThinkingDelta("Hmm"))
    clock.now = 0.5
    transcript.fail(KeyboardInterrupt())
    clock.now = 5.0
    assert 'thought for <span class="meowgent-thought-time">0.5 s</span> (1 word)' in transcript.to_html()
    assert transcript.to_text() == "[thinking]\n[stopped by an interrupt after 1 turn, 0 tool calls]"


# --- a call being written ---------------------------------------------------------------------


DRAFT_STYLE = (
    "border-left: 3px dashed #1e88e5; padding: 0.3em 0.6em; margin: 0.4em 0;"
    " background: rgba(127,127,127,0.06); border-radius: 4px"
)
PRE = (
    "margin: 0.2em 0; padding: 0.3em 0.5em; background: rgba(127,127,127,0.1); white-space: pre-wrap;"
    " word-break: normal; overflow-wrap: break-word; font-family: var(--jp-code-font-family, ui-monospace,"
    " SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace)"
)


def test_a_call_being_written_fills_in_a_card_that_the_call_replaces():
    transcript = Transcript()
    transcript.handle(TextDelta("Let me check."))
    transcript.handle(PartialCall(None, ""))
    assert transcript.to_text() == "Let me check.\n[writing a call...]"
    assert transcript.to_html().endswith(
        f'<div class="meowgent-draft" style="{DRAFT_STYLE}"><div style="font-style: italic">writing a call...</div>'
        "</div></div>"
    )
    assert not transcript.clock_running
    transcript.handle(PartialCall("get_weather", '{"name": "get_weather", "arguments": {"city": "Pa'))
    assert transcript.to_text() == "Let me check.\n[writing a call to get_weather...]"
    assert transcript.to_html().endswith(
        f'<div class="meowgent-draft" style="{DRAFT_STYLE}"><div style="font-style: italic">writing a call to'
        ' <code style="font-weight: bold">get_weather</code>...</div>'
        f'<pre class="meowgent-draft-text" style="{PRE}">'
        "{&quot;name&quot;: &quot;get_weather&quot;, &quot;arguments&quot;: {&quot;city&quot;: &quot;Pa</pre>"
        "</div></div>"
    )
    call = ToolCall("get_weather", {"city": "Paris"}, id="call_1")
    transcript.handle(ToolCallEvent(call, 1))
    assert "meowgent-draft" not in transcript.to_html()
    assert transcript.to_text() == "Let me check.\n[tool] get_weather(city='Paris') -> running"


def test_a_bare_answer_that_was_not_a_call_drops_its_card():
    transcript = Transcript()
    transcript.handle(PartialCall("Bob", '{"name": "Bob"'))
    transcript.handle(TextDelta('{"name": "Bob", "age": 3}'))
    assert "meowgent-draft" not in transcript.to_html()
    assert transcript.to_text() == '{"name": "Bob", "age": 3}'


def test_mid_stream_the_transcript_shows_the_call_being_written():
    answer = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    seen: dict[str, str] = {}

    async def run():
        transcript = Transcript()
        agent = Agent(ScriptedModel([list(answer), "Warm."]), tools=[get_weather])
        async for event in agent.stream("Weather in Paris?"):
            transcript.handle(event)
            if isinstance(event, PartialCall) and event.text.endswith('"Pa'):
                seen["text"], seen["html"] = transcript.to_text(), transcript.to_html()
        return transcript

    transcript = asyncio.run(run())
    assert seen["text"] == "[writing a call to get_weather...]"
    assert "writing a call to <code" in seen["html"] and "&quot;city&quot;: &quot;Pa</pre>" in seen["html"]
    assert transcript.to_text() == "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees\nWarm."
    assert "meowgent-draft" not in transcript.to_html()


# --- the live display's tick ------------------------------------------------------------------


@pytest.fixture
def shell():
    start_ipython()  # once per process; later calls return None
    return get_ipython()


def test_the_live_display_redraws_its_counter_until_the_run_ends(shell):
    clock = Clock()

    async def watch(view: LiveDisplay) -> tuple[int, int]:
        view.start()
        clock.now = 5.0
        await asyncio.sleep(0.2)  # no events: only the tick redraws
        ticked = len(captured.outputs)
        view.handle(TextDelta("Hi"))  # streaming text: no counter on screen, so no ticks
        await asyncio.sleep(0.2)
        streaming = len(captured.outputs)
        view.close()
        assert view._ticker is None
        await asyncio.sleep(0.2)
        return ticked, streaming

    with capture_output() as captured:
        ticked, streaming = asyncio.run(watch(LiveDisplay(Transcript(clock=clock), live=True, tick=0.02)))
    texts = [o.data["text/plain"] for o in captured.outputs]
    htmls = [o.data["text/html"] for o in captured.outputs]
    assert ticked > 1 and texts[:ticked] == ["[waiting for the model...]"] * ticked
    assert '<span class="meowgent-elapsed">5 s</span>' in htmls[ticked - 1]
    assert streaming == ticked + 1  # the text's own redraw, and no tick after it
    assert len(captured.outputs) == streaming + 1  # close() draws once, and nothing ticks after it


def test_a_slow_scripted_model_streams_with_pauses():
    model = ScriptedModel([["a", "b"]], delay=0.01)

    async def collect():
        return [chunk async for chunk in model.stream(None)]

    assert asyncio.run(collect()) == [
        ModelChunk(text="a"),
        ModelChunk(text="b"),
        ModelChunk(done=True, usage=Usage(completion_tokens=2), finish_reason="stop"),
    ]
