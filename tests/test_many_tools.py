"""benchmarks/many_tools.py on its deterministic oracle: the tool sets, the scoring, the searches."""

from __future__ import annotations

import asyncio

from benchmarks._accuracy_cases import CASES, TOOLS
from benchmarks._toolsets import MANY_TOOLS
from benchmarks.many_tools import Outcome, judge, oracle, run_case, spread, tool_set
from meowgent_nb import Agent, EvalCase, ToolCall


def test_the_tool_sets_hold_the_case_tools_among_distractors_in_a_fixed_order():
    assert len(MANY_TOOLS) == len({t.name for t in MANY_TOOLS}) == 100
    for size in (8, 20, 100):
        tools = tool_set(size)
        assert len(tools) == len({t.name for t in tools}) == size
        assert {t.name for t in TOOLS} <= {t.name for t in tools}
    assert [t.name for t in tool_set(20)] == [t.name for t in tool_set(20)]
    assert [t.name for t in tool_set(20)] != [t.name for t in tool_set(20, seed=1)]
    assert [c.prompt for c in spread(CASES, 4)] == [CASES[i].prompt for i in (0, 11, 22, 33)]


def outcome(case: EvalCase, search: bool) -> Outcome:
    agent = Agent(oracle(CASES), tools=tool_set(100), tool_search=search, max_turns=4)
    result = asyncio.run(run_case(agent, case))
    result.seconds = 0.0
    return result


def test_the_oracle_finds_a_named_need_and_misses_an_implied_one():
    berlin = next(c for c in CASES if c.prompt == "What's the weather like in Berlin right now?")
    tokyo = next(c for c in CASES if c.prompt == "Is it raining in Tokyo?")
    hello = next(c for c in CASES if c.tool is None)
    assert outcome(berlin, search=False) == Outcome(True, "", 0, False)
    assert outcome(berlin, search=True) == Outcome(True, "", 1, True)
    assert outcome(tokyo, search=True) == Outcome(False, "expected get_weather, chose none", 1, False)
    assert outcome(hello, search=True) == Outcome(True, "", 0, False)


def test_judge_reads_the_expected_tool_and_arguments():
    case = EvalCase(
        "Convert 5 km to miles", "convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"}
    )
    right = ToolCall("convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"})
    assert judge(case, right) == ""
    assert judge(case, ToolCall("convert_units", {"value": 5, "from_unit": "km", "to_unit": "m"})) == (
        "to_unit: expected 'mi', got 'm'"
    )
    assert judge(case, ToolCall("get_weather", {"city": "x"})) == "expected convert_units, chose get_weather"
    assert judge(case, None) == "expected convert_units, chose none"
    assert judge(EvalCase("Hi", None), right) == "expected no tool, chose convert_units"
