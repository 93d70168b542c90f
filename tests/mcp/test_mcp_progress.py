"""A server's progress and log messages, with a real SDK server (both protocols over stdio, and
streamable HTTP): the box's log
exact (levels held back, the last 200 kept, read-only), progress ignored outside an agent run,
and inside one handed to the approver throttled with the newest always sent, log lines at warning
and above in the call's card (bounded), and the card's text and HTML while it runs and after.
``%tools mcp log NAME`` through a real IPython shell."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import math
import sys
import time
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb.agent.running_call import RUNNING_CALL, RunningCall
from meowgent_nb.events import ToolCallEvent, ToolResultEvent
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.mcp.client.progress import LogEntry, Progress
from meowgent_nb.notebook.views.transcript import Transcript
from meowgent_nb.tools.calls import ToolCall, ToolResult
from tests.mcp_servers.serving import http_server

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "progress_server.py")
LONG = "x" * 199 + "\u2026"
LOGGED = [
    ("info", "counter", '{"steps": 3, "unit": "step"}'),
    ("warning", "counter", "the count <b>ran</b> long"),
    ("error", None, "disk almost full\u202e"),
]


@pytest.fixture(scope="module", params=["new", "legacy", "http"])
def box(request, tmp_path_factory):
    if request.param == "http":
        with (
            http_server(SERVER, tmp_path_factory.mktemp("progress-http")) as url,
            McpToolbox("p", url=url) as made,
        ):
            yield made
        return
    args = [] if request.param == "new" else ["legacy"]
    with McpToolbox("p", [sys.executable, SERVER, *args]) as made:
        yield made


def logged(box: McpToolbox, since: int = 0) -> list[tuple[str, str | None, str]]:
    return [(e.level, e.logger, e.text) for e in box.log[since:]]


def test_outside_an_agent_run_progress_is_ignored_and_the_log_is_kept_exactly(box):
    before, start = len(box.log), time.time()
    assert box["p_count"].run({"steps": 3}) == "counted to 3"
    assert box["p_tick"].run({"steps": 2}) == "ticked 2 times"
    assert logged(box, before) == LOGGED  # no debug: the box keeps info and above by default
    assert all(start <= e.time <= time.time() for e in box.log[before:])
    assert isinstance(box.log, tuple) and box.notes.level == "info"
    with pytest.raises(dataclasses.FrozenInstanceError):
        box.log[-1].text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("protocol", [[], ["legacy"]])
@pytest.mark.parametrize(("level", "kept"), [("debug", 4), ("error", 1)])
def test_the_log_level_holds_back_what_is_less_severe(protocol, level, kept):
    with McpToolbox("p", [sys.executable, SERVER, *protocol], log_level=level) as box:
        box["p_count"].run({"steps": 3})
        assert logged(box) == [("debug", "counter", "starting the count"), *LOGGED][-kept:]


def test_a_bad_log_level_is_refused_before_the_server_starts():
    with pytest.raises(ValueError) as caught:
        McpToolbox("p", [sys.executable, SERVER], log_level="loud")
    assert str(caught.value) == (
        "McpToolbox 'p': log_level must be one of debug, info, notice, warning, error, critical, alert,"
        " emergency, got 'loud'"
    )


def test_the_box_keeps_the_last_200_messages(box):
    box["p_chatty"].run({"warnings_": 250})
    assert len(box.log) == 200
    assert [e.text for e in box.log[:2]] == ["warning 51", "warning 52"] and box.log[-1].text == "warning 250"


class Watching:
    """An approver that records what reaches the call's card, and when."""

    def __init__(self):
        self.progress_seen: list[tuple[float, Progress]] = []
        self.told: list[str] = []
        self.threads: set[int] = set()

    def progress(self, running, progress):
        import threading

        self.threads.add(threading.get_ident())
        self.progress_seen.append((time.perf_counter(), progress))

    def tell(self, running, text):
        self.told.append(text)


def in_a_run(box: McpToolbox, tool: str, arguments: dict, approver) -> tuple[str, RunningCall]:
    """Run the tool as the agent does: on a thread, with `RUNNING_CALL` set, the cell's loop running."""

    async def main():
        loop = asyncio.get_running_loop()
        running = RunningCall(ToolCall(tool, arguments), loop, 30.0, approver, None)
        RUNNING_CALL.set(running)
        context = contextvars.copy_context()
        result = await loop.run_in_executor(None, context.run, box[tool].run, arguments)
        await asyncio.sleep(0.05)  # what the MCP loop handed over last is drawn
        return result, running

    return asyncio.run(main())


def test_each_progress_and_the_warnings_reach_the_card_in_order_with_hostile_text_kept_for_escaping(box):
    watching = Watching()
    result, _ = in_a_run(box, "p_count", {"steps": 3, "pause": 0.35}, watching)
    assert result == "counted to 3"
    assert [p for _, p in watching.progress_seen] == [
        Progress(1.0, 3.0, "step 1"),
        Progress(2.0, 3.0, "<script>alert(1)</script> step 2"),  # the card escapes it
        Progress(3.0, 3.0, LONG),  # 10,000 characters cut to 200
    ]
    assert watching.told == [
        "p logged warning (counter): the count <b>ran</b> long",
        "p logged error: disk almost full\u202e",
    ]
    assert watching.threads == {__import__("threading").main_thread().ident}  # the cell's loop


def test_fast_progress_is_throttled_and_the_newest_is_always_sent(box):
    watching, start = Watching(), time.perf_counter()
    in_a_run(box, "p_count", {"steps": 40, "pause": 0.01, "rest": 0.6}, watching)
    elapsed = time.perf_counter() - start
    seen = [p.progress for _, p in watching.progress_seen]
    assert seen[-1] == 40.0 and seen == sorted(seen) and 2 <= len(seen) <= min(elapsed / 0.25 + 2, 20)
    gaps = [b - a for (a, _), (b, _) in zip(watching.progress_seen, watching.progress_seen[1:])]
    assert min(gaps) >= 0.15  # at most every 0.25 s, less what the hops between the loops vary


def test_a_call_s_card_gets_five_log_lines_then_one_that_says_where_the_rest_are(box):
    watching = Watching()
    in_a_run(box, "p_chatty", {"warnings_": 8}, watching)
    assert watching.told == [f"p logged warning (chatty): warning {n}" for n in range(1, 6)] + [
        "p logged more: %tools mcp log p shows it"
    ]


def test_an_approver_that_cannot_show_progress_is_left_alone(box):
    class Plain:
        pass

    result, _ = in_a_run(box, "p_count", {"steps": 2}, Plain())
    assert result == "counted to 2"


@pytest.mark.parametrize(
    ("progress", "text", "fraction"),
    [
        (Progress(42, 100, "half <b>way</b>"), "42 of 100 (42 %) - half <b>way</b>", 0.42),
        (Progress(3, None, "tick 3"), "3 so far - tick 3", None),
        (Progress(1.5, 4, None), "1.5 of 4 (37 %)", 0.375),
        (Progress(1234567, 10_000_000, None), "1,234,567 of 10,000,000 (12 %)", 0.1234567),
        (Progress(5, 0, None), "5 so far", None),
        (Progress(150, 100, None), "150 of 100 (100 %)", 1.0),
        (Progress(math.nan, 10, None), "? so far", None),
        (Progress(2, math.inf, None), "2 so far", None),
    ],
)
def test_progress_reads_as_a_count_of_a_total_or_so_far(progress, text, fraction):
    assert progress.text() == text
    assert progress.fraction == fraction


def test_the_card_shows_progress_while_the_call_runs_and_nothing_of_it_after():
    call = ToolCall("p_count", {"steps": 3})
    transcript = Transcript()
    transcript.handle(ToolCallEvent(call, 1))
    transcript.progress_call(call, Progress(2.0, 3.0, "<script>alert(1)</script> step 2\u202e"))
    assert transcript.to_text() == (
        "[tool] p_count(steps=3) -> running\n"
        "  [progress: 2 of 3 (66 %) - <script>alert(1)</script> step 2\\u202e]"
    )
    html = transcript.to_html()
    assert "<script>" not in html
    assert (
        '<span style="display: block; width: 66.7%; height: 100%; background: #1e88e5; border-radius: 3px"></span>'
        '</span><span class="meowgent-progress-text">2 of 3 (66 %) - &lt;script&gt;alert(1)&lt;/script&gt; step 2'
        '<span class="meowgent-hidden-char" title="U+202E RIGHT-TO-LEFT OVERRIDE"'
    ) in html
    transcript.handle(ToolResultEvent(ToolResult(call, "counted to 3", duration=0.5)))
    assert transcript.to_text() == "[tool] p_count(steps=3) -> done\n  counted to 3"
    assert "meowgent-progress" not in transcript.to_html()


def test_tools_mcp_log_shows_the_server_s_messages_as_a_table(ip):
    with capture_output():
        ip.run_line_magic("tools", f"mcp add p --log-level debug -- {sys.executable} {SERVER}")
    box = ip.magics_manager.registry["AgentMagics"]._mcp_servers["p"]
    box["p_count"].run({"steps": 3})
    with capture_output() as shown:
        ip.run_line_magic("tools", "mcp log p")
    (output,) = shown.outputs
    assert output.data["text/plain"] == (
        "p: 4 log messages (level debug and above; the last 200 are kept)\n"
        "  debug    counter  starting the count\n"
        '  info     counter  {"steps": 3, "unit": "step"}\n'
        "  warning  counter  the count <b>ran</b> long\n"
        "  error             disk almost full\\u202e"
    )
    html = output.data["text/html"]
    assert "<b>ran</b>" not in html and "the count &lt;b&gt;ran&lt;/b&gt; long" in html
    assert html.count("<tr>") == 5 and 'title="U+202E RIGHT-TO-LEFT OVERRIDE"' in html
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "mcp log nope")
    assert str(caught.value) == "%tools mcp log: no MCP server named 'nope'; the servers are: p."


def test_tools_mcp_log_of_a_quiet_server_says_so(ip):
    with capture_output():
        ip.run_line_magic("tools", f"mcp add q -- {sys.executable} {SERVER}")
    with capture_output() as shown:
        ip.run_line_magic("tools", "mcp log q")
    assert (
        shown.outputs[0].data["text/plain"]
        == "q: no log messages yet (level info and above; the last 200 are kept)"
    )


def test_a_log_entry_is_a_small_frozen_value():
    entry = LogEntry("warning", None, "low disk", 1.0)
    assert entry == LogEntry("warning", None, "low disk", 1.0)
    assert [f.name for f in dataclasses.fields(entry)] == ["level", "logger", "text", "time"]
