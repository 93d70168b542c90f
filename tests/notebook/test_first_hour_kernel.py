"""A tool author's first mistakes and a small model's, as a real kernel shows them: a misspelled
``@tool`` keyword, the notice that the embedded model answers instead of Ollama's, and a turn that
offered tools and answered without calling one."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import running_kernel

SETUP = """
%load_ext meowgent_nb
from meowgent_nb import ScriptedModel, Tool, tool
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "first-hour", SETUP)


def test_a_misspelled_tool_keyword_is_one_line_naming_the_nearest(kernel):
    run = kernel.execute(
        '@tool(aproval=True)\ndef delete_file(path: str) -> str:\n    """Delete."""\n    return path\n'
    )
    assert (run.reply["status"], run.reply["ename"]) == ("error", "UnknownKeywordError")
    assert run.reply["traceback"] == [
        "\x1b[31mUnknownKeywordError\x1b[0m: tool() got an unknown keyword 'aproval': did you mean 'approval'?"
    ]
    caught = kernel.ok(
        "try:\n    Tool(print, name='p', timout=3)\nexcept TypeError as error:\n    print(type(error).__mro__[1:3], error)"
    )
    assert caught.stdout == (
        "(<class 'meowgent_nb.errors.MeowgentError'>, <class 'TypeError'>)"
        " Tool() got an unknown keyword 'timout': did you mean 'timeout'?\n"
    )


NOTE_HTML = "answered without calling a tool</div>"


def transcript(run) -> tuple[str, str]:
    """The last transcript the cell showed: its text/plain and text/html."""
    data = [
        c["data"] for c in run.of_type("display_data", "update_display_data") if "text/html" in c["data"]
    ][-1]
    return data["text/plain"], data["text/html"]


def test_an_answer_without_a_call_in_a_run_that_offered_tools_says_so(kernel):
    kernel.ok(
        "@tool\ndef get_weather(city: str) -> str:\n"
        '    """Get the weather."""\n    return f"{city}: 21 degrees"\n'
        'guess = ScriptedModel(["Lima: 25 degrees, sunny."])\n'
        'called = ScriptedModel([\'<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>\','
        ' "Rome: 21 degrees."])\n'
        'unoffered = ScriptedModel(["Hello."])\n'
    )
    text, html = transcript(kernel.ok("%%agent --model-object guess\nAnd in Lima?"))
    assert text == "Lima: 25 degrees, sunny.\n[answered without calling a tool]"
    assert html.count(NOTE_HTML) == 1
    assert html.index("Lima: 25 degrees") < html.index(NOTE_HTML) < html.index("meowgent-footer")
    # A run that called a tool, then answered from its result, says nothing of the kind.
    text, html = transcript(kernel.ok("%%agent --model-object called\nAnd in Rome?"))
    assert text == "[tool] get_weather(city='Rome') -> done\n  Rome: 21 degrees\nRome: 21 degrees."
    assert NOTE_HTML not in html
    # Nor one that offered no tools: there was nothing to call.
    text, html = transcript(kernel.ok("%%agent --no-tools --model-object unoffered\nHi"))
    assert (text, NOTE_HTML in html) == ("Hello.", False)
