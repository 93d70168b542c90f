"""The notebook tools turned on: ``%%agent --notebook`` for one cell, ``%tools add notebook`` /
``%tools remove notebook`` for the session, through a real IPython shell."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, Toolbox, tool
from meowgent_nb.notebook.workspace import notebook_tools
from meowgent_nb.testing import tool_call


def agent_cell(ip, line: str, cell: str) -> str:
    with capture_output() as captured:
        ip.run_cell_magic("agent", line, cell)
    return captured.outputs[-1].data["text/plain"]


def offered(model: ScriptedModel) -> list[str]:
    """The tool names the model's last request offered."""
    return [t.name for t in model.requests[-1].offered]


def test_the_notebook_tools_today_are_list_variables_and_look_at(ip):
    assert [t.name for t in notebook_tools(ip.user_ns)][:2] == ["list_variables", "look_at"]


def test_a_notebook_cell_offers_them_after_the_persons_tools_and_the_model_looks(ip):
    @tool
    def t_mine(x: int) -> int:
        """Mine."""
        return x

    model = ScriptedModel([tool_call("look_at", name="prices"), "Three prices."])
    ip.user_ns.update(t_mine=t_mine, prices=[3, 1, 2], model=model)
    text = agent_cell(ip, "--model-object model --notebook --new", "What is in prices?")
    expected = ["t_mine", *(t.name for t in notebook_tools(ip.user_ns))]
    assert offered(model) == expected
    result = ip.meowgent.last_result
    assert [(r.call.name, r.arguments, r.kind) for r in result.tool_results] == [
        ("look_at", {"name": "prices"}, "ok")
    ]
    assert result.tool_results[0].output == "prices (list):\nlist: 3 items:\n  3\n  1\n  2"
    assert text.splitlines() == [
        "[tool] look_at(name='prices') -> done",
        "  prices (list):",
        "  list: 3 items:",
        "    3",
        "    1",
        "    2",
        "Three prices.",
    ]


def test_without_notebook_a_cell_offers_none_of_them(ip):
    model = ScriptedModel(["No."])
    ip.user_ns["model"] = model
    agent_cell(ip, "--model-object model --new", "Hello")
    assert not {t.name for t in notebook_tools(ip.user_ns)} & set(offered(model))


def test_expect_checks_a_notebook_tools_call(ip):
    model = ScriptedModel([tool_call("look_at", name="prices"), "Three."])
    ip.user_ns.update(prices=[3, 1, 2], model=model)
    agent_cell(ip, "--model-object model --notebook --new --expect \"look_at(name='prices')\"", "Look.")
    model2 = ScriptedModel([tool_call("list_variables"), "Some."])
    ip.user_ns["model2"] = model2
    with pytest.raises(AssertionError) as failed:
        with capture_output():
            ip.run_cell_magic(
                "agent", "--model-object model2 --notebook --new --expect \"look_at(name='prices')\"", "Look."
            )
    assert str(failed.value).splitlines()[0] == (
        "Expectation not met: look_at(name='prices') was not called; call 1 list_variables() -> ok"
        " was not expected (end the calls with ', ...' to allow others)."
    )


def test_tools_names_a_notebook_tool_only_with_notebook(ip):
    model = ScriptedModel(["Ok."])
    ip.user_ns["model"] = model
    agent_cell(ip, "--model-object model --notebook --tools look_at --new", "Hi")
    assert offered(model) == ["look_at"]
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object model --tools look_at --new", "Hi")
    assert str(caught.value).startswith("%%agent --tools: no tool named look_at; the notebook has: ")


def test_notebook_with_no_tools_is_a_usage_error(ip):
    ip.user_ns["model"] = ScriptedModel(["Ok."])
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object model --notebook --no-tools", "Hi")
    assert str(caught.value) == (
        "%%agent: --notebook offers the notebook tools and --no-tools offers none; give one of them."
    )


def test_a_persons_tool_named_like_a_notebook_tool_is_a_usage_error_saying_how_to_fix_it(ip):
    @tool
    def look_at(name: str) -> str:
        """My own look."""
        return name

    ip.user_ns.update(look_at=look_at, model=ScriptedModel(["Ok."]))
    message = (
        "{}: the notebook tools include 'look_at', and so do the tools you offer; the model could be"
        ' offered only one of each name. Rename yours (@tool(name="..."), or an MCP server\'s with'
        " --prefix), or leave out the notebook tools (no --notebook; %tools remove notebook)."
    )
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object model --notebook", "Hi")
    assert str(caught.value) == message.format("%%agent")
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "add notebook")
    assert str(caught.value) == message.format("%tools add notebook")
    assert ip.meowgent.notebook_tools_on is False
    del ip.user_ns["look_at"]
    box = Toolbox("box", [look_at])
    ip.user_ns["box"] = box
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "--model-object model --notebook", "Hi")
    assert str(caught.value) == message.format("%%agent")


def test_tools_add_notebook_offers_them_in_every_cell_until_removed(ip):
    names = ", ".join(t.name for t in notebook_tools(ip.user_ns))
    with capture_output() as captured:
        ip.run_line_magic("tools", "add notebook")
    assert captured.stdout == (
        f"The notebook tools, offered in every cell (%tools remove notebook to stop): {names}.\n"
    )
    model = ScriptedModel(["One.", "Two."])
    ip.user_ns["model"] = model
    agent_cell(ip, "--model-object model --new", "Hi")
    expected = [t.name for t in notebook_tools(ip.user_ns)]
    assert offered(model) == expected
    with capture_output() as captured:
        shown = ip.run_line_magic("tools", "")
    assert captured.stdout == (
        f"The notebook tools, offered in every cell (%tools remove notebook to stop): {names}.\n"
    )
    assert [t.name for t in shown.tools] == expected
    with capture_output() as captured:
        ip.run_line_magic("tools", "remove notebook")
    assert captured.stdout == (
        "The notebook tools are off (%tools add notebook, or %%agent --notebook for one cell).\n"
    )
    agent_cell(ip, "--model-object model", "Again")
    assert not set(expected) & set(offered(model))
    with capture_output() as captured:
        ip.run_line_magic("tools", "")
    assert captured.stdout == ""


def test_tools_add_something_else_says_what_it_adds(ip):
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("tools", "add server")
    assert str(caught.value) == (
        "%tools add: add what? `%tools add notebook` adds the notebook tools (to every cell);"
        " an MCP server is `%tools mcp add ...`."
    )


def test_a_tool_named_add_is_still_shown_by_tools_add(ip):
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    ip.user_ns["add"] = add
    assert [t.name for t in ip.run_line_magic("tools", "add").tools] == ["add"]


def test_the_help_of_both_names_the_notebook_tools(ip):
    agent_help = ip.magics_manager.registry["AgentMagics"].agent.__doc__
    assert "--notebook" in agent_help
    assert "Offer the notebook tools too (notebook_tools:" in " ".join(agent_help.split())
    tools_help = ip.magics_manager.registry["ToolsMagics"].tools.__doc__
    assert "``%tools add notebook`` offers the notebook tools" in tools_help


def test_a_recorded_notebook_cell_replays_with_the_same_calls(ip, tmp_path):
    tape = tmp_path / "look.json"
    model = ScriptedModel([tool_call("look_at", name="prices"), "Three prices."])
    ip.user_ns.update(prices=[3, 1, 2], model=model, no_answers=ScriptedModel([]))
    recorded = agent_cell(ip, f"--model-object model --notebook --new --record {tape}", "Look.")
    replayed = agent_cell(ip, f"--model-object no_answers --notebook --new --replay {tape}", "Look.")
    assert replayed == recorded
    assert [r.output for r in ip.meowgent.last_result.tool_results] == [
        "prices (list):\nlist: 3 items:\n  3\n  1\n  2"
    ]


def test_a_rule_for_a_notebook_tool_is_no_typo_even_before_they_are_offered(ip, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no approvals.toml here
    with capture_output() as captured:
        ip.run_line_magic("agent", "allow look_at name=df")
    assert (captured.stdout, captured.stderr) == ("Rule 1: look_at name=df -> allow\n", "")
    with capture_output() as captured:
        ip.run_line_magic("agent", "allow look_at nme=df")
    assert captured.stderr == (
        "Warning: the rule 'look_at nme=df -> allow' never matches: look_at takes no argument 'nme';"
        " did you mean name?; the rule is kept, for a tool defined later.\n"
    )
    with capture_output() as captured:
        ip.run_line_magic("agent", "rules")
    assert captured.stdout.splitlines()[1:3] == [
        "  1. look_at name=df -> allow   (%agent allow)",
        "  2. look_at nme=df -> allow   (%agent allow)",
    ]
    assert "'look_at name=df -> allow' names no tool" not in captured.stdout
