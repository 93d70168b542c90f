"""`%%agent --expect` and the cell's metadata in a real kernel: a met expectation prints one line,
an unmet one fails the cell (an error in its reply: Run All and nbval stop) with expected and actual
calls side by side; live, recorded to a cassette and replayed from it."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import running_kernel

SETUP = '''
%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool

@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"

@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

@tool
def search(q: str) -> str:
    """Search."""
    return "nothing"

from meowgent_nb.testing import tool_call as call

PARIS, LONDON = call("get_weather", city="Paris"), call("get_weather", city="London")
DELETE, SEARCH = call("delete_file", path="old.txt"), call("search", q="x")
scripts = {
    "met": [PARIS, DELETE, "Done."],
    "missing": [PARIS, "Done."],
    "argument": [LONDON, DELETE, "Done."],
    "order": [DELETE, PARIS, "Done."],
    "extra": [PARIS, SEARCH, DELETE, "Done."],
}
no_answers = ScriptedModel([])
'''

EXPECT = "get_weather(city='Paris') then delete_file(path='old.txt') then answered"
HEAD = "       expected                     actual"
END = "  end  answered                     answered"
UNMET = {
    "missing": [
        "Expectation not met: delete_file(path='old.txt') was not called.",
        HEAD,
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok  ✓",
        "  2    delete_file(path='old.txt')  -                                  ✗ missing",
        END + "                           ✓",
    ],
    "argument": [
        "Expectation not met: call 1 get_weather had city='London', expected city='Paris'.",
        HEAD,
        "  1    get_weather(city='Paris')    1 get_weather(city='London') -> ok   ✗ wrong city",
        "  2    delete_file(path='old.txt')  2 delete_file(path='old.txt') -> ok  ✓",
        END + "                             ✓",
    ],
    "order": [
        "Expectation not met: call 1 delete_file came before call 2 get_weather, expected the other order.",
        HEAD,
        "  1    get_weather(city='Paris')    2 get_weather(city='Paris') -> ok    ✗ out of order",
        "  2    delete_file(path='old.txt')  1 delete_file(path='old.txt') -> ok  ✗ out of order",
        END + "                             ✓",
    ],
    "extra": [
        "Expectation not met: call 2 search(q='x') -> ok was not expected (end the calls with ', ...' to allow others).",
        HEAD,
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok    ✓",
        "  2    delete_file(path='old.txt')  3 delete_file(path='old.txt') -> ok  ✓",
        "       -                            2 search(q='x') -> ok                ✗ not expected",
        END + "                             ✓",
    ],
}
CALLED = {
    "met": ["get_weather", "delete_file"],
    "missing": ["get_weather"],
    "argument": ["get_weather", "delete_file"],
    "order": ["delete_file", "get_weather"],
    "extra": ["get_weather", "search", "delete_file"],
}
MET = f"Expectation met: {EXPECT} (2 calls, answered).\n"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "expect", SETUP)


def cell(kernel, line: str, **kwargs):
    return kernel.execute(f"%%agent --new {line}\nGo.", allow_stdin=False, **kwargs)


def check(run, scenario: str) -> None:
    if scenario == "met":
        assert run.reply["status"] == "ok", run.reply
        assert run.stdout == MET
        return
    lines = UNMET[scenario]
    assert (run.reply["status"], run.reply["ename"], run.reply["evalue"]) == (
        "error",
        "ExpectationNotMet",
        "\n".join(lines),
    )
    assert run.reply["traceback"] == [
        f"\x1b[31mExpectationNotMet\x1b[0m: {lines[0]}",
        *lines[1:],
        "(the full traceback: %agent traceback)",
    ]


@pytest.mark.parametrize("scenario", ["met", "missing", "argument", "order", "extra"])
def test_an_expectation_is_checked_live_recorded_and_replayed(kernel, scenario):
    model = f"--model-object model_{scenario}"
    kernel.ok(f"model_{scenario} = ScriptedModel(scripts[{scenario!r}])")
    check(cell(kernel, f'{model} --record {scenario}.json --expect "{EXPECT}"'), scenario)
    # Replayed: the answers come from the cassette; a model with none to give is never asked.
    check(cell(kernel, f'--model-object no_answers --replay {scenario}.json --expect "{EXPECT}"'), scenario)
    kernel.ok(f"model_{scenario} = ScriptedModel(scripts[{scenario!r}])")
    check(cell(kernel, f'{model} -o result --expect "{EXPECT}"'), scenario)
    # What ran stays, met or not: the result (-o), and the conversation the next cell continues.
    kept = kernel.ok(
        "print([r.call.name for r in result.tool_results], len(get_ipython().magics_manager.registry['AgentMagics'].messages))"
    )
    names = CALLED[scenario]
    assert (
        kept.stdout == f"{names} {2 + 2 * len(names)}\n"
    )  # the prompt, each call and its result, the answer


def test_the_cells_metadata_as_jupyterlab_sends_it(kernel):
    kernel.ok('model_meta = ScriptedModel(scripts["order"])')
    run = cell(kernel, "--model-object model_meta", cell_metadata={"meowgent": {"expect": EXPECT}})
    check(run, "order")
    kernel.ok('model_meta = ScriptedModel(scripts["met"])')
    check(cell(kernel, "--model-object model_meta", cell_metadata={"meowgent": {"expect": EXPECT}}), "met")
    # A console sends no metadata: nothing is expected, nothing printed.
    kernel.ok('model_meta = ScriptedModel(scripts["order"])')
    quiet = cell(
        kernel,
        "--model-object model_meta",
        cell_metadata={"meowgent": {"expect": EXPECT}},
        frontend="console",
    )
    assert (quiet.reply["status"], quiet.stdout) == ("ok", "")


def test_two_different_expectations_or_a_wrong_shape_are_usage_errors(kernel):
    kernel.ok('model_two = ScriptedModel(scripts["met"])')
    run = cell(
        kernel, '--model-object model_two --expect "search"', cell_metadata={"meowgent": {"expect": EXPECT}}
    )
    assert (run.reply["ename"], run.reply["evalue"]) == (
        "UsageError",
        f"%%agent: two expectations for this cell: --expect 'search' and (the cell's metadata 'meowgent.expect') {EXPECT!r}; keep one.",
    )
    run = cell(kernel, "--model-object model_two", cell_metadata={"meowgent": {"expect": ["search"]}})
    assert run.reply["evalue"] == (
        "%%agent: the cell's metadata 'meowgent.expect' must be text such as \"get_weather(city='Paris')\", got [\"search\"]"
    )
