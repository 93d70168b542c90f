"""Notebook renderings: transcripts of real agent runs, the live display, and the tools view.

Transcripts are built from the events of real `Agent` runs on `ScriptedModel`s; the live display
is driven through a real IPython shell, and one test runs a notebook on a real kernel (nbclient).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from html import escape
from pathlib import Path
from typing import Annotated, Literal

import nbformat
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

from meowgent_nb import (
    Agent,
    AgentResult,
    Approved,
    AutoApprove,
    Denied,
    ModelError,
    ScriptedModel,
    Toolbox,
    ToolCall,
    ToolResult,
    render_tools_xml,
    tool,
    tools_json_schema,
)
from meowgent_nb._visible import is_hidden
from meowgent_nb.errors import RunInterrupted
from meowgent_nb.events import (
    ApprovalEvent,
    ApprovalRequested,
    FinalAnswer,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
)
from meowgent_nb.models import ModelChunk, Usage
from meowgent_nb.notebook.views._transcript_html import markdown_html
from meowgent_nb.notebook.views.display import LiveDisplay, show_run
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.tools.render import render_tools_text
from meowgent_nb.tools.view import ToolsView, tool_mimebundle
from tests.support.tool_calls import call


@tool
def get_weather(
    city: Annotated[str, "City name, e.g. Paris"], unit: Literal["celsius", "fahrenheit"] = "celsius"
) -> str:
    """Get the current weather for a city.

    Uses a table of two cities.
    """
    temperatures = {"Paris": 21, "Oslo": 9}
    if city not in temperatures:
        raise ValueError(f"no weather for {city}")
    return f"{city}: {temperatures[city]} degrees {unit}"


_RAISES = 'raise ValueError(f"no weather for {city}")'
_LINE = next(n for n, line in enumerate(Path(__file__).read_text().split("\n"), 1) if line.strip() == _RAISES)
RAISED_FOR_ROME = f"  raised at {__file__}, line {_LINE}, in get_weather:\n  ----> {_LINE} {_RAISES}"
"""Where get_weather raised, under its card's error (the model reads only the error)."""


@tool(approval=True, timeout=5)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool(timeout=0.05)
def slow_lookup(key: str) -> str:
    """Look something up, slowly."""
    time.sleep(0.3)
    return key


@tool
def nap(seconds: float) -> str:
    """Sleep a while."""
    time.sleep(seconds)
    return "rested"


@tool
def noop() -> str:
    """Do nothing."""
    return ""


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return "<script>alert('hi')</script>\n" + "\n".join(f"line {i}: " + "x" * 40 for i in range(30))


class ApproveTmp:
    """Approves deleting files under /tmp, denies the rest."""

    async def approve(self, requests):
        return [
            Approved("under /tmp")
            if r.arguments["path"].startswith("/tmp/")
            else Denied("only files under /tmp.")
            for r in requests
        ]


def events_of(agent: Agent, prompt: str = "Go.") -> list:
    async def collect():
        return [event async for event in agent.stream(prompt)]

    return asyncio.run(collect())


def transcript_of(turns, tools=(get_weather,), **options) -> tuple[Transcript, AgentResult]:
    events = events_of(Agent(ScriptedModel(turns), tools=tools, **options))
    return Transcript.from_events(events), events[-1].result


def indented(output: str) -> str:
    return "\n".join(f"  {line}" for line in output.split("\n"))


# --- text/plain -------------------------------------------------------------------------------


def test_a_call_and_the_answer():
    transcript, _ = transcript_of([call("get_weather", city="Paris"), "It is 21 degrees in Paris."])
    assert transcript.to_text() == (
        "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\nIt is 21 degrees in Paris."
    )
    bundle = transcript._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"} and bundle["text/plain"] == transcript.to_text()
    assert str(transcript) == transcript.to_text()


def test_text_before_and_between_calls_keeps_its_place():
    transcript, _ = transcript_of(
        [
            "Let me look.\n"
            + call("get_weather", city="Paris")
            + "\nAnd Oslo:\n"
            + call("get_weather", city="Oslo"),
            "Paris: 21, Oslo: 9.\n\nBoth in **celsius**.",
        ]
    )
    assert transcript.to_text() == (
        "Let me look.\n"
        "[tool] get_weather(city='Paris') -> done\n"
        "  Paris: 21 degrees celsius\n"
        "And Oslo:\n"
        "[tool] get_weather(city='Oslo') -> done\n"
        "  Oslo: 9 degrees celsius\n"
        "Paris: 21, Oslo: 9.\n"
        "\n"
        "Both in **celsius**."
    )


def test_every_kind_of_failure():
    transcript, result = transcript_of(
        [
            call("get_weather", city="Rome")
            + call("get_wether", city="Paris")
            + call("get_weather", city="Paris", unit="kelvin")
            + call("slow_lookup", key="a")
            + "<tool_call>{not json</tool_call>",
            "Sorry, that did not work.",
        ],
        tools=[get_weather, slow_lookup],
    )
    by_kind = {r.kind: r.output for r in result.tool_results}
    assert transcript.to_text() == (
        "[tool] get_weather(city='Rome') -> error\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "[tool] get_wether(city='Paris') -> unknown tool\n"
        f"{indented(by_kind['unknown_tool'])}\n"
        "[tool] get_weather(city='Paris', unit='kelvin') -> invalid arguments\n"
        f"{indented(by_kind['invalid_arguments'])}\n"
        "[tool] slow_lookup(key='a') -> timed out\n"
        "  Timed out after 0.05 s\n"
        "[tool] (unreadable) -> unreadable\n"
        f"{indented(by_kind['parse_error'])}\n"
        "Sorry, that did not work."
    )
    html = transcript.to_html()
    for status in ("error", "unknown-tool", "invalid-arguments", "timeout", "unreadable"):
        assert html.count(f'class="meowgent-card meowgent-status-{status}"') == 1
    assert html.count('class="meowgent-card ') == 5


def test_approvals_and_denials_are_on_the_cards():
    transcript, _ = transcript_of(
        [
            call("delete_file", path="/tmp/a.txt") + call("delete_file", path="/etc/passwd"),
            "Deleted one file.",
        ],
        tools=[delete_file],
        approver=ApproveTmp(),
    )
    assert transcript.to_text() == (
        "[tool] delete_file(path='/tmp/a.txt') -> done (approved: under /tmp)\n"
        "  deleted /tmp/a.txt\n"
        "[tool] delete_file(path='/etc/passwd') -> denied\n"
        "  Denied: only files under /tmp.\n"
        "Deleted one file."
    )
    html = transcript.to_html()
    assert (
        '<div class="meowgent-approval" style="opacity: 0.65; font-size: 0.85em">approved: under /tmp</div>'
        in html
    )
    assert html.count('class="meowgent-approval"') == 1  # a denial is said by the output itself
    assert ">Denied: only files under /tmp.</pre>" in html
    assert html.count('class="meowgent-card meowgent-status-denied"') == 1


def test_policy_approvals_say_it_once_and_empty_output_says_so():
    transcript, _ = transcript_of(
        [call("delete_file", path="/x") + call("noop"), "Done."],
        tools=[delete_file, noop],
        approver=AutoApprove(),
    )
    assert transcript.to_text() == (
        "[tool] delete_file(path='/x') -> done (approved automatically)\n"
        "  deleted /x\n"
        "[tool] noop() -> done\n"
        "  (no output)\n"
        "Done."
    )
    transcript, result = transcript_of([call("delete_file", path="/x"), "Not deleted."], tools=[delete_file])
    assert transcript.to_text() == (
        f"[tool] delete_file(path='/x') -> denied\n{indented(result.tool_results[0].output)}\nNot deleted."
    )


def test_the_turn_limit_shows_calls_not_run():
    transcript, result = transcript_of(
        [call("get_weather", city="Paris"), call("get_weather", city="Oslo")], max_turns=2
    )
    assert result.stopped == "max_turns"
    assert transcript.to_text() == (
        "[tool] get_weather(city='Paris') -> done\n"
        "  Paris: 21 degrees celsius\n"
        "[tool] get_weather(city='Oslo') -> not run\n"
        f"{indented(result.tool_results[1].output)}\n"
        "[stopped: the limit of 2 turns was reached]"
    )
    assert 'class="meowgent-card meowgent-status-not-run"' in transcript.to_html()


def test_thinking_is_folded_and_usage_is_only_in_html():
    usage = Usage(prompt_tokens=1200, completion_tokens=30, completion_seconds=1.5)
    transcript, _ = transcript_of(
        [
            [
                ModelChunk(thinking="The person wants "),
                ModelChunk(thinking="the weather."),
                call("get_weather", city="Oslo"),
            ],
            [ModelChunk(text="Oslo has 9 degrees."), ModelChunk(done=True, usage=usage)],
        ]
    )
    assert transcript.to_text() == (
        "[thinking]\n[tool] get_weather(city='Oslo') -> done\n  Oslo: 9 degrees celsius\nOslo has 9 degrees."
    )
    html = transcript.to_html()
    muted = "opacity: 0.65; font-size: 0.85em"
    # How long it thought is measured (tests/notebook/test_progress.py checks it on a fake clock).
    assert re.search(
        re.escape(f'<details class="meowgent-thinking"><summary style="cursor: pointer; {muted}">')
        + r'thought for <span class="meowgent-thought-time">\d+\.\d s</span> \(5 words\)</summary>'
        + re.escape(
            f'<div style="white-space: pre-wrap; {muted}">The person wants the weather.</div></details>'
        ),
        html,
    )
    footer = re.search(r'<div class="meowgent-footer"[^>]*>(.*?)</div>', html).group(1)
    # The scripted first turn reports 3 completion tokens (one per chunk) and no durations.
    assert re.fullmatch(
        r"2 turns · 1 tool call · 1,200 prompt tokens · 33 completion tokens · 22\.0 tokens/s · \d+ ms",
        footer,
    ), footer


def test_thinking_stays_open_while_the_model_thinks():
    transcript = Transcript()
    transcript.handle(ThinkingDelta("Hmm."))
    assert '<details class="meowgent-thinking" open>' in transcript.to_html()
    transcript.handle(TextDelta("Done."))
    assert '<details class="meowgent-thinking">' in transcript.to_html()
    assert transcript.to_text() == "[thinking]\nDone."


def test_long_results_are_cut_in_text_and_folded_in_html():
    transcript, result = transcript_of(
        [call("fetch_page", url="https://example.org"), "Done."], tools=[fetch_page]
    )
    output = result.tool_results[0].output
    assert len(output) == 1518
    lines = transcript.to_text().split("\n")
    assert lines[0] == "[tool] fetch_page(url='https://example.org') -> done"
    assert lines[1:-2] == ["  " + line for line in output[:500].split("\n")]
    assert lines[-2:] == ["  [... 1,018 more characters]", "Done."]
    html = transcript.to_html()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;hi&#x27;)&lt;/script&gt;" in html
    assert "show all 1,518 characters</summary>" in html
    full = re.search(r'<pre class="meowgent-output-full"[^>]*>(.*?)</pre>', html, re.DOTALL).group(1)
    assert full.endswith("line 29: " + "x" * 40)


def test_long_arguments_are_cut_in_text():
    transcript, _ = transcript_of([call("get_weather", city="P" * 300), "No."])
    head = transcript.to_text().split("\n")[0]
    assert head == "[tool] get_weather(city='" + "P" * 191 + "...) -> error"


def test_everything_in_html_is_escaped():
    transcript, _ = transcript_of(
        [
            call("get_weather", city="<img src=x onerror=alert(1)>"),
            "A <b>bold</b> & `<i>` claim [x](javascript:alert(1))",
        ]
    )
    html = transcript.to_html()
    assert "<img" not in html and "<b>" not in html and "<i>" not in html and "href=" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<p>A &lt;b&gt;bold&lt;/b&gt; &amp; <code " in html
    # text/plain is not HTML: it shows the text as it is.
    assert "A <b>bold</b> & `<i>` claim" in transcript.to_text()


@tool
def echo(text: str) -> str:
    """Say it back."""
    return f"got {text}\n\x1b[2Kdone\u2028."


HOSTILE = "<script>report\u202etxt.exe\u200b\u3164"
"""Escaping and reordering at once; U+3164 (HANGUL FILLER) is a letter, so repr() leaves it raw."""
MARK = (
    '<span class="meowgent-hidden-char" title="{}" style="color: #c62828; background: rgba(198,40,40,0.12);'
    ' border: 1px solid rgba(198,40,40,0.6); border-radius: 2px; padding: 0 1px">{}</span>'
)
RLO = MARK.format("U+202E RIGHT-TO-LEFT OVERRIDE", "\\u202e")
ZWSP = MARK.format("U+200B ZERO WIDTH SPACE", "\\u200b")
FILLER = MARK.format("U+3164 HANGUL FILLER", "\\u3164")


def test_hidden_characters_are_shown_on_the_cards_but_the_tool_gets_them():
    transcript, result = transcript_of(
        [call("echo", text=HOSTILE) + call("echo\u200d", text="x"), "Done."], tools=[echo]
    )
    ran, unknown = result.tool_results
    assert ran.call.arguments == {"text": HOSTILE}  # the value itself is untouched
    assert ran.output == f"got {HOSTILE}\n\x1b[2Kdone\u2028."
    assert transcript.to_text() == (
        "[tool] echo(text='<script>report\\u202etxt.exe\\u200b\\u3164') -> done\n"
        "  got <script>report\\u202etxt.exe\\u200b\\u3164\n"
        "  \\x1b[2Kdone\\u2028.\n"
        "[tool] echo\\u200d(text='x') -> unknown tool\n"
        f"{indented(unknown.output)}\n"
        "Done."
    )
    html = transcript.to_html()
    pre = r'<pre class="meowgent-{}" style="[^"]*">(.*?)</pre>'
    assert re.findall(pre.format("arguments"), html, re.DOTALL)[0] == (
        f"{{\n  &quot;text&quot;: &quot;&lt;script&gt;report{RLO}txt.exe{ZWSP}{FILLER}&quot;\n}}"
    )
    assert re.findall(pre.format("output"), html, re.DOTALL)[0] == (
        f"got &lt;script&gt;report{RLO}txt.exe{ZWSP}{FILLER}\n"
        + MARK.format("U+001B", "\\x1b")
        + "[2Kdone"
        + MARK.format("U+2028 LINE SEPARATOR", "\\u2028")
        + "."
    )
    names = re.findall(r'<code style="font-weight: bold[^"]*">(.*?)</code>', html)
    assert names == ["echo", "echo" + MARK.format("U+200D ZERO WIDTH JOINER", "\\u200d")]
    label = (
        '<text x="72" y="31" text-anchor="end" font-size="11" fill="currentColor">'
        "echo\\u200d<title>echo\\u200d</title></text>"
    )
    assert label in html  # the timeline's label
    assert "<script>" not in html
    assert not any(is_hidden(char) for char in html)


def test_an_empty_answer_and_the_waiting_line():
    transcript = Transcript()
    assert transcript.to_text() == "[waiting for the model...]"
    assert 'class="meowgent-waiting"' in transcript.to_html()
    transcript.handle(TextDelta("Hel"))
    assert transcript.to_text() == "Hel" and "meowgent-waiting" not in transcript.to_html()
    transcript.handle(TurnEnd(1, None, 1))
    assert transcript.to_text() == "Hel\n[waiting for the model...]"
    transcript.handle(FinalAnswer(AgentResult(text="")))
    assert transcript.to_text() == "Hel"
    empty, _ = transcript_of([""])
    assert empty.to_text() == "[no answer]"


def test_a_turn_that_hit_the_token_limit_says_so_where_it_ended():
    paris = ToolCall("get_weather", {"city": "Paris"}, id="1")
    transcript = Transcript.from_events(
        [
            ToolCallEvent(paris, 1),
            ToolResultEvent(ToolResult(paris, "Paris: 21 degrees celsius")),
            TurnEnd(1, None, 1, finish_reason="length"),  # the call was complete; more may be missing
            TextDelta("It is 21 degrees in"),
            TurnEnd(2, None, 0, finish_reason="length"),
            FinalAnswer(AgentResult(text="It is 21 degrees in", turns=2)),
        ]
    )
    assert transcript.to_text() == (
        "[tool] get_weather(city='Paris') -> done\n"
        "  Paris: 21 degrees celsius\n"
        "[the answer hit the token limit (turn 1)]\n"
        "It is 21 degrees in\n"
        "[the answer hit the token limit (turn 2)]"
    )
    html = transcript.to_html()
    note = (
        '<div class="meowgent-token-limit" style="color: #b35900; font-weight: bold; opacity: 0.65;'
        ' font-size: 0.85em">the answer hit the token limit (turn {})</div>'
    )
    assert html.count('class="meowgent-token-limit"') == 2
    answer = '<div class="meowgent-text"><p>It is 21 degrees in</p></div>'
    # each where its turn ended: turn 1's at the end of its folded turn
    assert note.format(1) + "</details>" + answer + note.format(2) in html


def test_other_finish_reasons_add_nothing():
    events = [
        TextDelta("Done."),
        TurnEnd(1, None, 0, finish_reason="stop"),
        FinalAnswer(AgentResult(text="Done.")),
    ]
    assert Transcript.from_events(events).to_text() == "Done."
    assert TurnEnd(1, None, 0).finish_reason is None
    assert "meowgent-token-limit" not in Transcript.from_events(events).to_html()


# --- long runs: repeated calls, folded turns ---------------------------------------------------


def ticking(step: float = 0.5):
    """A clock that moves ``step`` seconds each time it is read."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def test_identical_calls_in_a_row_are_one_card_and_the_stop_says_why():
    transcript, result = transcript_of([call("get_weather", city="Rome")] * 8 + ["never read"])
    assert (result.stopped, result.turns) == ("repeated_failure", 3)
    assert transcript.to_text() == (
        "[tool] get_weather(city='Rome') -> error (x3)\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "  [the model was told not to repeat this call]\n"
        "[stopped: get_weather(city='Rome') failed the same way 3 times]"
    )
    html = transcript.to_html()
    assert (
        html.count('class="meowgent-card ') == 1 and "meowgent-turn" not in html
    )  # one card, the last turn's
    assert re.findall(r'<span class="meowgent-repeats"[^>]*>(.*?)</span>', html) == ["\u00d73"]
    assert re.findall(r'<pre class="meowgent-output"[^>]*>(.*?)</pre>', html, re.DOTALL) == [
        escape("Error: ValueError: no weather for Rome\n" + RAISED_FOR_ROME.replace("\n  ", "\n").strip())
    ]
    assert '">the model was told not to repeat this call</div>' in html
    assert '">stopped: get_weather(city=&#x27;Rome&#x27;) failed the same way 3 times</div>' in html
    assert "3 turns \u00b7 3 tool calls" in html  # the footer counts every call


def test_only_exact_repeats_in_a_row_are_merged():
    transcript, _ = transcript_of(
        [
            call("get_weather", city="Paris") * 2,  # two identical successes: merged
            call("get_weather", city="Rome")
            + call("get_weather", city="Oslo")
            + call("get_weather", city="Rome"),
            "Let me try again." + call("get_weather", city="Rome"),  # text between: not merged
            "Done.",
        ],
        repeat_calls=True,
    )
    assert transcript.to_text() == (
        "[tool] get_weather(city='Paris') -> done (x2)\n"
        "  Paris: 21 degrees celsius\n"
        "[tool] get_weather(city='Rome') -> error\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "[tool] get_weather(city='Oslo') -> done\n"
        "  Oslo: 9 degrees celsius\n"
        "[tool] get_weather(city='Rome') -> error\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "Let me try again.\n"
        "[tool] get_weather(city='Rome') -> error\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "  [the model was told not to repeat this call]\n"
        "Done."
    )


def test_finished_turns_fold_to_one_line_and_the_answer_stays_open():
    events = events_of(
        Agent(
            ScriptedModel(
                [
                    call("get_weather", city="Paris"),
                    "Now the rest."
                    + "".join(call("get_weather", city=c) for c in ("Oslo", "Rome", "Oslo", "Paris")),
                    "Paris 21, Oslo 9.",
                ]
            ),
            tools=[get_weather],
            repeat_calls=True,
        )
    )
    transcript = Transcript.from_events(events, clock=ticking())
    text = transcript.to_text()
    html = transcript.to_html()
    folds = re.findall(r'<details class="meowgent-turn[^"]*"[^>]*><summary[^>]*>(.*?)</summary>', html)
    # each call's own time (measured as the tool ran), then the turn's (this test's clock)
    folds = [re.sub(r'\(<span class="meowgent-duration">\d[^<]*</span>\)', "(RAN)", fold) for fold in folds]
    duration = ' \u00b7 the turn took <span class="meowgent-duration">{}</span>'
    assert folds == [
        "turn 1: get_weather(city=&#x27;Paris&#x27;) done (RAN)" + duration.format("2.00 s"),
        "turn 2: get_weather(city=&#x27;Oslo&#x27;) done (RAN), get_weather(city=&#x27;Rome&#x27;) error (RAN),"
        " get_weather(city=&#x27;Oslo&#x27;) done (RAN), and 1 more"
        + duration.format("7.50 s"),  # its text begun and ended, 4 calls, 4 starts, 4 results, its end
    ]
    # turn 2 had an error: it is not hidden behind its fold
    assert (
        html.count('<details class="meowgent-turn"') == 1
        and html.count('<details class="meowgent-turn meowgent-turn-failed" open') == 1
    )
    # the folded turns hold their text, cards and timeline; the answer comes after them
    second = html[html.rindex('<details class="meowgent-turn') : html.rindex("</details>")]
    assert (
        second.count('class="meowgent-card ') == 4
        and "Now the rest." in second
        and "meowgent-timeline" in second
    )
    assert html.index("Paris 21, Oslo 9.") > html.rindex("</details>")
    assert text == Transcript.from_events(events).to_text()  # folding leaves text/plain alone
    assert text.startswith(
        "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\nNow the rest.\n"
    )


def test_while_running_the_latest_turn_stays_open():
    paris = ToolCall("get_weather", {"city": "Paris"}, id="1")
    oslo = ToolCall("get_weather", {"city": "Oslo"}, id="2")
    transcript = Transcript(clock=ticking())
    for event in [
        ToolCallEvent(paris, 1),
        ToolResultEvent(ToolResult(paris, "21", duration=0.1)),
        TurnEnd(1, None, 1),
    ]:
        transcript.handle(event)
    assert "meowgent-turn" not in transcript.to_html()  # nothing newer yet: turn 1 is what there is to see
    transcript.handle(ToolCallEvent(oslo, 2))
    html = transcript.to_html()
    assert html.count('<details class="meowgent-turn"') == 1
    assert html.index('class="meowgent-card meowgent-status-running"') > html.index("</details>")
    transcript.handle(TextDelta("Also "))  # text after a call in the same turn: still one fold
    assert transcript.to_html().count("<details") == 1


def test_a_turn_without_calls_is_not_folded_and_the_turn_limit_folds_the_repeats():
    transcript, result = transcript_of(
        [call("get_weather", city="Rome")] * 4, max_repeated_failures=None, max_turns=4
    )
    assert result.stopped == "max_turns"
    assert transcript.to_text() == (
        "[tool] get_weather(city='Rome') -> error (x3)\n"
        "  Error: ValueError: no weather for Rome\n"
        f"{RAISED_FOR_ROME}\n"
        "[tool] get_weather(city='Rome') -> not run\n"
        "  Not run: the limit of 4 turns was reached; answer without tools.\n"
        "[stopped: the limit of 4 turns was reached]"
    )
    folds = re.findall(r"<summary[^>]*>(.*?) \(<span", transcript.to_html())
    assert folds == ["turns 1\u20133: get_weather(city=&#x27;Rome&#x27;) error \u00d73"]
    reminded, _ = transcript_of(
        ["No tools needed.", call("get_weather", city="Oslo"), "9 degrees."], tool_choice="required"
    )
    folded = reminded.to_html()
    assert folded.count('<details class="meowgent-turn"') == 1
    assert folded.index("No tools needed.") < folded.index("<details")  # turn 1 had no call: not folded


# --- the timeline -----------------------------------------------------------------------------


def bars(svg: str, css_class: str = "meowgent-bar") -> list[tuple[float, float]]:
    found = re.findall(rf'<rect class="{css_class}" x="([\d.]+)" y="\d+" width="([\d.]+)"', svg)
    return [(float(x), float(x) + float(width)) for x, width in found]


def test_parallel_calls_overlap_on_the_timeline():
    transcript, _ = transcript_of(
        [call("nap", seconds=0.2) + call("nap", seconds=0.2), call("nap", seconds=0.01), "Rested."],
        tools=[nap],
    )
    (svg,) = re.findall(r"<svg .*?</svg>", transcript.to_html())  # a turn with one call has none
    assert len(bars(svg)) == 2
    (a_start, a_end), (b_start, b_end) = bars(svg, "meowgent-run")
    assert max(a_start, b_start) < min(a_end, b_end), "the two naps ran at the same time"


def test_timeline_positions_follow_the_clock_and_show_the_approval_wait_apart():
    ticks = iter([0.0, 1.0, 1.0, 1.5, 2.5, 2.6, 3.0, 3.0, 3.0])
    transcript = Transcript(clock=lambda: next(ticks))
    slow, quick = ToolCall("slow", {}, id="1"), ToolCall("quick", {}, id="2")
    for event in [
        ToolCallEvent(slow, 1),  # 1.0
        ToolCallEvent(quick, 1),  # 1.0
        ApprovalRequested((quick,)),  # 1.5: the model's answer is complete
        ApprovalEvent(quick, Approved()),  # 2.5: a person clicked
        ToolResultEvent(ToolResult(quick, "ok", duration=0.1)),  # 2.6
        ToolResultEvent(ToolResult(slow, "ok", duration=1.0)),  # 3.0
        TurnEnd(1, None, 2),
        FinalAnswer(AgentResult(text="")),
    ]:
        transcript.handle(event)
    svg = re.search(r"<svg .*?</svg>", transcript.to_html()).group(0)
    # 398 px of bar area (right of a 70 px label column) for the 2 s from the first call to the last result.
    assert bars(svg) == [(70.0, 468.0), (70.0, 388.4)]
    assert bars(svg, "meowgent-wait") == [(169.5, 368.5)]  # quick waited 1 s for approval...
    assert bars(svg, "meowgent-run") == [(269.0, 468.0), (368.5, 388.4)]  # ...and ran for 0.1 s
    assert "<title>quick(): 1.60 s in all, 1.00 s waiting for approval, 100 ms running</title>" in svg
    assert "<title>slow(): 2.00 s in all, 1.00 s running</title>" in svg
    assert ">2.00 s</text></svg>" in svg


def test_long_tool_names_are_shortened_in_the_timeline_with_the_full_name_as_a_tooltip():
    long = ToolCall("fetch_the_quarterly_sales_report_by_region", {}, id="1")
    short = ToolCall("add", {}, id="2")
    transcript = Transcript.from_events(
        [
            ToolCallEvent(long, 1),
            ToolCallEvent(short, 1),
            ToolResultEvent(ToolResult(short, "1", duration=0.0)),
        ]
    )
    svg = re.search(r"<svg .*?</svg>", transcript.to_html()).group(0)
    labels = re.findall(
        r'<text x="(\d+)" y="\d+" text-anchor="end"[^>]*>(.*?)<title>(.*?)</title></text>', svg
    )
    # 28 characters fit in the widest label column (197 px); a longer name ends in an ellipsis.
    assert labels == [
        ("191", "fetch_the_quarterly_sales_r\u2026", "fetch_the_quarterly_sales_report_by_region"),
        ("191", "add", "add"),
    ]


# --- Markdown ---------------------------------------------------------------------------------


CODE = '<code style="background: rgba(127,127,127,0.15); padding: 0 0.2em; border-radius: 3px">'
MONO = (
    "font-family: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas,"
    " 'DejaVu Sans Mono', 'Liberation Mono', monospace)"
)
PRE = f'<pre style="background: rgba(127,127,127,0.12); padding: 0.5em; border-radius: 4px; overflow-x: auto; {MONO}">'


def test_markdown_as_commonmark_reads_it():
    text = (
        "# Result\n\nIt is **21** degrees, *warm*, see `get_weather()` and "
        "[the map](https://example.org/?a=1&b=2).\n"
        "Second line.\n\n- one\n- two\n  continued\n\n1. first\n2. second\n\n```python\nprint('<hi>')\n```\n"
        "After a fence ```not code```.\n\n```\nunclosed <fence>"
    )
    assert markdown_html(text) == (
        "<h3>Result</h3>"
        "<p>It is <strong>21</strong> degrees, <em>warm</em>, see "
        f"{CODE}get_weather()</code>"
        ' and <a href="https://example.org/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">'
        "the map</a>."
        "<br>Second line.</p>"
        "<ul><li>one</li><li>two<br>continued</li></ul>"  # a line break in an item shows, as in a paragraph
        "<ol><li>first</li><li>second</li></ol>"
        f'{PRE}<code class="language-python">print(&#x27;&lt;hi&gt;&#x27;)</code></pre>'
        f"<p>After a fence {CODE}not code</code>.</p>"
        f"{PRE}<code>unclosed &lt;fence&gt;</code></pre>"
    )
    assert markdown_html("2 * 3 * 4 and **unclosed") == "<p>2 * 3 * 4 and **unclosed</p>"


def test_raw_html_in_markdown_comes_out_inert():
    text = '<script>alert(1)</script>\n\nA <img src=x onerror="alert(1)"> and <b>bold</b> & co.'
    assert markdown_html(text) == (
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
        "<p>A &lt;img src=x onerror=&quot;alert(1)&quot;&gt; and &lt;b&gt;bold&lt;/b&gt; &amp; co.</p>"
    )


@pytest.mark.parametrize(
    ("text", "html"),
    [
        (
            "[a](https://x.org/a)",
            '<p><a href="https://x.org/a" target="_blank" rel="noopener noreferrer">a</a></p>',
        ),
        (
            "[a](http://x.org)",
            '<p><a href="http://x.org" target="_blank" rel="noopener noreferrer">a</a></p>',
        ),
        ("[a](javascript:alert(1))", "<p>[a](javascript:alert(1))</p>"),
        ("[a](JavaScript:alert(1))", "<p>[a](JavaScript:alert(1))</p>"),
        ("[a](data:text/html,<b>x</b>)", "<p>[a](data:text/html,&lt;b&gt;x&lt;/b&gt;)</p>"),
        ("[a](vbscript:x)", "<p>[a](vbscript:x)</p>"),
        ("[a](file:///etc/passwd)", "<p>[a](file:///etc/passwd)</p>"),
        ("[a](/relative)", "<p>[a](/relative)</p>"),
        (
            '[a](https://x.org/"onmouseover=alert(1))',
            '<p><a href="https://x.org/%22onmouseover=alert(1)"'
            ' target="_blank" rel="noopener noreferrer">a</a></p>',
        ),
        # an image is not fetched (a model's answer could call home): its text and link show
        (
            "![cat](https://x.org/c.png)",
            '<p>!<a href="https://x.org/c.png" target="_blank" rel="noopener noreferrer">cat</a></p>',
        ),
    ],
)
def test_links_keep_only_http_and_https(text, html):
    assert markdown_html(text) == html


@pytest.mark.parametrize(
    ("text", "html"),
    [  # where CommonMark reads what the old hand-written subset showed literally
        ("1 \\* 2 &amp; 3", "<p>1 * 2 &amp; 3</p>"),
        ("Title\n=====", "<h3>Title</h3>"),
        ("a\n\n---\n\nb", "<p>a</p><hr><p>b</p>"),
        ("> quoted", "<blockquote><p>quoted</p></blockquote>"),
        ("- a\n  - b", "<ul><li>a<ul><li>b</li></ul></li></ul>"),
        ("3. third", '<ol start="3"><li>third</li></ol>'),
        ("_em_ __strong__", "<p><em>em</em> <strong>strong</strong></p>"),
    ],
)
def test_markdown_that_the_old_subset_left_as_text(text, html):
    assert markdown_html(text) == html


# --- the tools view ---------------------------------------------------------------------------

TOOLS = [get_weather, delete_file, slow_lookup]


def test_tools_table_then_the_exact_xml():
    view = ToolsView(TOOLS)
    assert view.to_text() == (
        "name         description                          approval  timeout\n"
        "get_weather  Get the current weather for a city.  no        default\n"
        "delete_file  Delete a file.                       yes       5 s\n"
        "slow_lookup  Look something up, slowly.           no        0.05 s\n"
        "\n" + render_tools_xml(TOOLS)
    )
    html = view.to_html()
    assert html.startswith('<div class="meowgent-tools-view"><table class="meowgent-tools"><thead><tr>')
    assert '<tr><td style="text-align: left"><code>delete_file</code></td>' in html
    assert html.count("<tr>") == 4
    assert '<span style="color: #008000; font-weight: bold">&lt;tool</span>' in html  # Pygments XML


def test_tools_modes_give_the_exact_forms():
    assert ToolsView(TOOLS, mode="xml").to_text() == render_tools_xml(TOOLS)
    assert ToolsView(TOOLS, mode="json").to_text() == json.dumps(tools_json_schema(TOOLS), indent=2)
    assert ToolsView(TOOLS, mode="text").to_text() == render_tools_text(TOOLS)
    assert ToolsView(Toolbox("box", TOOLS), mode="xml").to_text() == render_tools_xml(TOOLS)
    assert "<pre " in ToolsView(TOOLS, mode="text").to_html()
    assert '<div class="highlight"' in ToolsView(TOOLS, mode="json").to_html()
    with pytest.raises(ValueError, match=r"^mode must be 'all', 'xml', 'json' or 'text', got 'yaml'$"):
        ToolsView(TOOLS, mode="yaml")


def test_one_tool_and_no_tools():
    assert tool_mimebundle(delete_file)["text/plain"] == (
        "name         description     approval  timeout\n"
        "delete_file  Delete a file.  yes       5 s\n"
        "\n"
        '<tool name="delete_file">Delete a file.\n<param name="path"/>\n</tool>'
    )
    assert ToolsView(delete_file, mode="xml").to_text() == delete_file.to_xml()
    assert ToolsView(delete_file, mode="text").to_text() == delete_file.to_string()
    assert ToolsView([]).to_text() == "(no tools)\n\n<tools>\n</tools>"
    assert "(no tools)" in ToolsView([]).to_html()


def test_a_tools_examples_show_in_every_form():
    @tool(examples=[{"city": "Paris", "unit": "fahrenheit"}, {"city": "<Oslo>"}])
    def forecast(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        """Forecast the weather."""
        return city

    assert ToolsView(forecast).to_text() == (
        "name      description            approval  timeout\n"
        "forecast  Forecast the weather.  no        default\n"
        "\n"
        '<tool name="forecast">Forecast the weather.\n'
        '<param name="city"/>\n'
        '<param name="unit" enum="celsius|fahrenheit" default="celsius"/>\n'
        '<example>{"city":"Paris","unit":"fahrenheit"}</example>\n'
        '<example>{"city":"&lt;Oslo&gt;"}</example>\n'
        "</tool>"
    )
    schema = json.loads(ToolsView([forecast], mode="json").to_text())[0]["function"]["parameters"]
    assert schema["examples"] == [{"city": "Paris", "unit": "fahrenheit"}, {"city": "<Oslo>"}]
    assert (
        ToolsView(forecast, mode="text")
        .to_text()
        .endswith(', Examples: {"city":"Paris","unit":"fahrenheit"}; {"city":"<Oslo>"}')
    )
    html = ToolsView(forecast).to_html()
    assert '<span style="color: #008000; font-weight: bold">&lt;example&gt;</span>{"city":"' in html
    assert "&amp;lt;</span>Oslo<" in html and "<Oslo>" not in html  # the XML's escape, shown escaped


# --- showing a run in a real IPython shell ----------------------------------------------------


@pytest.fixture
def ip():
    start_ipython()  # once per process; later calls return None
    shell = get_ipython()
    yield shell
    for name in ("agent", "show_run", "result"):
        shell.user_ns.pop(name, None)


def run_cell(shell, agent: Agent, live: bool):
    shell.user_ns.update(agent=agent, show_run=show_run)
    with capture_output() as captured:
        outcome = shell.run_cell(f"result = await show_run(agent, 'How warm is it?', live={live})")
    return captured, outcome


WEATHER = [call("get_weather", city="Paris"), "It is " + "very " * 40 + "warm: 21 degrees in Paris."]
WEATHER_TEXT = (
    "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\nIt is "
    + "very " * 40
    + "warm: 21 degrees in Paris."
)


def test_live_display_shows_at_once_and_updates(ip):
    captured, outcome = run_cell(ip, Agent(ScriptedModel(WEATHER), tools=[get_weather]), live=True)
    outcome.raise_error()
    first, *updates = captured.outputs
    display_id = first.transient["display_id"]
    assert not first.update and first.data["text/plain"] == "[waiting for the model...]"
    assert updates and all(o.update and o.transient == {"display_id": display_id} for o in updates)
    assert updates[-1].data["text/plain"] == WEATHER_TEXT
    assert ip.user_ns["result"].text.endswith("21 degrees in Paris.")
    # The call and its result redraw at once; the 44 text deltas are throttled to a few redraws.
    texts = [o.data["text/plain"] for o in updates]
    assert "[tool] get_weather(city='Paris') -> running" in texts
    assert len(updates) < 10


def test_headless_displays_once_at_the_end(ip):
    captured, outcome = run_cell(ip, Agent(ScriptedModel(WEATHER), tools=[get_weather]), live=False)
    outcome.raise_error()
    (only,) = captured.outputs
    assert not only.update and not only.transient
    assert only.data["text/plain"] == WEATHER_TEXT
    assert only.data["text/html"].count('class="meowgent-card ') == 1


def test_an_error_is_shown_then_raised(ip):
    agent = Agent(ScriptedModel([call("get_weather", city="Paris")]), tools=[get_weather])
    captured, outcome = run_cell(ip, agent, live=False)
    assert isinstance(outcome.error_in_exec, ModelError)
    assert str(outcome.error_in_exec).startswith("ScriptedModel ")
    (only,) = captured.outputs
    # The cell shows the raised error's message; the transcript names it once, not again.
    assert only.data["text/plain"] == (
        "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\n[error] ModelError, shown below"
    )
    assert (
        '<pre class="meowgent-error" style="color: #d32f2f">[error] ModelError, shown below</pre>'
        in (only.data["text/html"])
    )


def test_text_before_a_pause_is_drawn_by_the_timer(ip):
    async def feed(view: LiveDisplay):
        view.start()
        view.handle(TextDelta("Let me check."))  # within the interval: drawn by a timer
        view.handle(TextDelta(" One moment."))  # the timer is already set
        drawn = len(captured.outputs)
        await asyncio.sleep(0.3)  # a pause: no event comes to trigger a redraw
        view.close()
        return drawn

    with capture_output() as captured:
        drawn = asyncio.run(feed(LiveDisplay(live=True, interval=0.1)))
    texts = [o.data["text/plain"] for o in captured.outputs]
    assert drawn == 1
    assert texts == ["[waiting for the model...]", "Let me check. One moment.", "Let me check. One moment."]
    assert [o.update for o in captured.outputs] == [False, True, True]


def test_an_interrupted_run_shows_the_calls_that_did_not_finish(ip):
    agent = Agent(
        ScriptedModel([call("get_weather", city="Oslo") + call("nap", seconds=0.5)]), tools=[get_weather, nap]
    )

    async def interrupt():
        task = asyncio.ensure_future(show_run(agent, "Go.", live=False))
        await asyncio.sleep(0.15)
        task.cancel()
        await task

    with (
        capture_output() as captured,
        pytest.raises(
            RunInterrupted,
            match=r"^stopped by an interrupt after 1 turn, 2 tool calls\. The conversation keeps",
        ),
    ):
        asyncio.run(interrupt())
    (only,) = captured.outputs
    assert only.data["text/plain"] == (
        "[tool] get_weather(city='Oslo') -> done\n"
        "  Oslo: 9 degrees celsius\n"
        "[tool] nap(seconds=0.5) -> interrupted while running"
    )  # the error raised to the cell says how far the run got: once, not also in the transcript
    assert 'class="meowgent-card meowgent-status-interrupted"' in only.data["text/html"]
    assert "interrupt" not in only.data["text/html"].replace("meowgent-status-interrupted", "").replace(
        ">interrupted while running<", ""
    )


# --- a real kernel ----------------------------------------------------------------------------

NOTEBOOK_SETUP = '''\
from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.notebook.views.display import show_run

@tool
def get_weather(city: str) -> str:
    """Get the weather."""
    return f"{city}: 21 degrees celsius"

def weather_agent():
    return Agent(ScriptedModel([
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        "It is 21 degrees in Paris.",
    ]), tools=[get_weather])
'''


def test_a_notebook_on_a_real_kernel(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(NOTEBOOK_SETUP),
        nbformat.v4.new_code_cell(
            'result = await show_run(weather_agent(), "How warm is it in Paris?", live=False)'
        ),
        nbformat.v4.new_code_cell(
            'result = await show_run(weather_agent(), "How warm is it in Paris?", live=True)'
        ),
    ]
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    expected = (
        "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\nIt is 21 degrees in Paris."
    )
    (headless,) = notebook.cells[1].outputs
    assert headless.output_type == "display_data" and headless.data["text/plain"] == expected
    assert "display_id" not in headless.get("transient", {})
    # nbclient applies display updates to the saved output (nbval does not: hence live=False there).
    (live,) = notebook.cells[2].outputs
    assert live.data["text/plain"] == expected


def test_a_call_cut_by_the_token_limit_is_shown_as_cut_and_never_runs():
    ran = []

    @tool
    def note(text: str) -> str:
        """Save a note."""
        ran.append(text)
        return "saved"

    cut = [
        'Saving. <tool_call>{"name": "note", "arguments": {"text": "rm -rf /home/old_bu',
        ModelChunk(done=True, finish_reason="length"),
    ]
    transcript, result = transcript_of([cut, "Sorry."], tools=(note,))
    assert ran == []
    assert [(r.kind, r.output) for r in result.tool_results] == [
        (
            "parse_error",
            "Error: could not read a tool call: the answer hit the token limit before this call was complete,"
            " so it was not run; write the call again, with shorter arguments\n"
            'The text was: {"name": "note", "arguments": {"text": "rm -rf /home/old_bu',
        )
    ]
    assert transcript.to_text().splitlines()[1:] == [
        "[tool] (unreadable) -> unreadable",
        "  Error: could not read a tool call: the answer hit the token limit before this call was complete, so it"
        " was not run; write the call again, with shorter arguments",
        '  The text was: {"name": "note", "arguments": {"text": "rm -rf /home/old_bu',
        "[the answer hit the token limit (turn 1)]",
        "Sorry.",
    ]


# --- colours and fonts ------------------------------------------------------------------------


def contrast(a: str, b: str) -> float:
    """The WCAG 2 contrast ratio of two #rrggbb colours."""

    def luminance(color: str) -> float:
        channels = [int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted([luminance(a), luminance(b)], reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_status_colours_read_on_light_and_dark_themes():
    from meowgent_nb.notebook.views._transcript_html import STATUS_COLORS

    for status, color in STATUS_COLORS.items():
        assert contrast(color, "#ffffff") >= 4.5, f"white text on the {status} pill"
        for background in ("#ffffff", "#111111", "#222222"):  # JupyterLab light, dark
            assert contrast(color, background) >= 3.0, f"the {status} border and bar on {background}"


def test_boxes_are_monospace_and_wrap_between_words_also_outside_jupyterlab():
    transcript, _ = transcript_of([call("get_weather", city="Paris"), "Done."])
    html = transcript.to_html() + ToolsView([get_weather]).to_html()
    pres = re.findall(r'<pre class="meowgent-(?:arguments|output)" style="([^"]*)"', html)
    xml = re.findall(r'<div class="highlight"[^>]*><pre style="([^"]*)"', html)
    assert len(pres) == 2 and len(xml) == 1
    for style in pres + xml:
        # JupyterLab's code font where it is defined, else a stack that ends in the generic family.
        assert "font-family: var(--jp-code-font-family, ui-monospace," in style and "monospace)" in style
        # JupyterLab's output CSS breaks words anywhere ("a c / ity"); these wrap between words.
        assert "white-space: pre-wrap; word-break: normal; overflow-wrap: break-word" in style
    assert "background: #f8f8f8; color: #1f1f1f" in xml[0]  # the light Pygments colours keep a light box
