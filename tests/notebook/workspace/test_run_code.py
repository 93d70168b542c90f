"""``run_code``: the model's code run in the person's namespace as a cell, on its tool thread."""

from __future__ import annotations

import asyncio
import hashlib
import io
import subprocess
import sys
import threading
import time

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall
from meowgent_nb.agent.running_call import RUNNING_CALL, RunningCall
from meowgent_nb.notebook.workspace import CodeRun, notebook_tools, run_code_tool
from meowgent_nb.tools.media import McpImage, image_size, media_of
from tests.support.tool_calls import call


def _file(code: str) -> str:
    return f"<run_code-{hashlib.sha1(code.encode()).hexdigest()[:8]}>"


def _ran(ip, *codes: str, **settings) -> list[str]:
    model = ScriptedModel([*(call("run_code", code=code) for code in codes), "Done."])
    agent = Agent(model, tools=notebook_tools(ip.user_ns), rules=["run_code -> allow"], **settings)
    return [r.output for r in agent.run("go").tool_results]


def test_the_tool_as_the_model_sees_it():
    run_code = run_code_tool({})
    assert (
        run_code.name,
        run_code.approval,
        run_code.code_argument,
        run_code.read_only,
        run_code.timeout,
    ) == ("run_code", "always", "code", False, None)
    assert run_code.description == (
        "Run Python code in the person's notebook, as a cell: variables it defines persist.\n\n"
        "Each call waits for the person's approval. IPython's ! and % syntax works."
    )
    assert run_code.parameters["properties"] == {
        "code": {"type": "string", "description": "The code to run."}
    }
    risk = run_code.facts["risk"]
    assert [risk({"code": c}) for c in ("df.head()", "x = 1", "!rm -rf /", "exec('1')")] == [
        "read-only",
        "modifies",
        "runs-commands",
        "unreadable",
    ]


def test_code_runs_as_a_cell_its_names_persist_and_its_last_value_comes_back(ip):
    ip.run_cell("prices = [3, 4, 5]")
    before = sys.stdout
    outputs = _ran(ip, "total = sum(prices)\nprint('summed', len(prices))\ntotal * 2", "total + 1")
    assert outputs == ["Printed:\nsummed 3\nValue:\n24", "Value:\n13"]
    assert ip.user_ns["total"] == 12
    assert sys.stdout is before


def test_ipython_syntax_is_transformed_as_the_kernel_does(ip):
    assert _ran(ip, "said = !echo hello\nnames = %who_ls\nsaid.n") == ["Value:\n'hello'"]
    assert ip.user_ns["said"] == ["hello"] and "said" in ip.user_ns["names"]


def test_top_level_await_runs():
    namespace: dict = {}
    run = run_code_tool(namespace).function(
        "import asyncio\nawait asyncio.sleep(0)\nslept = 'yes'\nawait asyncio.sleep(0, 7)"
    )
    assert (run.text, namespace["slept"]) == ("Value:\n7", "yes")


def test_an_exception_gives_the_code_s_own_traceback_lines_and_what_ran_before_stays(ip):
    code = "def ratio(a, b):\n    return a / b\n\nprint('before')\nkept = 1\nratio(1, 0)"
    assert _ran(ip, code) == [
        "Printed:\nbefore\n"
        "Raised (the code's own lines of the traceback):\n"
        f'  File "{_file(code)}", line 6, in <module>\n'
        "    ratio(1, 0)\n"
        f'  File "{_file(code)}", line 2, in ratio\n'
        "    return a / b\n"
        "           ~~^~~\n"
        "ZeroDivisionError: division by zero"
    ]
    assert ip.user_ns["kept"] == 1
    assert "publish" not in vars(ip.display_pub)


def test_a_syntax_error_is_reported_as_such():
    code = "x = 1\ny = (2,\n"
    run = run_code_tool({}).function(code)
    assert run.text == (
        "The code does not compile:\n"
        f'  File "{_file(code)}", line 2\n'
        "    y = (2,\n"
        "        ^\n"
        "SyntaxError: '(' was never closed"
    )


def test_ipython_syntax_outside_ipython_is_a_clear_error():
    script = (
        "from meowgent_nb.notebook.workspace import run_code_tool\n"
        "print(run_code_tool(globals()).function('!ls').text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout == (
        "Error: the code uses IPython's ! or % syntax, which needs a running IPython (a notebook or"
        " ipython); outside one, write it in Python (subprocess.run([...]) for a command).\n"
    )


def test_output_is_captured_for_the_code_s_thread_alone():
    original = io.StringIO()
    ready, go = threading.Event(), threading.Event()
    namespace = {"ready": ready, "go": go}
    runs: list[CodeRun] = []
    code = "print('mine')\nready.set()\ngo.wait(10)\nimport sys\nprint('mine again', file=sys.stderr)"
    saved = sys.stdout, sys.stderr
    sys.stdout = original
    try:
        worker = threading.Thread(target=lambda: runs.append(run_code_tool(namespace).function(code)))
        worker.start()
        assert ready.wait(10)
        print("another thread's")
        go.set()
        worker.join(10)
        assert (sys.stdout, sys.stderr) == (original, saved[1])
    finally:
        sys.stdout, sys.stderr = saved
    assert original.getvalue() == "another thread's\n"
    assert (runs[0].stdout, runs[0].stderr) == ("mine\n", "mine again\n")


def test_display_outputs_come_back_and_the_publisher_is_restored(ip):
    publisher = ip.display_pub
    code = (
        "from IPython.display import display\n"
        "display({'text/html': '<b>hi</b>', 'text/plain': 'hi'}, raw=True)\n"
        "display({'text/markdown': '*so*', 'text/plain': 'so'}, raw=True)\n"
        "display({'application/json': {}}, raw=True)"
    )
    run = run_code_tool(ip.user_ns).function(code)
    assert run.outputs == (
        {"text/html": "<b>hi</b>", "text/plain": "hi"},
        {"text/markdown": "*so*", "text/plain": "so"},
        {"application/json": {}},
    )
    assert run.text == "Displayed: hi\nDisplayed: *so*\nDisplayed: [output of type application/json]"
    assert "publish" not in vars(publisher) and "clear_output" not in vars(publisher)


def test_figures_left_open_come_back_as_images_and_are_closed(ip):
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    kept = plt.figure()
    code = "import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(2, 1), dpi=50)\nplt.plot([1, 2])\nNone"
    try:
        run = run_code_tool(ip.user_ns).function(code)
        assert [type(m) for m in run.media] == [McpImage]
        assert (run.media[0].mime_type, image_size(run.media[0].data)) == (
            "image/png",
            (97, 61),
        )  # tight, as inline
        assert run.text == "Left open and shown: 1 figure ([image: image/png] each)"
        assert media_of(run) == run.media  # what the card shows and a model that reads images gets
        assert plt.get_fignums() == [kept.number]
        # A figure that is the code's value is shown once, by the value's view.
        run = run_code_tool(ip.user_ns).function("plt.figure(figsize=(2, 1), dpi=50)")
        assert (run.text, len(run.media)) == (
            "Value:\nmatplotlib Figure: 100×50 px, 0 axes\n[image: image/png]",
            1,
        )
        assert image_size(run.media[0].data) == (100, 50) and plt.get_fignums() == [kept.number]
    finally:
        plt.close("all")


def test_code_that_never_ends_is_stopped_by_the_time_limit_and_its_thread_is_free(ip):
    streams = sys.stdout, sys.stderr
    code = "import threading\nran_on = threading.get_ident()\nstarted = 'yes'\nprint('looping')\nwhile True:\n    pass"
    assert _ran(ip, code, tool_timeout=1) == ["Timed out after 1 s"]
    assert ip.user_ns["started"] == "yes"
    thread = ip.user_ns["ran_on"]
    deadline = time.monotonic() + 10
    while (_running_code(thread) or sys.stdout is not streams[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running_code(thread)
    # Nothing stays redirected once the stopped code is gone.
    assert (sys.stdout, sys.stderr) == streams and "publish" not in vars(ip.display_pub)
    # The thread runs the next call whole: no stop is left pending for it.
    assert _ran(ip, "import time\ntime.sleep(0.2)\nafter = started * 2\nafter") == ["Value:\n'yesyes'"]


def _running_code(thread: int) -> bool:
    frame = sys._current_frames().get(thread)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<run_code-"):
            return True
        frame = frame.f_back
    return False


def test_a_namespace_that_is_not_a_dict_says_what_to_pass():
    with pytest.raises(TypeError) as raised:
        run_code_tool(["x"])  # type: ignore[arg-type]
    assert str(raised.value) == (
        "run_code needs the namespace as a dict of names to values, not list; pass get_ipython().user_ns or globals()"
    )


def _running_call() -> RunningCall:
    loop = asyncio.new_event_loop()
    loop.close()
    return RunningCall(ToolCall("run_code"), loop, None, None, None)


def _within(running: RunningCall, code: str, namespace: dict) -> CodeRun:
    token = RUNNING_CALL.set(running)
    try:
        return run_code_tool(namespace).function(code)
    finally:
        RUNNING_CALL.reset(token)


def test_a_call_that_ended_before_its_code_started_runs_none_of_it():
    running = _running_call()
    running.end("stopped")
    namespace: dict = {}
    run = _within(running, "ran = True", namespace)
    assert (run.ended, run.error, namespace.get("ran")) == (
        "stopped",
        "Not finished: the run was stopped while the code ran; what it did until then stays done.",
        None,
    )


def test_an_end_after_the_code_finished_raises_nothing_in_its_thread():
    running = _running_call()
    namespace: dict = {}
    run = _within(running, "total = sum(range(10))", namespace)
    running.end("timeout")
    total = sum(range(100_000))  # the bytecode that would meet an exception left pending
    assert (run.ended, run.error, namespace["total"], total) == ("done", None, 45, 4_999_950_000)


def test_an_end_racing_the_code_s_own_end_never_lands_after_it():
    # Each call ends from another thread at a moment near the code's own end; whichever comes
    # first, nothing is left to land in the code that runs next on this thread.
    outcomes = set()
    for attempt in range(200):
        running = _running_call()
        ender = threading.Timer(attempt % 20 / 20_000, running.end, args=("timeout",))
        ender.start()
        run = _within(running, "n = 0\nfor i in range(200):\n    n += i", {})
        ender.join()
        after = sum(range(10_000))
        outcomes.add(run.ended)
        assert after == 49_995_000
    assert outcomes <= {"done", "timeout"}


def test_the_caret_under_an_error_on_the_last_line_is_under_its_expression():
    code = "total = 12\ntotal / 0"
    assert run_code_tool({}).function(code).error == (
        "Raised (the code's own lines of the traceback):\n"
        f'  File "{_file(code)}", line 2, in <module>\n'
        "    total / 0\n"
        "    ~~~~~~^~~\n"
        "ZeroDivisionError: division by zero"
    )


def test_what_the_model_reads_is_bounded():
    run = run_code_tool({}).function("print('x' * 1_000_000)")
    assert len(run.stdout) == 1_000_001
    assert run.text == (
        "Printed:\n" + "x" * 1334 + "\n[... cut 998,000 of 1,000,000 characters ...]\n" + "x" * 666
    )
    code = "def down(n):\n    return down(n - 1) if n else 1 / 0\n\ndown(20)"
    frame = f'  File "{_file(code)}", line 2, in down\n    return down(n - 1) if n else 1 / 0\n           ^^^^^^^^^^^\n'
    assert run_code_tool({}).function(code).error == (  # the last 5 frames, as Python folds repeats
        "Raised (the code's own lines of the traceback):\n"
        + frame * 3
        + "  [Previous line repeated 2 more times]\nZeroDivisionError: division by zero"
    )


def test_many_displays_are_read_up_to_twenty(ip):
    code = "from IPython.display import display\nfor n in range(25):\n    display({'text/plain': str(n)}, raw=True)"
    run = run_code_tool(ip.user_ns).function(code)
    assert len(run.outputs) == 25
    assert (
        run.text == "".join(f"Displayed: {n}\n" for n in range(20)) + "... and 5 more displays, not read here"
    )
