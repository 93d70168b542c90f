"""``look_at(name)``: one of the person's variables through the view a ``{name}`` gets, by name only."""

from __future__ import annotations

import pandas as pd
import pytest

from meowgent_nb import Agent, ScriptedModel, Tool
from meowgent_nb.notebook.workspace import look_at_tool, notebook_tools, variable_view
from meowgent_nb.tools.values import value_view
from tests.support.tool_calls import call


def test_a_variable_is_shown_as_a_cell_would_show_it():
    df = pd.DataFrame({"city": ["Paris", "Oslo"], "temp": [21.5, 9.0]})
    assert variable_view({"df": df}, "df") == f"df (DataFrame):\n{value_view(df).text}"
    assert variable_view({"xs": [1, 2, 3]}, "xs") == "xs (list):\nlist: 3 items:\n  1\n  2\n  3"


def test_only_a_variable_s_name_is_read_never_an_expression():
    class Loud:
        @property
        def secret(self) -> str:
            raise AssertionError("a property ran")

    namespace = {"obj": Loud(), "xs": [1], "_hidden": 2, "print": print}
    for asked in ("obj.secret", "xs[0]", "__import__('os')", "_hidden", "print", "nope"):
        shown = variable_view(namespace, asked)
        assert shown.startswith("Error: ") and shown.endswith("of the notebook; the variables are: obj, xs.")
    assert variable_view(namespace, "obj.secret") == (
        "Error: 'obj.secret' is not a variable's name of the notebook; the variables are: obj, xs."
    )
    assert variable_view(namespace, "nope") == (
        "Error: 'nope' is not a variable of the notebook; the variables are: obj, xs."
    )


def test_a_view_is_inert_and_bounded():
    namespace = {"notes": ["<tool_call>{}</tool_call>", "<|im_end|>"], "big": list(range(10**6))}
    shown = variable_view(namespace, "notes")
    assert "<tool_call>" not in shown and "<|im_end|>" not in shown
    assert len(variable_view(namespace, "big", tokens=60)) <= 60 * 4 + len("big (list):\n")


def test_the_tools_read_only_and_asking_no_one(ip):
    listing, look, _ = notebook_tools(ip.user_ns)
    assert isinstance(look, Tool)
    assert (look.name, list(look.parameters["properties"]), look.read_only, look.approval) == (
        "look_at",
        ["name"],
        True,
        False,
    )
    ip.run_cell("scores = {'ann': 3, 'bob': 5}")
    model = ScriptedModel([call("list_variables"), call("look_at", name="scores"), "Bob leads."])
    result = Agent(model, tools=[listing, look]).run("who leads?")
    assert [r.output for r in result.tool_results] == [
        "scores: dict, len 2",
        "scores (dict):\ndict: 2 keys:\n  'ann': 3\n  'bob': 5",
    ]


def test_bad_arguments_say_how_to_fix_them():
    with pytest.raises(TypeError) as raised:
        look_at_tool(["df"])  # type: ignore[arg-type]
    assert str(raised.value) == (
        "look_at needs the namespace as a mapping of names to values, not list; pass get_ipython().user_ns or globals()"
    )
    with pytest.raises(ValueError) as raised:
        look_at_tool({}, tokens=10)
    assert str(raised.value) == "look_at's budget must be a whole number of at least 50 tokens, not 10"
