"""Tool-description evals with deterministic models, and ``%tools eval`` through a real shell."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from IPython.core.error import UsageError

from meowgent_nb import Agent, EvalCase, EvalReport, FunctionModel, ScriptedModel, ToolCall, evaluate, tool
from meowgent_nb.evals.evaluation import TEXT_LIMIT, EvalRow, aevaluate
from meowgent_nb.evals.report import cases_html, result_html
from meowgent_nb.models import ModelChunk, ModelRequest
from meowgent_nb.testing import assert_tools_offered
from tests.models.test_llamacpp_model import real_model
from tests.support.tool_calls import call

RAN: list[str] = []


@tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """The current weather in a city.

    Args:
        city: The city's name.
        unit: The temperature unit.
    """
    RAN.append("get_weather")
    return f"Sunny in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    RAN.append("add")
    return a + b


TOOLS = [get_weather, add]


CASES = [
    EvalCase("Weather in Paris?", "get_weather", {"city": "Paris"}, "understanding"),
    EvalCase("Weather in Oslo, in Celsius", "get_weather", {"city": "Oslo", "unit": "celsius"}, "parameters"),
    {"prompt": "What is 17 plus 4?", "tool": "add", "arguments": {"a": 17, "b": 4}, "category": "parameters"},
    EvalCase("Hello there!", None, category="boundaries"),
    EvalCase("Sum 2 and 2", "add", {"a": 2}, "understanding"),
    EvalCase("Is it raining in Rome?", "get_weather", category="understanding"),
    EvalCase("Write me a poem", None, category="refusal"),
]
ANSWERS = [
    call("get_weather", city="Paris"),  # passes
    call("get_weather", city="Oslo", unit="fahrenheit"),  # wrong argument
    call("add", a="17", b="4"),  # passes: "17" validates to 17
    "Hi! How can I help?",  # passes
    call("get_weather", city="2"),  # wrong tool
    "I cannot tell.",  # no call when one was expected
    call("add", a=1, b=2),  # a call when none was expected
]


@pytest.fixture
def report() -> EvalReport:
    RAN.clear()
    return evaluate(CASES, tools=TOOLS, model=ScriptedModel(ANSWERS))


def test_each_case_passes_or_fails_with_its_reason(report):
    assert [(r.expected, r.chosen, r.passed, r.reason) for r in report.rows] == [
        ("get_weather", "get_weather", True, ""),
        ("get_weather", "get_weather", False, "argument unit: expected 'celsius', got 'fahrenheit'"),
        ("add", "add", True, ""),
        (None, None, True, ""),
        ("add", "get_weather", False, "expected add, chose get_weather"),
        ("get_weather", None, False, "expected get_weather, chose none"),
        (None, "add", False, "expected no tool, chose add"),
    ]
    assert report.rows[2].arguments == {"a": "17", "b": "4"}  # as the model sent them
    assert report.rows[2].category == "parameters"
    assert all(row.seconds >= 0 for row in report.rows)


def test_no_tool_runs_during_an_eval(report):
    assert RAN == []


def test_summary_by_category_and_by_kind_of_case(report):
    assert report.summary() == {
        "by_category": {
            "understanding": {"cases": 3, "passed": 1, "accuracy": 1 / 3},
            "parameters": {"cases": 2, "passed": 1, "accuracy": 0.5},
            "boundaries": {"cases": 1, "passed": 1, "accuracy": 1.0},
            "refusal": {"cases": 1, "passed": 0, "accuracy": 0.0},
        },
        "tool_cases": {"cases": 5, "passed": 2, "accuracy": 0.4},
        "no_tool_cases": {"cases": 2, "passed": 1, "accuracy": 0.5},
        "all": {"cases": 7, "passed": 3, "accuracy": 3 / 7},
        # 3 of 5 named the expected tool; of those 3, 2 had the arguments right
        "tool_choice": {"cases": 5, "passed": 3, "accuracy": 0.6},
        "arguments": {"cases": 3, "passed": 2, "accuracy": 2 / 3},
        # 5 calls, all to offered tools with valid arguments; 1 of 2 no-tool cases got one
        "execution": {"count": 5, "of": 5, "rate": 1.0},
        "hallucination": {"count": 0, "of": 5, "rate": 0.0},
        "called_without_need": {"count": 1, "of": 2, "rate": 0.5},
        # a ScriptedModel has no tokenizer: 849 characters / 4, rounded up
        "tool_block": {"tokens": 213, "characters": 849, "estimated": True},
        # run once: every run is a case, and nothing can flip
        "repeat": 1,
        "runs": {"cases": 7, "passed": 3, "accuracy": 3 / 7},
        "flips": [],
    }


TEXT = """\
prompt                       category       expected     chosen       result
Weather in Paris?            understanding  get_weather  get_weather  pass
Weather in Oslo, in Celsius  parameters     get_weather  get_weather  FAIL: argument unit: expected 'celsius', got 'fahrenheit'
What is 17 plus 4?           parameters     add          add          pass
Hello there!                 boundaries     (none)       (none)       pass
Sum 2 and 2                  understanding  add          get_weather  FAIL: expected add, chose get_weather
Is it raining in Rome?       understanding  get_weather  (none)       FAIL: expected get_weather, chose none
Write me a poem              refusal        (none)       add          FAIL: expected no tool, chose add

category       cases  passed  accuracy
understanding  3      1       33%
parameters     2      1       50%
boundaries     1      1       100%
refusal        1      0       0%
tool cases     5      2       40%
no-tool cases  2      1       50%
all            7      3       43%

metric                                             count  of  rate
tool choice (of tool cases)                        3      5   60%
argument accuracy (of right tool named)            2      3   67%
execution success (of calls)                       5      5   100%
hallucination (of calls)                           0      5   0%
called when no tool was needed (of no-tool cases)  1      2   50%

tools block: ~213 tokens (estimated: 849 characters / 4)"""


def test_text_plain_is_an_exact_table_without_timings(report):
    bundle = report._repr_mimebundle_()
    assert bundle["text/plain"] == TEXT
    assert report.to_text() == TEXT
    assert str(report) == TEXT
    assert repr(report) == "EvalReport(cases=7, passed=3)"


def test_html_shows_arguments_and_escapes(report):
    html = report._repr_mimebundle_()["text/html"]
    assert html.startswith('<div class="meowgent-eval-report"><strong>Tool eval: 3 of 7 passed</strong>')
    assert (
        '<td style="text-align: left">{&quot;a&quot;: &quot;17&quot;, &quot;b&quot;: &quot;4&quot;}</td>'
        in html
    )
    assert '<table class="meowgent-eval-summary">' in html


def test_each_case_gets_the_first_turn_an_agent_would_send():
    model = ScriptedModel(["Hello.", call("add", a=1, b=2)])
    evaluate([EvalCase("Hi", None), EvalCase("1+2", "add")], tools=TOOLS, model=model, system="Be brief.")
    expected = Agent(ScriptedModel(), tools=TOOLS, system="Be brief.").system_prompt()
    assert [r.messages for r in model.requests] == [
        [{"role": "system", "content": expected}, {"role": "user", "content": "Hi"}],
        [{"role": "system", "content": expected}, {"role": "user", "content": "1+2"}],
    ]
    assert [[t.name for t in r.offered] for r in model.requests] == [["get_weather", "add"]] * 2


def test_async_eval_with_a_function_model_and_invalid_arguments():
    def answer(messages, tools):
        prompt = messages[-1]["content"]
        return call("add", a="seventeen", b=4) if "seventeen" in prompt else call("add", a=17, b=5)

    RAN.clear()
    cases = [
        {"prompt": "seventeen plus 4", "tool": "add"},
        {"prompt": "17 plus 4", "tool": "add", "arguments": {"b": 4}},
    ]
    report = asyncio.run(aevaluate(cases, tools=TOOLS, model=FunctionModel(answer)))
    assert [(r.passed, r.reason) for r in report.rows] == [
        (
            False,
            'invalid arguments: a: input should be a valid integer, unable to parse string as an integer, got "seventeen"',
        ),
        (False, "argument b: expected 4, got 5"),
    ]
    assert RAN == []
    assert report.summary()["by_category"] == {"": {"cases": 2, "passed": 0, "accuracy": 0.0}}


def test_native_protocol_calls_and_tools_sent_to_the_backend():
    RAN.clear()
    model = ScriptedModel([[ModelChunk(tool_calls=(ToolCall("add", {"a": "2", "b": 3}),))]])
    report = evaluate([EvalCase("2+3", "add", {"a": 2, "b": 3})], tools=TOOLS, model=model, protocol="native")
    assert [(r.chosen, r.arguments, r.passed) for r in report.rows] == [("add", {"a": "2", "b": 3}, True)]
    assert [t.name for t in model.requests[0].tools] == ["get_weather", "add"]
    assert RAN == []


def test_an_unreadable_call():
    report = evaluate(
        [EvalCase("1+2", "add")], tools=TOOLS, model=ScriptedModel(["<tool_call>{nonsense</tool_call>"])
    )
    assert report.rows[0].reason == "expected add, the call could not be read"


def test_bad_cases_are_listed_together():
    cases = [{"prompt": "x"}, {"prompt": "y", "tool": None, "tol": 1}, EvalCase("z", "mul"), "w"]
    with pytest.raises(ValueError) as error:
        evaluate(cases, tools=TOOLS, model=ScriptedModel())
    assert str(error.value) == (
        "Invalid eval cases:\n"
        "- case 1: missing tool (tool None: no tool expected)\n"
        "- case 2: unknown keys tol\n"
        "- case 3: no tool named 'mul' (tools: get_weather, add)\n"
        "- case 4: an EvalCase or a dict, got str"
    )


def test_rows_are_values():
    row = EvalRow("p", "", None, None, {}, True, "", 0.0)
    assert EvalReport([row]).summary()["tool_cases"] == {"cases": 0, "passed": 0, "accuracy": None}
    assert EvalReport([row]).summary()["execution"] == {"count": 0, "of": 0, "rate": None}
    assert EvalReport([row]).summary()["tool_block"] is None
    # made without a tools block: the metrics end the text, without a tools-block line
    assert EvalReport([row]).to_text().splitlines()[-10:] == [
        "tool cases     0      0       -",
        "no-tool cases  1      1       100%",
        "all            1      1       100%",
        "",
        "metric                                             count  of  rate",
        "tool choice (of tool cases)                        0      0   -",
        "argument accuracy (of right tool named)            0      0   -",
        "execution success (of calls)                       0      0   -",
        "hallucination (of calls)                           0      0   -",
        "called when no tool was needed (of no-tool cases)  0      1   0%",
    ]
    assert (row.executes, row.arguments_match, row.made_up, row.hallucinated, row.called_without_need) == (
        None,
        None,
        (),
        False,
        False,
    )


# --- rows as they finish ------------------------------------------------------------------------


def test_on_row_reports_each_row_as_its_case_finishes_in_order():
    seen = []

    def on_row(row, done, total):
        seen.append((row, done, total, len(model.requests)))

    model = ScriptedModel(ANSWERS)
    report = evaluate(CASES, tools=TOOLS, model=model, on_row=on_row)
    assert [(row.prompt, done, total, asked) for row, done, total, asked in seen] == [
        ("Weather in Paris?", 1, 7, 1),  # called before the next case's request
        ("Weather in Oslo, in Celsius", 2, 7, 2),
        ("What is 17 plus 4?", 3, 7, 3),
        ("Hello there!", 4, 7, 4),
        ("Sum 2 and 2", 5, 7, 5),
        ("Is it raining in Rome?", 6, 7, 6),
        ("Write me a poem", 7, 7, 7),
    ]
    assert [row for row, *_ in seen] == report.rows  # the same rows the report holds
    assert report.to_text() == TEXT  # and the report is unchanged


def test_on_row_in_aevaluate():
    seen = []
    report = asyncio.run(
        aevaluate(
            [EvalCase("Hi", None), EvalCase("1+2", "add")],
            tools=TOOLS,
            model=ScriptedModel(["Hello.", call("add", a=1, b=2)]),
            on_row=lambda row, done, total: seen.append((row.chosen, row.passed, done, total)),
        )
    )
    assert seen == [(None, True, 1, 2), ("add", True, 2, 2)]
    assert len(report.rows) == 2


# --- coloured HTML -------------------------------------------------------------------------------

PASS_PILL = (
    '<span class="meowgent-eval-pass" style="background: #2e7d32; color: white; border-radius: 3px;'
    ' padding: 0 0.4em; font-size: 0.85em; font-weight: 600">pass</span>'
)
FAIL_PILL = (
    '<span class="meowgent-eval-fail" style="background: #c62828; color: white; border-radius: 3px;'
    ' padding: 0 0.4em; font-size: 0.85em; font-weight: 600">FAIL</span>'
)
CELL = '<td style="text-align: left">'
TIME_CELL = '<td style="text-align: left; white-space: nowrap">'
ROWS = [
    EvalRow(
        "Weather in Paris?", "understanding", "get_weather", "get_weather", {"city": "Paris"}, True, "", 0.085
    ),
    EvalRow("Hi <b>", "", None, "add", {"a": 1}, False, "expected no tool, chose add", 12.5),
    EvalRow("Poem", "refusal", None, None, {}, True, "", 3.2, stopped_after=300),
]


def test_result_pills_are_white_on_green_or_red():
    assert result_html(ROWS[0]) == PASS_PILL
    assert result_html(ROWS[1]) == FAIL_PILL + " expected no tool, chose add"
    assert (
        result_html(ROWS[2])
        == PASS_PILL
        + ' <span style="opacity: 0.65; font-size: 0.85em">(no call in the first 300 characters)</span>'
    )


def test_the_table_of_cases_is_exact_and_its_time_column_does_not_wrap():
    head = "".join(
        f'<th style="text-align: left">{name}</th>'
        for name in ["prompt", "category", "expected", "chosen", "arguments", "result", "time"]
    )
    rows = [
        [
            "<code>Weather in Paris?</code>",
            "understanding",
            "get_weather",
            "get_weather",
            "{&quot;city&quot;: &quot;Paris&quot;}",
            PASS_PILL,
            "85 ms",
        ],
        [
            "<code>Hi &lt;b&gt;</code>",
            "-",
            "(none)",
            "add",
            "{&quot;a&quot;: 1}",
            FAIL_PILL + " expected no tool, chose add",
            "12.5 s",
        ],
        ["<code>Poem</code>", "refusal", "(none)", "(none)", "", result_html(ROWS[2]), "3.20 s"],
    ]
    body = "".join(
        "<tr>" + "".join(CELL + x + "</td>" for x in r[:-1]) + TIME_CELL + r[-1] + "</td></tr>" for r in rows
    )
    expected = f'<table class="meowgent-eval"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    assert cases_html(ROWS) == expected
    assert EvalReport(ROWS).to_html() == (
        '<div class="meowgent-eval-report"><strong>Tool eval: 2 of 3 passed</strong>'
        + expected
        + EvalReport(ROWS).to_html().split("</table>", 1)[1]
    )
    assert EvalReport(ROWS).to_html().count('<table class="meowgent-eval-summary">') == 1


def test_a_running_case_row_is_muted():
    html = cases_html([], ["Weather?", "-", "get_weather", "", "", "running...", "2.00 s"])
    assert html.endswith(
        f"<tbody><tr>{CELL}<code>Weather?</code></td>{CELL}-</td>{CELL}get_weather</td>{CELL}</td>{CELL}</td>"
        f'{CELL}<span style="opacity: 0.65; font-size: 0.85em">running...</span></td>{TIME_CELL}2.00 s</td></tr>'
        "</tbody></table>"
    )


# --- stopping a long answer ----------------------------------------------------------------------


class CountingModel:
    """Streams each answer from its list of chunks, and counts the chunks it was read for."""

    name = "counting"

    def __init__(self, *answers: list[ModelChunk]):
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []
        self.sent: list[int] = []
        """Per request, how many chunks the reader took."""
        self.closed: list[bool] = []
        """Per request, whether the stream was closed before its end."""

    async def stream(self, request):
        self.requests.append(request)
        chunks = self.answers[len(self.requests) - 1]
        self.sent.append(0)
        self.closed.append(True)
        for chunk in chunks:
            self.sent[-1] += 1
            yield chunk
        self.closed[-1] = False
        yield ModelChunk(done=True, finish_reason="stop")


def words(count: int) -> list[ModelChunk]:
    return [ModelChunk(text="Rain falls ") for _ in range(count)]  # 11 characters each


@pytest.mark.parametrize("protocol", ["xml", "native"])
def test_a_long_answer_without_a_call_stops_after_text_limit_characters(protocol):
    RAN.clear()
    model = CountingModel(words(1000))
    case = EvalCase("Write me a poem", None, category="refusal")
    report = evaluate([case], tools=TOOLS, model=model, protocol=protocol)
    assert model.sent == [28]  # 27 chunks are 297 characters; the 28th reaches 300
    assert model.closed == [True]  # the stream was closed, not read to its end
    row = report.rows[0]
    # 308 characters written; xml's parser shows 307: the last space waits for what follows it (a
    # call drops it). native text is shown as the backend sends it.
    shown = {"xml": 307, "native": 308}[protocol]
    assert (row.passed, row.reason, row.chosen, row.stopped_after) == (True, "", None, shown)
    assert report.to_text().splitlines()[1].endswith("(none)  pass")  # text/plain as before
    assert TEXT_LIMIT == 300
    assert RAN == []


def test_a_case_that_expected_a_call_says_where_reading_stopped():
    model = CountingModel([*words(50), ModelChunk(text=call("add", a=1, b=2))])
    report = evaluate([EvalCase("1+2", "add")], tools=TOOLS, model=model, text_limit=100)
    assert model.sent == [10]
    # 110 characters written, 109 shown: the last space waits for what follows it.
    assert report.rows[0].reason == "expected add, chose none (no call in the first 109 characters)"
    assert (
        report.to_text()
        .splitlines()[1]
        .endswith("FAIL: expected add, chose none (no call in the first 109 characters)")
    )


def test_without_a_text_limit_the_answer_is_read_to_its_call():
    model = CountingModel([*words(50), ModelChunk(text=call("add", a=1, b=2))])
    report = evaluate([EvalCase("1+2", "add", {"a": 1})], tools=TOOLS, model=model, text_limit=None)
    assert model.sent == [51]
    assert model.closed == [True]  # the call ends the reading, as ever
    assert (report.rows[0].passed, report.rows[0].stopped_after) == (True, None)


def test_a_sentence_before_the_call_and_long_thinking_do_not_stop_the_reading():
    thinking = [ModelChunk(thinking="Hmm, which tool? " * 10) for _ in range(10)]  # 1,700 characters
    preamble = [ModelChunk(text="Let me add these for you."), ModelChunk(text="\n\n<tool_")]
    model = CountingModel(thinking + preamble + [ModelChunk(text=call("add", a=1, b=2)[6:])])
    report = evaluate([EvalCase("1+2", "add", {"a": 1, "b": 2})], tools=TOOLS, model=model)
    assert model.sent == [13]
    assert (report.rows[0].passed, report.rows[0].chosen, report.rows[0].stopped_after) == (True, "add", None)


def test_a_held_back_bare_call_is_not_text():
    # An answer that starts like a bare {"name": ...} call shows no text until it is read whole.
    city = "Llanfairpwllgwyngyll" * 20  # 400 characters
    bare = json.dumps({"name": "get_weather", "arguments": {"city": city}})
    model = CountingModel([ModelChunk(text=bare[i : i + 10]) for i in range(0, len(bare), 10)])
    report = evaluate([EvalCase("Weather?", "get_weather", {"city": city})], tools=TOOLS, model=model)
    assert model.closed == [False]  # read to its end, where a bare call is read
    assert (report.rows[0].passed, report.rows[0].chosen, report.rows[0].stopped_after) == (
        True,
        "get_weather",
        None,
    )


@pytest.mark.parametrize("limit", [0, -1, 2.5, True])
def test_text_limit_must_be_a_positive_whole_number(limit):
    with pytest.raises(ValueError) as error:
        evaluate([EvalCase("Hi", None)], tools=TOOLS, model=ScriptedModel(["Hi."]), text_limit=limit)
    assert str(error.value) == f"text_limit must be a whole number of at least 1, or None; got {limit!r}"


# --- %tools eval ---------------------------------------------------------------------------------


def test_tools_eval_magic_runs_the_cases_against_the_notebook_tools(ip):
    RAN.clear()
    ip.user_ns.update(e_weather=get_weather, e_add=add, e_model=ScriptedModel(ANSWERS), e_cases=CASES)
    report = ip.run_line_magic("tools", "eval e_cases --model-object e_model")
    assert isinstance(report, EvalReport)
    assert report.to_text() == TEXT
    assert RAN == []


def test_tools_eval_magic_only_some_tools(ip):
    ip.user_ns.update(e_weather=get_weather, e_add=add, e_model=ScriptedModel(["Hi."]))
    ip.user_ns["e_cases"] = [EvalCase("Hi", None)]
    report = ip.run_line_magic("tools", "eval e_cases --model-object e_model --tools add")
    assert_tools_offered(ip.user_ns["e_model"], ["add"], request=0)
    assert report.rows[0].passed


def test_tools_eval_magic_usage_errors(ip):
    ip.user_ns.update(e_add=add, e_model=ScriptedModel(), e_cases=[EvalCase("x", "mul")])
    with pytest.raises(UsageError) as error:
        ip.run_line_magic("tools", "eval e_missing --model-object e_model")
    assert (
        str(error.value)
        == "%tools eval: no variable named 'e_missing' in the notebook; assign a list of cases."
    )
    with pytest.raises(UsageError) as error:
        ip.run_line_magic("tools", "eval e_cases --model-object e_model")
    assert (
        str(error.value)
        == "%tools eval e_cases: Invalid eval cases:\n- case 1: no tool named 'mul' (tools: add)"
    )


def test_tools_eval_magic_text_limit(ip):
    long_answer = "Rain falls on the town. " * 40  # 960 characters
    ip.user_ns.update(e_add=add, e_cases=[EvalCase("Write a poem", None)])
    ip.user_ns["e_model"] = ScriptedModel([long_answer] * 3)
    rows = [
        ip.run_line_magic("tools", f"eval e_cases --model-object e_model {option}").rows[0].stopped_after
        for option in ("", "--text-limit 50", "--text-limit 0")
    ]
    assert rows == [301, 52, None]  # word-sized chunks: reading stops at the first past the limit
    with pytest.raises(UsageError) as error:
        ip.run_line_magic("tools", "eval e_cases --model-object e_model --text-limit -3")
    assert str(error.value) == (
        "%tools eval --text-limit: give a number of characters, or 0 to read whole answers; got -3"
    )


# --- concurrency ------------------------------------------------------------------------------------


class Gauge:
    """A FunctionModel's function that answers each case as ANSWERS does, slower for earlier
    cases (so they finish out of order), counting the requests in flight."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    async def __call__(self, messages, tools) -> str:
        number = [case.prompt if isinstance(case, EvalCase) else case["prompt"] for case in CASES].index(
            messages[-1]["content"]
        )
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.01 * (len(CASES) - number))
        self.in_flight -= 1
        return ANSWERS[number]


def test_cases_run_concurrently_up_to_the_limit_and_rows_keep_the_cases_order():
    gauge, seen = Gauge(), []
    report = evaluate(
        CASES,
        tools=TOOLS,
        model=FunctionModel(gauge),
        concurrency=3,
        on_row=lambda row, done, total: seen.append((row.prompt, done, total)),
    )
    prompts = [case.prompt if isinstance(case, EvalCase) else case["prompt"] for case in CASES]
    assert gauge.most == 3
    assert [row.prompt for row in report.rows] == prompts
    assert seen == [(prompt, number, 7) for number, prompt in enumerate(prompts, 1)]
    assert [row.passed for row in report.rows] == [True, False, True, True, False, False, False]
    assert report.concurrency == 3
    assert report.cases_per_second == 7 / report.seconds


def test_a_model_that_answers_one_request_at_a_time_gets_its_cases_in_turn():
    gauge = Gauge()
    model = FunctionModel(gauge)
    model.max_concurrency = 1
    report = evaluate(CASES, tools=TOOLS, model=model, concurrency=4)
    assert (gauge.most, report.concurrency) == (1, 1)
    # A ScriptedModel answers requests in the order they come, so it is asked in the cases' order.
    scripted = evaluate(CASES, tools=TOOLS, model=ScriptedModel(ANSWERS), concurrency=4)
    assert [row.passed for row in scripted.rows] == [True, False, True, True, False, False, False]
    assert scripted.concurrency == 1


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "4", None])
def test_concurrency_must_be_a_positive_whole_number(bad):
    with pytest.raises(ValueError) as caught:
        evaluate(CASES, tools=TOOLS, model=ScriptedModel(ANSWERS), concurrency=bad)
    assert str(caught.value) == f"concurrency must be a whole number of at least 1; got {bad!r}"


def test_a_failing_case_stops_the_eval_and_the_cases_still_running():
    from meowgent_nb.models import ModelError

    started, finished = [], []

    async def answer(messages, tools):
        prompt = messages[-1]["content"]
        started.append(prompt)
        if prompt == "Weather in Oslo, in Celsius":  # the second case, while the first and third run
            await asyncio.sleep(0.01)
            raise ModelError("the server went away")
        await asyncio.sleep(0.2)
        finished.append(prompt)
        return "No."

    with pytest.raises(ModelError) as caught:
        evaluate(CASES, tools=TOOLS, model=FunctionModel(answer), concurrency=3)
    assert str(caught.value) == "the server went away"
    # The three running were stopped, and no fourth case was started after the failure.
    assert (len(started), finished) == (3, [])


def test_the_html_report_gives_cases_per_second_and_the_text_no_timings():
    row = EvalRow("Hi", "", None, None, {}, True, "", 0.5)
    report = EvalReport([row, row, row], seconds=1.5, concurrency=4)
    assert report.cases_per_second == 2.0
    assert report.to_html().endswith(
        ' · <span style="font-weight: 600">2.00 cases/s</span> (3 in 1.50 s, 4 at a time)</div></div>'
    )
    assert "cases/s" not in report.to_text()
    assert "cases/s" not in EvalReport([row]).to_html()
    assert EvalReport([row], seconds=0.0).cases_per_second is None


def test_tools_eval_magic_runs_cases_concurrently_with_its_option(ip):
    gauge = Gauge()
    ip.user_ns.update(e_weather=get_weather, e_add=add, e_model=FunctionModel(gauge), e_cases=CASES)
    report = ip.run_line_magic("tools", "eval e_cases --model-object e_model --concurrency 3")
    assert (gauge.most, report.concurrency) == (3, 3)
    assert report.to_text() == TEXT  # the same rows, in the cases' order
    with pytest.raises(UsageError) as error:
        ip.run_line_magic("tools", "eval e_cases --model-object e_model --concurrency 0")
    assert str(error.value) == "%tools eval --concurrency: give a number of cases of at least 1; got 0"


# --- the embedded model, live: the notebook 6 course replays its cassette, this runs it ----------


@real_model
def test_a_live_eval_on_the_embedded_model_replays_from_its_cassette_row_for_row(tmp_path, monkeypatch):
    from meowgent_nb.models import LlamaCppModel
    from meowgent_nb.recording.cassette import cassette_model

    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)
    path = tmp_path / "eval.cassette.json"
    cases = [
        EvalCase("Is it warm in Madrid today?", "get_weather", {"city": "Madrid"}, "understanding"),
        EvalCase("Write a two-line poem about rain.", None, {}, "refusal"),
    ]

    def rows(report: EvalReport) -> list[tuple]:
        return [(r.prompt, r.chosen, r.arguments, r.passed, r.reason, r.stopped_after) for r in report.rows]

    def model(mode: str) -> Any:
        return cassette_model(str(path), mode, lambda: LlamaCppModel(n_ctx=1024, max_tokens=40), name="local")

    live = evaluate(cases, tools=[get_weather, add], model=model("record"), text_limit=20)
    replayed = evaluate(cases, tools=[get_weather, add], model=model("replay"), text_limit=20)
    assert (
        rows(live)
        == rows(replayed)
        == [
            (
                "Is it warm in Madrid today?",
                "get_weather",
                {"city": "Madrid", "unit": "celsius"},
                True,
                "",
                None,
            ),
            ("Write a two-line poem about rain.", None, {}, True, "", 22),
        ]
    )
