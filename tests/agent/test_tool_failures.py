"""Tools that misbehave cannot take the run, the session or the process down.

A tool that exits, raises a `BaseException`, returns an object whose ``repr`` raises, or blocks
forever: each is a result for that call alone, its siblings finish, later calls still run, and a
script exits promptly whatever its tools still do.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import pytest

from meowgent_nb import Agent, ScriptedModel, tool


def calls(*pairs: tuple[str, dict]) -> str:
    return "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in pairs)


class Unprintable:
    def __repr__(self) -> str:
        raise ValueError("no repr for you")


class Crash(BaseException):
    """A BaseException that is neither SystemExit nor KeyboardInterrupt."""


@tool
def exits(code: int) -> str:
    """Exit the way argparse does on a bad command line."""
    raise SystemExit(code)


@tool
def crashes() -> str:
    """Raise a BaseException subclass."""
    raise Crash("deep trouble")


@tool
def interrupts() -> str:
    """Raise KeyboardInterrupt from inside the tool (not the person's interrupt)."""
    raise KeyboardInterrupt


@tool
def unprintable() -> object:
    """Return an object whose repr raises."""
    return Unprintable()


@tool
def fine() -> str:
    """Work."""
    return "fine"


def test_each_misbehaving_tool_is_an_error_for_its_call_alone_and_siblings_finish():
    answer = calls(
        ("exits", {"code": 2}), ("crashes", {}), ("interrupts", {}), ("unprintable", {}), ("fine", {})
    )
    agent = Agent(ScriptedModel([answer, "Done."]), tools=[exits, crashes, interrupts, unprintable, fine])
    result = agent.run("go")
    assert [(r.call.name, r.kind, r.output) for r in result.tool_results] == [
        ("exits", "error", "Error: the tool tried to exit the process (SystemExit: 2); it did not."),
        ("crashes", "error", "Error: Crash: deep trouble"),
        ("interrupts", "error", "Error: KeyboardInterrupt"),
        (
            "unprintable",
            "error",
            "Error: the tool returned a Unprintable that could not be turned into text: ValueError: no repr for you",
        ),
        ("fine", "ok", "fine"),
    ]
    assert type(result.tool_results[0].exception) is SystemExit
    assert result.text == "Done."
    agent.model.enqueue("Still here.")
    assert agent.run("again").text == "Still here."  # the session goes on


def test_hung_calls_do_not_take_the_places_of_later_calls():
    release = threading.Event()

    @tool(timeout=0.3)
    def hangs(n: int) -> str:
        """Block until the test ends."""
        release.wait()
        return "late"

    eight = calls(*[("hangs", {"n": n}) for n in range(8)])
    agent = Agent(ScriptedModel([eight, "Timed out.", calls(("fine", {})), "Fine."]), tools=[hangs, fine])
    try:
        first = agent.run("hang")
        assert [r.kind for r in first.tool_results] == ["timeout"] * 8
        second = agent.run("now work")
        assert [(r.kind, r.output) for r in second.tool_results] == [("ok", "fine")]
    finally:
        release.set()


def test_a_late_result_of_a_timed_out_call_goes_nowhere():
    release, finished = threading.Event(), threading.Event()

    @tool(timeout=0.2)
    def late() -> str:
        """Finish after the call was given up."""
        release.wait()
        finished.set()
        return "too late"

    agent = Agent(ScriptedModel([calls(("late", {})), "Gave up."]), tools=[late])
    result = agent.run("go")
    release.set()
    assert finished.wait(5)
    assert [(r.kind, r.output) for r in result.tool_results] == [("timeout", "Timed out after 0.2 s")]
    assert [m["content"] for m in agent.messages if m["role"] == "user"][1].startswith(
        '<tool_response name="late">\nTimed out after 0.2 s\n</tool_response>'
    )


@pytest.mark.parametrize("how", ["run", "asyncio"])
def test_a_script_exits_promptly_while_a_timed_out_tool_still_blocks(tmp_path, how):
    script = tmp_path / "hang.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, json, time
            from meowgent_nb import Agent, ScriptedModel, tool

            @tool(timeout=0.3)
            def hangs() -> str:
                \"\"\"Block for an hour.\"\"\"
                time.sleep(3600)
                return "never"

            call = '<tool_call>' + json.dumps({{"name": "hangs", "arguments": {{}}}}) + '</tool_call>'
            agent = Agent(ScriptedModel([call, "Gave up."]), tools=[hangs])
            result = agent.run("go") if {how!r} == "run" else asyncio.run(agent.arun("go"))
            print(result.tool_results[0].kind, result.text)
            """
        )
    )
    # Before the fix the interpreter joined the pool's thread at exit: an hour.
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "timeout Gave up.\n", "")


class Sloppy:
    """An approver that answers with the wrong things."""

    def __init__(self, answer):
        self.answer = answer

    async def approve(self, requests):
        return self.answer

    def __repr__(self) -> str:
        return "Sloppy()"


@pytest.mark.parametrize(("answer", "answered"), [([], 0), (["yes"], 1), ([True, True], 2)])
def test_a_malformed_approver_answer_denies_each_call_once_with_the_reason(answer, answered):
    @tool(approval=True)
    def risky() -> str:
        """Do something risky."""
        return "done"

    agent = Agent(ScriptedModel([calls(("risky", {})), "ok"]), tools=[risky], approver=Sloppy(answer))
    result = agent.run("go")
    assert [(r.kind, r.output) for r in result.tool_results] == [
        (
            "denied",
            "Denied: the approver Sloppy() did not return one Approved or Denied per call"
            f" (1 asked, {answered} answered), so none of them ran.",
        )
    ]


@pytest.mark.parametrize(
    ("answer", "kind"), [(None, "NoneType"), (0, "int"), ("yes", "str"), ({"risky": True}, "dict")]
)
def test_an_approver_answer_that_is_no_list_denies_the_call_instead_of_ending_the_run(answer, kind):
    ran = []

    @tool(approval=True)
    def risky() -> str:
        """Do something risky."""
        ran.append(1)
        return "done"

    agent = Agent(ScriptedModel([calls(("risky", {})), "ok"]), tools=[risky], approver=Sloppy(answer))
    result = agent.run("go")
    assert [(r.kind, r.output) for r in result.tool_results] == [
        (
            "denied",
            "Denied: the approver Sloppy() did not return one Approved or Denied per call"
            f" (1 asked, answered with a {kind}), so none of them ran.",
        )
    ]
    assert (ran, result.text) == ([], "ok")
