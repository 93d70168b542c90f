"""``propose_cell(code)`` where no one can insert it: a real IPython shell without a kernel, a
script. The tool returns at once, the proposal is in ``result.proposed_cells`` and the model is
told in a line; empty code is refused; code that does not parse is still proposed, and said so."""

from __future__ import annotations

from IPython.utils.capture import capture_output

from meowgent_nb import Agent, ScriptedModel
from meowgent_nb.notebook.workspace import notebook_tools, propose_cell_tool
from meowgent_nb.notebook.workspace.proposals import parse_problem
from meowgent_nb.tools.proposed import ProposedCell
from tests.support.tool_calls import call

HEADLESS = "proposed; nobody to insert it in a headless run"


def test_a_run_without_a_kernel_inserts_nothing_and_keeps_the_proposals_in_order(ip):
    codes = ["df.groupby('city').temp.mean()", "%timeit df.temp.max()"]
    model = ScriptedModel(
        [call("propose_cell", code=codes[0]), call("propose_cell", code=codes[1]), "Run them."]
    )
    result = Agent(model, tools=notebook_tools(ip.user_ns)).run("what next?")
    assert result.proposed_cells == [
        ProposedCell(codes[0], False, HEADLESS),
        ProposedCell(codes[1], False, HEADLESS),
    ]
    assert [(r.kind, r.output) for r in result.tool_results] == [("ok", HEADLESS), ("ok", HEADLESS)]
    assert ip.payload_manager.read_payload() == []


def test_empty_code_is_refused_with_one_line_saying_what_to_send(ip):
    model = ScriptedModel([call("propose_cell", code="  \n"), "ok"])
    result = Agent(model, tools=[propose_cell_tool()]).run("next?")
    assert [(r.kind, r.output) for r in result.tool_results] == [
        (
            "error",
            "Error: ValueError: propose_cell needs code: the proposed cell is empty; send the cell's Python code",
        )
    ]
    assert result.proposed_cells == []


def test_code_that_does_not_parse_is_proposed_and_said_not_to_parse(ip):
    code = "total = df.temp.sum(\n# your turn: finish the call"
    model = ScriptedModel([call("propose_cell", code=code), "ok"])
    result = Agent(model, tools=[propose_cell_tool()]).run("an exercise")
    problem = "'(' was never closed, line 1"
    assert result.proposed_cells == [
        ProposedCell(code, False, f"{HEADLESS} (the code does not parse: {problem})", problem)
    ]


def test_ipython_syntax_parses_and_python_errors_are_named():
    assert parse_problem("!ls\n%time x = 1\nx") is None
    assert parse_problem("await thing()") is None
    assert parse_problem("return 1") == "'return' outside function, line 1"
    assert parse_problem("x = \0") == "source code string cannot contain null bytes, line 1"


def test_called_outside_an_agent_it_says_so():
    proposed = propose_cell_tool().function(code="x = 1")
    assert proposed == ProposedCell(
        "x = 1", False, "proposed; nobody to insert it: propose_cell was called outside an agent's run"
    )


def test_the_tool_asks_no_approval_and_takes_only_code():
    tool = propose_cell_tool()
    assert (tool.name, tool.parameters["required"], tool.approval, tool.read_only) == (
        "propose_cell",
        ["code"],
        False,
        False,
    )


def test_the_card_shows_the_proposed_cell_as_the_cell_would_hold_it(ip):
    code = "for city, temp in rows:\n    print(city, temp\n"
    ip.user_ns.update(
        model=ScriptedModel([call("propose_cell", code=code), "Try it."]), pc=propose_cell_tool()
    )
    with capture_output() as captured:
        ip.run_cell_magic("agent", "--model-object model --new", "a loop, please")
    shown = captured.outputs[-1].data
    problem = "'(' was never closed, line 2"
    assert shown["text/plain"].splitlines() == [
        f"[tool] propose_cell(code={code!r}) -> done",
        f"  {HEADLESS} (the code does not parse: {problem})",
        "  proposed cell:",
        "    for city, temp in rows:",
        "        print(city, temp",
        "Try it.",
    ]
    html = shown["text/html"]
    assert '<div class="meowgent-proposed-cell">proposed cell:<div class="meowgent-code"' in html
    assert '<span style="color: #008000; font-weight: bold">for</span>' in html  # highlighted as Python
