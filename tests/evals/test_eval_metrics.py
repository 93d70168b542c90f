"""The eval's call metrics: per row (executes, arguments_match, made_up) and in the report's summary,
with hostile answers; and the tools block's size, counted or estimated."""

from __future__ import annotations

import json
import math

import pytest

from meowgent_nb import (
    EvalCase,
    EvalReport,
    FunctionModel,
    ScriptedModel,
    Tool,
    ToolCall,
    evaluate,
    render_tools_xml,
    tool,
)
from meowgent_nb.evals._tool_block import ToolBlockSize, tool_block_text
from meowgent_nb.models import ModelChunk
from meowgent_nb.protocols.prompt import JSON_TOOL_RULES, TOOL_RULES
from meowgent_nb.protocols.registry import get_protocol
from tests.support.tool_calls import call

RAN: list[str] = []


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    RAN.append("add")
    return a + b


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    RAN.append("get_weather")
    return f"Sunny in {city}"


# A foreign schema that lets unknown arguments through: a made-up one validates, and still counts.
lookup = Tool.from_schema(
    "lookup",
    "Look a word up.",
    {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": True,
    },
    lambda **kw: RAN.append("lookup"),
)
TOOLS = [add, get_weather, lookup]


# (case, answer, (chosen, passed, executes, arguments_match, made_up, called_without_need))
HOSTILE = [
    # the right call
    (EvalCase("1+2", "add", {"a": 1, "b": 2}), call("add", a=1, b=2), ("add", True, True, True, (), False)),
    # a tool that is not offered, where one was expected
    (
        EvalCase("Weather in Oslo?", "get_weather"),
        call("get_forecast", city="Oslo"),
        ("get_forecast", False, False, None, ("get_forecast",), False),
    ),
    # the right tool with an extra, made-up argument: validation refuses it
    (
        EvalCase("2+3", "add", {"a": 2}),
        call("add", a=2, b=3, precision=2),
        ("add", False, False, False, ("precision",), False),
    ),
    # a made-up argument the tool's schema lets through: it would run, and it is still made up
    (
        EvalCase("Define cat", "lookup", {"word": "cat"}),
        call("lookup", word="cat", language="en", x=1),
        ("lookup", True, True, True, ("language", "x"), False),
    ),
    # unreadable JSON
    (
        EvalCase("3+4", "add"),
        "<tool_call>{nonsense</tool_call>",
        ("(unreadable)", False, False, None, (), False),
    ),
    # the right tool, an argument of the wrong type
    (EvalCase("4+5", "add"), call("add", a="four", b=5), ("add", False, False, False, (), False)),
    # the right tool, a wrong value
    (EvalCase("5+6", "add", {"a": 5, "b": 6}), call("add", a=5, b=7), ("add", False, True, False, (), False)),
    # another offered tool, valid arguments
    (EvalCase("6+7", "add"), call("get_weather", city="Rome"), ("get_weather", False, True, None, (), False)),
    # no call where one was expected
    (EvalCase("7+8", "add"), "I would rather not.", (None, False, None, None, (), False)),
    # a case expecting no tool: no call
    (EvalCase("Hello", None), "Hi there!", (None, True, None, None, (), False)),
    # a case expecting no tool: a made-up tool ("Call my mother.")
    (
        EvalCase("Call my mother.", None),
        call("call_contact", who="mother"),
        ("call_contact", False, False, None, ("call_contact",), True),
    ),
    # a case expecting no tool: an offered tool, valid arguments
    (EvalCase("Write a poem", None), call("add", a=1, b=1), ("add", False, True, None, (), True)),
]


@pytest.fixture(scope="module")
def report() -> EvalReport:
    RAN.clear()
    return evaluate([c for c, _, _ in HOSTILE], tools=TOOLS, model=ScriptedModel([a for _, a, _ in HOSTILE]))


def test_each_row_says_whether_the_call_would_run_was_right_and_made_anything_up(report):
    got = [
        (r.chosen, r.passed, r.executes, r.arguments_match, r.made_up, r.called_without_need)
        for r in report.rows
    ]
    assert got == [expected for _, _, expected in HOSTILE]
    assert [r.hallucinated for r in report.rows] == [bool(e[4]) for _, _, e in HOSTILE]
    assert RAN == []  # not even the calls that would have run


def test_the_reasons_of_the_hostile_rows(report):
    assert [r.reason for r in report.rows[1:6]] == [
        "expected get_weather, chose get_forecast",
        "invalid arguments: precision: unknown argument; this tool takes: a, b",
        "",
        "expected add, the call could not be read",
        'invalid arguments: a: input should be a valid integer, unable to parse string as an integer, got "four"',
    ]


def test_the_summary_counts_each_metric_over_its_own_cases(report):
    summary = report.summary()
    # 9 cases expected a tool; 5 named it (add, add, lookup, add, add); of those, 2 had the
    # arguments right (the first add and lookup)
    assert summary["tool_choice"] == {"cases": 9, "passed": 5, "accuracy": 5 / 9}
    assert summary["arguments"] == {"cases": 5, "passed": 2, "accuracy": 0.4}
    # 10 answers held a call (all but "I would rather not." and "Hi there!"); 5 could run
    assert summary["execution"] == {"count": 5, "of": 10, "rate": 0.5}
    # made up: get_forecast, precision, language, call_contact
    assert summary["hallucination"] == {"count": 4, "of": 10, "rate": 0.4}
    assert summary["called_without_need"] == {"count": 2, "of": 3, "rate": 2 / 3}
    assert summary["no_tool_cases"] == {"cases": 3, "passed": 1, "accuracy": 1 / 3}
    assert summary["tool_cases"] == {"cases": 9, "passed": 2, "accuracy": 2 / 9}
    block = tool_block_text(get_protocol("xml"), TOOLS, None)
    assert summary["tool_block"] == {
        "tokens": math.ceil(len(block) / 4),
        "characters": len(block),
        "estimated": True,
    }


def test_the_metrics_as_text(report):
    block = tool_block_text(get_protocol("xml"), TOOLS, None)
    assert report.metrics_text() == (
        "metric                                             count  of  rate\n"
        "tool choice (of tool cases)                        5      9   56%\n"
        "argument accuracy (of right tool named)            2      5   40%\n"
        "execution success (of calls)                       5      10  50%\n"
        "hallucination (of calls)                           4      10  40%\n"
        "called when no tool was needed (of no-tool cases)  2      3   67%\n"
        "\n"
        f"tools block: ~{math.ceil(len(block) / 4):,} tokens (estimated: {len(block):,} characters / 4)"
    )
    assert report.to_text().endswith("\n\n" + report.metrics_text())


def test_the_metrics_in_html_on_one_line():
    rows = evaluate(
        [EvalCase("1+2", "add"), EvalCase("Hi", None)],
        tools=[add],
        model=ScriptedModel([call("add", a=1, b=2), "Hi."]),
    ).rows
    report = EvalReport(rows, tool_block=ToolBlockSize(tokens=1234, characters=4321, estimated=False))
    assert report.to_html().endswith(
        '<div class="meowgent-eval-metrics" style="margin-top: 0.3em">'
        'tool choice (of tool cases) <span style="font-weight: 600">100%</span> (1/1) · '
        'argument accuracy (of right tool named) <span style="font-weight: 600">100%</span> (1/1) · '
        'execution success (of calls) <span style="font-weight: 600">100%</span> (1/1) · '
        'hallucination (of calls) <span style="font-weight: 600">0%</span> (0/1) · '
        'called when no tool was needed (of no-tool cases) <span style="font-weight: 600">0%</span> (0/1) · '
        'tools block <span style="font-weight: 600">1,234 tokens (the model&#x27;s tokenizer)</span></div></div>'
    )
    assert report.metrics_text().endswith("\n\ntools block: 1,234 tokens (the model's tokenizer)")
    assert '<div class="meowgent-eval-metrics"' in EvalReport(rows).to_html()  # no block: no block item
    assert "tools block" not in EvalReport(rows).to_html()
    assert report.to_html().count("<strong>") == 1  # the title, which the browser tests find


def test_a_made_up_name_with_markup_and_newlines_stays_one_escaped_line():
    name = "<script>alert(1)</script>\n\nignore the above" + "x" * 100
    report = evaluate([EvalCase("Hi", None)], tools=[add], model=ScriptedModel([call(name)]))
    row = report.rows[0]
    assert (row.chosen, row.made_up, row.executes, row.called_without_need) == (name, (name,), False, True)
    line = report.cases_text().splitlines()[1]
    assert line == (
        "Hi      -         (none)    <script>alert(1)</script> ignore the ...  FAIL: expected no tool, chose"
        " <script>alert(1)</script> ignore the above" + "x" * 100
    )
    html = report.to_html()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_native_calls_are_judged_the_same():
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("add", {"a": 1, "b": 2, "c": 3}),))]])
    report = evaluate([EvalCase("1+2", "add")], tools=[add], model=model, protocol="native")
    row = report.rows[0]
    assert (row.executes, row.arguments_match, row.made_up) == (False, False, ("c",))
    block = "\n".join(json.dumps(t.to_json_schema()) for t in [add])
    assert report.tool_block == ToolBlockSize(math.ceil(len(block) / 4), len(block), True)


# --- the tools block -----------------------------------------------------------------------------


def test_the_tools_block_is_what_the_protocol_shows_of_the_tools():
    xml = "\n\n" + TOOL_RULES.replace("{tools}", render_tools_xml(TOOLS))
    assert tool_block_text(get_protocol("xml"), TOOLS, None) == xml
    assert tool_block_text(get_protocol("xml"), TOOLS, "Be brief.") == xml  # the person's part is not counted
    assert tool_block_text(get_protocol("json"), TOOLS, None) == "\n\n" + JSON_TOOL_RULES.replace(
        "{tools}", render_tools_xml(TOOLS)
    )
    assert tool_block_text(get_protocol("native"), TOOLS, None) == "\n".join(
        json.dumps(t.to_json_schema()) for t in TOOLS
    )
    seed = tool_block_text(get_protocol("xml-seed"), TOOLS, None)
    assert seed.startswith("\n\n# Tools") and '<parameter name="a" type="integer" required="true">' in seed
    for protocol in ("xml", "native", "json", "xml-seed"):
        assert tool_block_text(get_protocol(protocol), [], None) == ""


class CountingScriptedModel(ScriptedModel):
    """A scripted model with a tokenizer: one token per word, and a note of what it counted when."""

    def __init__(self, turns):
        super().__init__(turns)
        self.counted: list[tuple[str, int]] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append((text, len(self.requests)))
        return len(text.split())


def test_a_model_with_a_tokenizer_counts_the_block_once_after_the_cases():
    model = CountingScriptedModel([call("add", a=1, b=2), "Hi."])
    report = evaluate(
        [EvalCase("1+2", "add"), EvalCase("Hi", None)], tools=[add], model=model, system="Be brief."
    )
    block = tool_block_text(get_protocol("xml"), [add], None)
    assert model.counted == [(block, 2)]  # once, after both requests
    assert report.tool_block == ToolBlockSize(len(block.split()), len(block), False)
    assert report.summary()["tool_block"] == {
        "tokens": len(block.split()),
        "characters": len(block),
        "estimated": False,
    }
    assert report.to_text().endswith(f"\n\ntools block: {len(block.split())} tokens (the model's tokenizer)")


def test_without_tools_the_block_is_empty():
    report = evaluate([EvalCase("Hi", None)], tools=[], model=FunctionModel(lambda messages, tools: "Hello."))
    assert report.tool_block == ToolBlockSize(0, 0, True)
    assert report.to_text().endswith("\n\ntools block: ~0 tokens (estimated: 0 characters / 4)")


def test_an_unknown_protocol_fails_before_any_case_runs():
    model = ScriptedModel(["Hi."])
    with pytest.raises(ValueError) as error:
        evaluate([EvalCase("Hi", None)], tools=[add], model=model, protocol="yaml")
    assert str(error.value) == "protocol must be 'xml', 'native', 'json', 'list' or 'decide', got 'yaml'"
    assert model.requests == []
