"""A server's progress and log messages in a real kernel: the running call's card shows each
progress line (text/plain in ``jupyter console``, a bar and escaped text in JupyterLab's
widgets), the finished card says nothing of progress and has the server's warnings and errors as
lines, exactly; a headless run shows only the finished card."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.kernel_driver import Run, running_kernel, shown

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "progress_server.py")
TASKS = str(Path(__file__).parents[1] / "mcp_servers" / "task_server.py")
SETUP = f"""
%load_ext meowgent_nb
import sys
from meowgent_nb import ScriptedModel
from meowgent_nb.mcp.client.toolbox import McpToolbox
p = McpToolbox("p", [sys.executable, {SERVER!r}])
t = McpToolbox("t", [sys.executable, {TASKS!r}, "tasks"], approval={{"render": False}}, include=["render"])
def calling(name, *after, **arguments):
    import json
    call = json.dumps({{"name": name, "arguments": arguments}})
    return ScriptedModel([f"<tool_call>{{call}}</tool_call>", *after])
"""
LONG = "x" * 199 + "\u2026"
FINAL = [
    "[tool] p_count(steps=3, pause=0.4) -> done",
    "  [p logged warning (counter): the count <b>ran</b> long]",
    "  [p logged error: disk almost full\\u202e]",
    "  counted to 3",
    "Counted.",
]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "mcp-progress", SETUP)


def changes(values: list[str]) -> list[str]:
    """``values`` without repeats in a row (a redraw for something else shows the same line again)."""
    return [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]]


def progress_lines(run: Run) -> list[str]:
    return changes(
        [line for text in run.panel_texts for line in text.splitlines() if line.startswith("  [progress:")]
    )


def test_the_card_shows_each_progress_line_while_the_call_runs_in_a_console(kernel):
    kernel.ok('model = calling("p_count", "Counted.", steps=3, pause=0.4)')
    run = kernel.ok("%%agent --model-object model --new\nCount", frontend="console")
    assert progress_lines(run) == [
        "  [progress: 1 of 3 (33 %) - step 1]",
        "  [progress: 2 of 3 (66 %) - <script>alert(1)</script> step 2]",
        f"  [progress: 3 of 3 (100 %) - {LONG}]",
    ]
    assert run.panel_texts[-1].splitlines() == FINAL


def test_the_card_shows_a_bar_and_escaped_text_in_jupyterlab(kernel):
    kernel.ok('model = calling("p_count", "Counted.", steps=3, pause=0.4)')
    run = kernel.ok("%%agent --model-object model --new\nCount")
    values = [shown(run, m) for m in run.messages]
    texts = changes(
        [t for v in values for t in re.findall(r'<span class="meowgent-progress-text">(.*?)</span>', v)]
    )
    assert texts == [
        "1 of 3 (33 %) - step 1",
        "2 of 3 (66 %) - &lt;script&gt;alert(1)&lt;/script&gt; step 2",
        f"3 of 3 (100 %) - {LONG}",
    ]
    widths = changes(
        [w for v in values for w in re.findall(r'<span style="display: block; width: ([\d.]+)%', v)]
    )
    assert widths == ["33.3", "66.7", "100.0"]
    assert not any("<script>" in v for v in values)
    assert run.panel_texts[-1].splitlines() == FINAL
    final_html = [
        m["content"]["data"]["text/html"] for m in run.messages if m["msg_type"] == "update_display_data"
    ][-1]
    assert "meowgent-progress" not in final_html and "the count &lt;b&gt;ran&lt;/b&gt; long" in final_html


def test_progress_without_a_total_counts_so_far(kernel):
    kernel.ok('model = calling("p_tick", "Ticked.", steps=5)')
    run = kernel.ok("%%agent --model-object model --new\nTick", frontend="console")
    lines = progress_lines(run)
    expected = [f"  [progress: {n} so far - tick {n}]" for n in range(1, 6)]
    assert lines[0] == expected[0] and all(line in expected for line in lines)  # throttled: some skipped
    assert [expected.index(line) for line in lines] == sorted(expected.index(line) for line in lines)
    assert run.panel_texts[-1].splitlines() == [
        "[tool] p_tick(steps=5) -> done",
        "  ticked 5 times",
        "Ticked.",
    ]


def test_a_headless_run_shows_the_finished_card_once(kernel):
    kernel.ok('model = calling("p_count", "Counted.", steps=3, pause=0.4)')
    run = kernel.ok("%%agent --model-object model --new\nCount", allow_stdin=False)
    assert [text.splitlines() for text in run.panel_texts] == [FINAL]
    assert kernel.ok("print(len(p.log), p.log[-1].level)").stdout == "9 error\n"


STATUSES = [
    "working: queued",
    "working: frame 1 of 3",
    "working: frame 2 of 3",
    "working: frame 3 of 3",
    "completed: all frames done",
]


def test_a_tasks_status_lines_show_in_its_card_while_it_runs_and_the_finished_card_has_its_result(kernel):
    kernel.ok('model = calling("t_render", "Rendered.", degrees=90)')
    run = kernel.ok("%%agent --model-object model --new\nRender", frontend="console")
    told = [line.removeprefix("  [progress: ").removesuffix("]") for line in progress_lines(run)]
    assert told[0] == "working: queued"
    assert all(line in STATUSES for line in told) and told == sorted(told, key=STATUSES.index)
    assert run.panel_texts[-1].splitlines() == [
        "[tool] t_render(degrees=90) -> done",
        "  rendered by 90",
        "Rendered.",
    ]
