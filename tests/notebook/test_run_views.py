"""What a run's transcript says of its calls (issue 30): the arguments that ran, each call's own
time, a running call's counter against its time limit, and failures never hidden behind a fold.

Transcripts are built from the events of real `Agent` runs on `ScriptedModel`s, with real tools
and approvers; the live counter is watched through a real IPython shell.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from meowgent_nb import Agent, Approved, Denied, ScriptedModel, tool
from meowgent_nb._html import seconds
from meowgent_nb.notebook.views.display import LiveDisplay
from meowgent_nb.notebook.views.transcript import Transcript
from tests.support.tool_calls import call


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"Deleted {path}."


@tool
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


@tool(timeout=0.2)
def sleepy(seconds: float) -> str:
    """Sleep."""
    time.sleep(seconds)
    return "slept"


@tool(approval=True)
def scale(factor: int, unit: str = "m") -> str:
    """Scale by a factor."""
    return f"scaled by {factor} {unit}"


class Editing:
    """An approver that approves each call with the arguments it is given, in order (None: the model's)."""

    def __init__(self, *arguments: dict[str, Any] | None):
        self.arguments = list(arguments)

    async def approve(self, requests: list) -> list:
        return [Approved(arguments=self.arguments.pop(0)) for _ in requests]


class Refusing:
    async def approve(self, requests: list) -> list:
        return [Denied("no.") for _ in requests]


def ticking(step: float = 0.5):
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def run(turns: list[str], tools: list, approver: Any = None, clock: Any = None) -> tuple[Transcript, Any]:
    agent = Agent(
        ScriptedModel(turns), tools=tools, approver=approver, repeat_calls=True, max_repeated_failures=None
    )
    transcript = Transcript(clock=clock or time.perf_counter)

    async def follow() -> None:
        async for event in agent.stream("Go."):
            transcript.handle(event)

    asyncio.run(follow())
    return transcript, transcript.result


def folds(html: str) -> list[tuple[str, bool]]:
    """Each folded turn's line (tags dropped, call times as RAN, the turn's as TURN) and whether it is open."""
    out = []
    for attributes, line in re.findall(
        r'<details class="meowgent-turn[^"]*"([^>]*)><summary[^>]*>(.*?)</summary>', html
    ):
        line = re.sub(r'\(<span class="meowgent-duration">[^<]*</span>\)', "(RAN)", line)
        line = re.sub(r'<span class="meowgent-duration">[^<]*</span>', "TURN", line)
        out.append((line.replace("&#x27;", "'"), " open" in attributes))
    return out


# --- 3. the arguments that ran ----------------------------------------------------------------


def test_an_edited_call_shows_what_ran_in_the_fold_the_card_and_the_timeline():
    transcript, result = run(
        [call("delete_file", path="old.txt") + call("divide", a=6, b=3), "Done."],
        [delete_file, divide],
        Editing({"path": "keep_me.txt"}),
    )
    assert result.tool_results[0].output.endswith("Deleted keep_me.txt.")
    html = transcript.to_html()
    assert folds(html) == [
        (
            "turn 1: delete_file(path='keep_me.txt') (edited) done (RAN), divide(a=6, b=3) done (RAN) · the turn took TURN",
            False,
        )
    ]
    assert transcript.to_text().split("\n")[:2] == [
        "[tool] delete_file(path='keep_me.txt') (edited) -> done (approved)",
        "  the model asked for: path='old.txt'",
    ]
    card = html[html.index('<div class="meowgent-card') : html.index("meowgent-output")]
    assert '<span class="meowgent-edited"' in card and "old.txt" in card
    arguments = re.search(r'<pre class="meowgent-arguments"[^>]*>(.*?)</pre>', card, re.DOTALL).group(1)
    assert arguments.replace("&quot;", '"') == (
        'ran with, changed by you:\n{\n  "path": "keep_me.txt"\n}\nthe model asked for:\n{\n  "path": "old.txt"\n}'
    )
    svg = re.search(r"<svg .*?</svg>", html).group(0)
    assert ">delete_file (edited)<title>" in svg
    assert "<title>delete_file(path=&#x27;keep_me.txt&#x27;) (edited): " in svg
    assert "old.txt" not in svg


def test_what_ran_is_the_validated_edit_and_an_edit_equal_to_the_models_is_not_marked():
    transcript, _ = run(
        [call("scale", factor=2) + call("scale", factor=3), "ok"],
        [scale],
        Editing({"factor": "7"}, {"factor": 3}),  # "7" is validated to 7; 3 is what the model asked for
    )
    lines = [line for line in transcript.to_text().split("\n") if line.startswith("[tool]")]
    assert lines == [
        "[tool] scale(factor=7, unit='m') (edited) -> done (approved)",
        "[tool] scale(factor=3) -> done (approved)",
    ]


def test_two_calls_edited_differently_are_never_shown_as_one():
    transcript, _ = run(
        [call("delete_file", path="x"), call("delete_file", path="x"), "ok"],
        [delete_file],
        Editing({"path": "a"}, {"path": "b"}),
    )
    lines = [line for line in transcript.to_text().split("\n") if line.startswith("[tool]")]
    assert lines == [
        "[tool] delete_file(path='a') (edited) -> done (approved)",
        "[tool] delete_file(path='b') (edited) -> done (approved)",
    ]


def test_a_refused_edit_shows_the_persons_arguments_marked_and_nothing_ran():
    transcript, result = run([call("scale", factor=2), "ok"], [scale], Editing({"factor": "many"}))
    assert result.tool_results[0].kind == "invalid_arguments"
    assert transcript.to_text().split("\n")[:2] == [
        "[tool] scale(factor='many') (edited) -> invalid arguments (approved)",
        "  the model asked for: factor=2",
    ]
    assert "changed by you to:" in transcript.to_html()  # not "ran with": it did not run


# --- 4. times ---------------------------------------------------------------------------------


def test_the_fold_says_each_calls_own_time_and_the_turns_apart():
    transcript, result = run(
        [call("divide", a=1, b=0) + call("divide", a=4, b=2), "ok"], [divide], clock=ticking()
    )
    took = [seconds(r.duration) for r in result.tool_results]
    (line,) = re.findall(r"<summary[^>]*>(turn 1: .*?)</summary>", transcript.to_html())
    assert line == (
        f'divide(a=1, b=0) error (<span class="meowgent-duration">{took[0]}</span>), '
        f'divide(a=4, b=2) done (<span class="meowgent-duration">{took[1]}</span>)'
        ' \u00b7 the turn took <span class="meowgent-duration">3.50 s</span>'
    ).join(["turn 1: ", ""]).replace("&#x27;", "'").replace("'", "&#x27;")
    # and the card says the same time as its fold
    assert re.findall(
        r'>error</span> <span class="meowgent-duration"[^>]*>([^<]*)<', transcript.to_html()
    ) == [took[0]]


def test_a_timed_out_call_says_its_limit_in_the_fold_not_the_turns_time():
    transcript, _ = run([call("sleepy", seconds=2), "ok"], [sleepy], clock=ticking(10.0))
    assert folds(transcript.to_html()) == [
        ("turn 1: sleepy(seconds=2) timed out (RAN) · the turn took TURN", True)
    ]
    assert (
        '(<span class="meowgent-duration">200 ms</span>) \u00b7 the turn took <span class="meowgent-duration">40.0 s</span>'
        in transcript.to_html()
    )


def test_a_running_card_counts_from_when_it_started_and_shows_its_limit():
    clock = [0.0]
    transcript = Transcript(clock=lambda: clock[0])
    from meowgent_nb import ToolCall, ToolResult
    from meowgent_nb.events import ToolCallEvent, ToolResultEvent, ToolRunning

    limited, unlimited = ToolCall("fetch", {"url": "u"}, id="1"), ToolCall("crunch", {}, id="2")
    transcript.handle(ToolCallEvent(limited, 1))
    transcript.handle(ToolCallEvent(unlimited, 1))
    clock[0] = 3.0  # the model finished its answer; the calls start
    transcript.handle(ToolRunning(limited, {"url": "u"}, 30.0))
    transcript.handle(ToolRunning(unlimited, {}, None))
    assert transcript.clock_running  # a live display redraws it every tick
    clock[0] = 15.7
    counters = re.findall(
        r'>running</span> <span class="meowgent-elapsed"[^>]*>([^<]*)<', transcript.to_html()
    )
    assert counters == ["12 s of 30 s", "12 s"]
    transcript.handle(ToolResultEvent(ToolResult(limited, "page", duration=12.7)))
    transcript.handle(ToolResultEvent(ToolResult(unlimited, "42", duration=12.7)))
    assert not transcript.clock_running and "meowgent-elapsed" not in transcript.to_html()
    assert transcript.to_text() == "[tool] fetch(url='u') -> done\n  page\n[tool] crunch() -> done\n  42"


@pytest.fixture
def ip():
    start_ipython()
    yield get_ipython()


def test_a_live_cell_counts_a_running_call_up_and_stops_when_it_ends(ip):
    @tool(timeout=4)
    def wait(seconds: float) -> str:
        """Wait."""
        time.sleep(seconds)
        return "waited"

    agent = Agent(ScriptedModel([call("wait", seconds=2.3), "Done."]), tools=[wait])

    async def watch() -> int:
        view = LiveDisplay(live=True, tick=0.05)
        async for event in agent.stream("Go."):
            view.handle(event)
        drawn = len(captured.outputs)
        await asyncio.sleep(0.3)  # nothing ticks after the run's end
        assert len(captured.outputs) == drawn
        view.close()

    with capture_output() as captured:
        asyncio.run(watch())
    htmls = [o.data["text/html"] for o in captured.outputs]
    counted = [re.findall(r'>running</span> <span class="meowgent-elapsed"[^>]*>([^<]*)<', h) for h in htmls]
    seen = [c[0] for c in counted if c]
    assert list(dict.fromkeys(seen)) == [
        "0 s of 4 s",
        "1 s of 4 s",
        "2 s of 4 s",
    ]  # redrawn while the tool ran
    after = [i for i, h in enumerate(htmls) if "meowgent-status-done" in h]
    assert after and not any(counted[i] for i in after)  # the counter stopped with the call


# --- 5. failures are not hidden ---------------------------------------------------------------

OUTCOMES = {
    "error": ([call("divide", a=1, b=0)], [divide], None),
    "timed out": ([call("sleepy", seconds=1)], [sleepy], None),
    "denied": ([call("delete_file", path="a")], [delete_file], Refusing()),
    "unknown tool": ([call("nowhere")], [divide], None),
    "invalid arguments": ([call("divide", a="x", b=1)], [divide], None),
    "done": ([call("divide", a=4, b=2)], [divide], None),
}


@pytest.mark.parametrize("label", list(OUTCOMES))
def test_a_turn_with_a_failed_call_stays_open_and_says_so(label):
    turns, tools, approver = OUTCOMES[label]
    transcript, _ = run([*turns, "ok"], tools, approver)
    ((line, opened),) = folds(transcript.to_html())
    assert f" {label}" in line
    assert opened == (label != "done")


def test_one_failure_among_good_calls_and_repeats_across_turns_keep_their_turns_open():
    transcript, _ = run(
        [
            call("divide", a=4, b=2) + call("divide", a=1, b=0),
            call("divide", a=1, b=0),
            call("divide", a=9, b=3),
            "ok",
        ],
        [divide],
    )
    assert folds(transcript.to_html()) == [  # the repeated failure spans turns 1 and 2: one fold
        (
            "turns 1\u20132: divide(a=4, b=2) done (RAN), divide(a=1, b=0) error \u00d72 (RAN) · the turn took TURN",
            True,
        ),
        ("turn 3: divide(a=9, b=3) done (RAN) · the turn took TURN", False),
    ]
