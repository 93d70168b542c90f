"""A tool that raised, in a real kernel: its card says where (the cell or file, the line, its code),
the model reads only the error line, and ``%agent traceback`` shows the last run's tool tracebacks."""

from __future__ import annotations

import re

import pytest

from tests.support.kernel_driver import Run, running_kernel

SETUP = """
%load_ext meowgent_nb
import json
from meowgent_nb import ScriptedModel, tool

def calls(*arguments, name="shout"):
    text = "".join(
        "<tool_call>" + json.dumps({"name": name, "arguments": a}) + "</tool_call>" for a in arguments
    )
    return ScriptedModel([text, "Sorry, the tool failed."])
"""

TOOL = '''@tool
def shout(text: str) -> str:
    """Shout the text."""
    return txet.upper()
'''

MODULE = '''from meowgent_nb import tool


def _look(title):
    return {"dune": 1965}[title.lower()]


@tool
def year(title: str) -> int:
    """The year a book came out."""
    return _look(title)
'''

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "tool-error-place", SETUP)


def final_text(run: Run) -> str:
    return [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")][-1]


def final_html(run: Run) -> str:
    return [
        c["data"]["text/html"]
        for c in run.of_type("display_data", "update_display_data")
        if "text/html" in c["data"]
    ][-1]


def test_the_card_of_a_cell_tool_that_raised_shows_its_cell_line_and_code(kernel):
    cell = kernel.ok(TOOL).reply["execution_count"]
    kernel.ok("model = calls({'text': 'hi'})")
    run = kernel.ok("%%agent --model-object model --new\nShout hi")
    assert final_text(run) == (
        "[tool] shout(text='hi') -> error\n"
        "  Error: NameError: name 'txet' is not defined\n"
        f"  raised at Cell In[{cell}], line 4, in shout:\n"
        "  ----> 4 return txet.upper()\n"
        "Sorry, the tool failed."
    )
    assert (
        "Error: NameError: name &#x27;txet&#x27; is not defined\n"
        f"raised at Cell In[{cell}], line 4, in shout:\n"
        "----&gt; 4 return txet.upper()</pre>"
    ) in final_html(run)
    # What the model reads does not change: the error line, no place.
    read = kernel.ok("print(model.requests[-1].messages[-1]['content'])").stdout
    assert "Error: NameError: name 'txet' is not defined" in read
    assert "raised at" not in read and "Cell In" not in read


def test_the_card_of_a_tool_from_a_module_shows_the_file_line_and_code_of_its_own_innermost_frame(kernel):
    kernel.ok(f"import pathlib; pathlib.Path('booktools.py').write_text({MODULE!r})")
    path = kernel.ok("from booktools import year; import booktools; print(booktools.__file__)").stdout.strip()
    kernel.ok("model = calls({'title': 'Emma'}, name='year')")
    run = kernel.ok("%%agent --model-object model --new\nWhen did Emma come out?")
    assert final_text(run) == (
        "[tool] year(title='Emma') -> error\n"
        "  Error: KeyError: 'emma'\n"
        f"  raised at {path}, line 5, in _look:\n"
        '  ----> 5 return {"dune": 1965}[title.lower()]\n'
        "Sorry, the tool failed."
    )


def test_agent_traceback_shows_the_last_runs_tool_tracebacks_newest_first_not_an_older_error(kernel):
    cell = kernel.ok(TOOL).reply["execution_count"]
    assert kernel.execute("1 / 0").reply["status"] == "error"  # an older, unrelated error
    kernel.ok("model = calls({'text': 'a'}, {'text': 'b'})")
    kernel.ok("%%agent --model-object model --new\nShout a and b")
    text = _ANSI.sub("", kernel.ok("%agent traceback").stdout)
    first, second = text.split("\n\nshout(text='a') raised:\n")
    lines = first.split("\n")
    assert lines[0] == "shout(text='b') raised:"
    assert f"Cell In[{cell}], line 4, in shout(text)" in lines
    assert "----> 4     return txet.upper()" in lines
    assert lines[-1] == "NameError: name 'txet' is not defined"
    assert second.endswith("\n\nNameError: name 'txet' is not defined\n")
    assert "ZeroDivisionError" not in text
    assert "_tool_threads" not in text  # from the tool's own first frame on


def test_agent_traceback_says_so_when_the_last_run_had_no_tool_error(kernel):
    kernel.ok(TOOL)
    kernel.ok("model = calls({'text': 'a'})")
    kernel.ok("%%agent --model-object model --new\nShout a")
    kernel.ok("model = ScriptedModel(['Nothing to do.'])")
    kernel.ok("%%agent --model-object model --new\nHello")
    assert kernel.ok("%agent traceback").stdout == "(no tool raised an error in the last %%agent run)\n"
