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
