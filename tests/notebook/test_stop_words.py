"""The words a run's end uses: a repeated call that succeeded is not blamed as failing, and a call
stopped before it ran does not read as a tool killed mid-run (nor counts as a call made)."""

from __future__ import annotations

import re

from meowgent_nb import Approved
from meowgent_nb.agent.result import RepeatedFailure
from meowgent_nb.events import ApprovalEvent, ApprovalRequested, ToolCallEvent, ToolRunning
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.tools.calls import ToolCall
from tests.notebook.test_display import call, transcript_of


def test_a_call_repeated_after_it_succeeded_stops_the_run_without_saying_it_failed():
    transcript, result = transcript_of([call("get_weather", city="Paris")] * 8 + ["never read"])
    assert (result.stopped, result.turns) == ("repeated_failure", 4)
    assert result.repeated_failure == RepeatedFailure(result.tool_results[-1], 3, answered=True)
    assert transcript.to_text().split("\n")[0] == "[tool] get_weather(city='Paris') -> done"
    assert transcript.to_text().split("\n")[-1] == (
        "[stopped: the model asked for get_weather(city='Paris') 3 more times after it had the result]"
    )
    assert re.findall(r'class="meowgent-stopped"[^>]*>(.*?)</div>', transcript.to_html()) == [
        "stopped: the model asked for get_weather(city=&#x27;Paris&#x27;) 3 more times after it had the result"
    ]


def test_a_repeated_failure_keeps_its_words():
    transcript, result = transcript_of([call("get_weather", city="Rome")] * 8 + ["never read"])
    assert result.repeated_failure == RepeatedFailure(result.tool_results[-1], 3, answered=False)
    assert (
        transcript.to_text().split("\n")[-1]
        == "[stopped: get_weather(city='Rome') failed the same way 3 times]"
    )


def test_stop_names_calls_waiting_for_approval_queued_and_running_apart_and_counts_only_what_ran():
    asked, approved, running = (ToolCall("write_file", {"path": f"{n}.txt"}) for n in ("a", "b", "c"))
    transcript = Transcript(clock=iter(range(1000)).__next__)
    for event in [
        *(ToolCallEvent(each, 1) for each in (asked, approved, running)),
        ApprovalRequested((asked, approved)),
        ApprovalEvent(approved, Approved("approved by you")),
        ToolRunning(running, {"path": "c.txt"}, None),
    ]:
        transcript.handle(event)
    transcript.stop()
    assert transcript.to_text() == (
        "[tool] write_file(path='a.txt') -> not run (stopped before approval)\n"
        "[tool] write_file(path='b.txt') -> not run (stopped before it ran) (approved by you)\n"
        "[tool] write_file(path='c.txt') -> interrupted while running\n"
        "[stopped by you after 1 turn, 1 tool call (2 not run)]"
    )
    html = transcript.to_html()
    assert re.findall(r'class="meowgent-card meowgent-status-([a-z-]+)"', html) == [
        "stopped-waiting",
        "stopped-queued",
        "interrupted",
    ]
    assert "stopped by you after 1 turn, 1 tool call (2 not run)" in html
