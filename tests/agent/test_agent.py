"""The agent loop on deterministic models: exact prompts, histories, events and failures."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Annotated

import pytest

from meowgent_nb import (
    Agent,
    Approved,
    AutoApprove,
    Denied,
    FunctionModel,
    ModelError,
    ScriptedModel,
    ToolCall,
    tool,
)
from meowgent_nb.agent.call_runner import RunSettings
from meowgent_nb.errors import SettingsError
from meowgent_nb.events import (
    ApprovalEvent,
    FinalAnswer,
    PartialCall,
    RunStart,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    ToolRunning,
    TurnEnd,
)
from meowgent_nb.models import ModelChunk, Usage
from meowgent_nb.protocols.prompt import LAST_TURN_NOTICE, REQUIRED_NOTICE, RESULTS_NOTICE, TOOL_RULES
from meowgent_nb.testing import assert_tools_offered
from tests.support.tool_calls import call


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(approval=True)
def delete_file(path: Annotated[str, "The file to delete"]) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def collect(agent: Agent, prompt: str) -> list:
    return [event async for event in agent.stream(prompt)]


def test_answer_without_tools_and_the_exact_request():
    model = ScriptedModel(["Hello there."])
    agent = Agent(model, tools=[add], system="Be brief.")
    events = asyncio.run(collect(agent, "Hi"))
    assert events[:4] == [
        RunStart("ScriptedModel", tools=1),  # offered add, answered without it
        TextDelta("Hello"),
        TextDelta(" there."),
        TurnEnd(1, Usage(completion_tokens=2), 0, "stop"),
    ]
    assert isinstance(events[4], FinalAnswer) and len(events) == 5
    result = events[4].result
    assert (result.text, result.turns, result.stopped, result.tool_results) == (
        "Hello there.",
        1,
        "answer",
        [],
    )
    (request,) = model.requests
    assert request.messages == [
        {
            "role": "system",
            "content": "Be brief.\n\n" + TOOL_RULES.replace("{tools}", f"<tools>\n{add.to_xml()}\n</tools>"),
        },
        {"role": "user", "content": "Hi"},
    ]
    assert request.tools == () and list(request.offered) == [add]
    assert agent.messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello there."},
    ]


def test_a_call_its_result_and_the_answer():
    model = ScriptedModel([f"Let me add.\n{call('add', a=2, b='3', newlines=True)}", "2 + 3 = 5."])
    agent = Agent(model, tools=[add])
    result = agent.run("What is 2 + 3?")
    assert result.text == "2 + 3 = 5."
    assert result.turns == 2
    (only,) = result.tool_results
    assert (only.call, only.output, only.kind, only.value) == (
        ToolCall("add", {"a": 2, "b": "3"}, id="call_1"),
        "5",
        "ok",
        5,
    )
    assert agent.messages == [
        {"role": "user", "content": "What is 2 + 3?"},
        {"role": "assistant", "content": f"Let me add.\n{call('add', a=2, b='3', newlines=True)}"},
        {"role": "user", "content": f'<tool_response name="add">\n5\n</tool_response>\n{RESULTS_NOTICE}'},
        {"role": "assistant", "content": "2 + 3 = 5."},
    ]
    # the system prompt is the same bytes on both turns
    assert model.requests[0].messages[0] == model.requests[1].messages[0]


def test_the_conversation_continues_and_resets():
    model = ScriptedModel(["One.", "Two."])
    agent = Agent(model)
    agent.run("first")
    agent.run("second")
    assert [m["content"] for m in model.requests[1].messages[1:]] == ["first", "One.", "second"]
    agent.reset()
    assert agent.messages == []


def test_calls_run_in_parallel_and_results_return_in_call_order():
    @tool
    def slow(label: str, seconds: float) -> str:
        """Sleep, then say the label."""
        time.sleep(seconds)
        return label

    model = ScriptedModel(
        [
            call("slow", label="A", seconds=0.4, newlines=True)
            + call("slow", label="B", seconds=0.05, newlines=True),
            "done",
        ]
    )
    agent = Agent(model, tools=[slow])
    events = asyncio.run(collect(agent, "go"))
    finished = [e.result.output for e in events if isinstance(e, ToolResultEvent)]
    assert finished == ["B", "A"]  # events as they happen
    assert agent.messages[2]["content"] == (
        '<tool_response name="slow">\nA\n</tool_response>\n<tool_response name="slow">\nB\n</tool_response>\n'
        + RESULTS_NOTICE
    )
    assert events[-1].result.tool_results[0].output == "A"


def test_every_failure_becomes_a_result_and_siblings_still_run():
    @tool
    def broken(x: int) -> int:
        """Always fails."""
        raise ZeroDivisionError("division by zero")

    @tool(timeout=0.2)
    def hangs() -> str:
        """Takes too long."""
        time.sleep(1.5)
        return "late"

    answer = (
        call("addd", a=1, b=2, newlines=True)
        + call("add", a="x", b=2, newlines=True)
        + call("broken", x=1, newlines=True)
        + call("hangs", newlines=True)
        + "<tool_call>{not json at all</tool_call>"
        + call("add", a=1, b=1, newlines=True)
    )
    model = ScriptedModel([answer, "I tried."])
    result = Agent(model, tools=[add, broken, hangs]).run("try everything")
    kinds = [(r.call.name, r.kind) for r in result.tool_results]
    assert kinds == [
        ("addd", "unknown_tool"),
        ("add", "invalid_arguments"),
        ("broken", "error"),
        ("hangs", "timeout"),
        ("(unreadable)", "parse_error"),
        ("add", "ok"),
    ]
    outputs = [r.output for r in result.tool_results]
    assert (
        outputs[0]
        == "Error: there is no tool named 'addd'. Did you mean 'add'? The tools are: add, broken, hangs."
    )
    assert outputs[1] == (
        "Error: Invalid arguments for tool 'add':\n"
        '- a: input should be a valid integer, unable to parse string as an integer, got "x"\n'
        "Call add again with corrected arguments."
    )
    assert outputs[2] == "Error: ZeroDivisionError: division by zero"
    assert isinstance(result.tool_results[2].exception, ZeroDivisionError)
    assert outputs[3] == "Timed out after 0.2 s"
    assert outputs[4].startswith("Error: could not read a tool call: ")
    assert outputs[4].endswith("\nThe text was: {not json at all")
    assert outputs[5] == "2"
    assert result.text == "I tried."


def test_approval_needed_without_an_approver_is_denied():
    model = ScriptedModel([call("delete_file", path="a.txt", newlines=True), "Not deleted."])
    events = asyncio.run(collect(Agent(model, tools=[delete_file]), "delete a.txt"))
    approvals = [e for e in events if isinstance(e, ApprovalEvent)]
    assert approvals == [
        ApprovalEvent(
            ToolCall("delete_file", {"path": "a.txt"}, id="call_1"),
            Denied(
                "this tool needs a person's approval and no approver was given"
                " (pass approver=AutoApprove() to run it without asking)."
            ),
        )
    ]
    (result,) = events[-1].result.tool_results
    assert result.kind == "denied"
    assert result.output.startswith("Denied: this tool needs a person's approval")


def test_the_approver_gets_one_batch_of_validated_calls():
    seen = []

    class Recorder:
        async def approve(self, requests):
            seen.append([(r.call.name, dict(r.arguments)) for r in requests])
            return [Approved("fine"), Denied("not that one")]

    model = ScriptedModel(
        [
            call("delete_file", path="a", newlines=True)
            + call("add", a=1, b=1, newlines=True)
            + call("delete_file", path="b", newlines=True),
            "ok",
        ]
    )
    result = Agent(model, tools=[add, delete_file], approver=Recorder()).run("clean up")
    assert seen == [[("delete_file", {"path": "a"}), ("delete_file", {"path": "b"})]]
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("ok", "deleted a"),
        ("ok", "2"),
        ("denied", "Denied: not that one"),
    ]


def test_ask_every_tool_and_auto_approve():
    seen = []

    class Recorder(AutoApprove):
        async def approve(self, requests):
            seen.extend(r.call.name for r in requests)
            return await super().approve(requests)

    model = ScriptedModel([call("add", a=1, b=2, newlines=True), "3"])
    Agent(model, tools=[add], approver=Recorder(), approve="every").run("add")
    assert seen == ["add"]


def test_the_last_turn_offers_no_tools_and_calls_made_anyway_do_not_run():
    model = ScriptedModel([call("add", a=1, b=1, newlines=True), call("add", a=2, b=2, newlines=True)])
    result = Agent(model, tools=[add], max_turns=2).run("loop")
    assert result.stopped == "max_turns"
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("ok", "2"),
        ("denied", "Not run: the limit of 2 turns was reached; answer without tools."),
    ]
    last = model.requests[1]
    assert last.messages[-1] == {"role": "user", "content": LAST_TURN_NOTICE}
    assert last.offered == () and last.tools == ()
    assert last.messages[0] == model.requests[0].messages[0]


def test_tool_choice_none_named_and_required():
    none = ScriptedModel(["plain"])
    Agent(none, tools=[add], tool_choice="none", system="S.").run("x")
    assert none.requests[0].messages[0] == {"role": "system", "content": "S."}

    named = ScriptedModel(["plain"])
    Agent(named, tools=[add, delete_file], tool_choice="delete_file").run("x")
    assert_tools_offered(named, ["delete_file"], request=0)

    required = ScriptedModel(["I will not.", call("add", a=1, b=2, newlines=True), "3"])
    result = Agent(required, tools=[add], tool_choice="required").run("x")
    assert required.requests[1].messages[-1] == {"role": "user", "content": REQUIRED_NOTICE}
    assert (result.text, result.turns) == ("3", 3)
    assert result.usage == Usage(completion_tokens=3 + 9 + 1)  # the scripted model counts its chunks

    with pytest.raises(ValueError) as caught:
        Agent(none, tools=[add], tool_choice="nope", protocol="yaml", max_turns=0)
    assert str(caught.value) == (
        "Invalid Agent settings:\n"
        "- protocol must be 'xml', 'native', 'json', 'list' or 'decide', got 'yaml'\n"
        "- max_turns must be a whole number of at least 1, got 0\n"
        "- tool_choice must be 'auto', 'none', 'required' or a tool name (add), got 'nope'"
    )


def test_native_protocol_messages():
    model = ScriptedModel(
        [
            [ModelChunk(tool_calls=(ToolCall("add", {"a": 4, "b": 5}),)), ModelChunk(done=True)],
            "9",
        ]
    )
    agent = Agent(model, tools=[add], protocol="native")
    result = agent.run("4+5")
    assert result.text == "9"
    assert list(model.requests[0].tools) == [add]
    assert model.requests[0].messages[0] == {"role": "system", "content": "You are a helpful assistant."}
    assert agent.messages == [
        {"role": "user", "content": "4+5"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "add", "arguments": {"a": 4, "b": 5}}}],
        },
        {"role": "tool", "content": "9", "tool_name": "add"},
        {"role": "assistant", "content": "9"},
    ]


def test_async_tools_run_on_their_own_loop_and_context_is_copied():
    request_id = contextvars.ContextVar("request_id", default="unset")

    @tool
    async def whoami() -> str:
        """Report the context."""
        await asyncio.sleep(0)
        return f"{request_id.get()} on {threading.current_thread().name.split('_')[0]}"

    async def main():
        request_id.set("r-42")
        return await Agent(ScriptedModel([call("whoami", newlines=True), "ok"]), tools=[whoami]).arun("who")

    result = asyncio.run(main())
    assert result.tool_results[0].output == "r-42 on meowgent-tool"


def test_run_works_inside_a_running_event_loop():
    async def main():
        return Agent(ScriptedModel(["fine"])).run("x").text

    assert asyncio.run(main()) == "fine"


def test_a_model_error_keeps_the_history_and_the_next_run_works():
    model = ScriptedModel([])
    agent = Agent(model)
    with pytest.raises(ModelError):
        agent.run("first")
    assert agent.messages == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "\n[this answer was cut off: ModelError]"},
    ]
    model.enqueue("second answer")
    assert agent.run("again").text == "second answer"


def test_an_interrupt_mid_stream_records_what_was_said():
    agent = Agent(FunctionModel(lambda messages, tools: ["partial ", "answer"]))

    async def interrupted():
        async for event in agent.stream("go"):
            if isinstance(event, TextDelta):
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(interrupted())
    assert agent.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "partial \n[this answer was cut off: interrupted]"},
    ]


def test_output_becomes_text_and_is_cut():
    class Report:
        def _repr_llm_(self):
            return "a report for models"

    @tool
    def data(kind: str):
        """Return data."""
        return {"dict": {"a": [1, 2]}, "long": "a" * 30 + "z" * 20, "llm": Report(), "none": None}[kind]

    model = ScriptedModel(
        [
            call("data", kind="dict", newlines=True)
            + call("data", kind="long", newlines=True)
            + call("data", kind="llm", newlines=True)
            + call("data", kind="none", newlines=True),
            "ok",
        ]
    )
    result = Agent(model, tools=[data], max_output_chars=21).run("x")
    assert [r.output for r in result.tool_results] == [
        '{"a": [1, 2]}',
        "a" * 14 + "\n[... cut 29 of 50 characters ...]\n" + "z" * 7,  # the start and the end
        "a report for models",
        "null",
    ]


def test_tool_call_events_come_before_results():
    model = ScriptedModel([call("add", a=1, b=2, newlines=True), "3"])
    events = asyncio.run(collect(Agent(model, tools=[add]), "x"))
    # PartialCall events show the call while it is written (tests/protocols/test_partial_calls.py).
    events = [e for e in events if not isinstance(e, (TextDelta, PartialCall))]
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "RunStart",
        "ToolCallEvent",
        "ToolRunning",
        "ToolResultEvent",
        "TurnEnd",
        "TurnEnd",
        "FinalAnswer",
    ]
    assert events[1] == ToolCallEvent(ToolCall("add", {"a": 1, "b": 2}, id="call_1"), 1)
    # what runs, and in what time limit (the agent's default: the tool sets none)
    assert events[2] == ToolRunning(ToolCall("add", {"a": 1, "b": 2}, id="call_1"), {"a": 1, "b": 2}, 30.0)


def test_dataframe_output_is_the_view_a_notebook_variable_gets():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(
        {"city": ["Paris", "Oslo", "Rome", "Bern", "Lima", "Kiev"], "temp": [21, 9, 25, 14, 19, 7]}
    )

    @tool
    def cities() -> object:
        """All cities."""
        return frame

    result = Agent(ScriptedModel([call("cities", newlines=True), "ok"]), tools=[cities]).run("x")
    assert result.tool_results[0].output == (
        "pandas DataFrame: 6 rows × 2 columns\n"
        "columns (dtype, nulls):\n"
        f"  city  {frame['city'].dtype}  0 nulls\n"
        "  temp  int64  0 nulls\n"
        "all 6 rows:\n"
        "    city  temp\n"
        "0  Paris    21\n"
        "1   Oslo     9\n"
        "2   Rome    25\n"
        "3   Bern    14\n"
        "4   Lima    19\n"
        "5   Kiev     7"
    )


def test_an_identical_successful_call_is_not_run_again_in_one_run():
    runs = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: 17.5"

    model = ScriptedModel(
        [
            call("lookup", city="Paris", newlines=True),
            call("lookup", city="Paris", newlines=True) + call("lookup", city="Oslo", newlines=True),
            "ok",
        ]
    )
    result = Agent(model, tools=[lookup]).run("x")
    assert runs == ["Paris", "Oslo"]
    assert [(r.kind, r.output) for r in result.tool_results] == [
        ("ok", "Paris: 17.5"),
        (
            "denied",
            "Not run again: lookup was already called with these arguments, and its result was:\n"
            "Paris: 17.5\nUse that result to answer, or call a different tool.",
        ),
        ("ok", "Oslo: 17.5"),
    ]
    runs.clear()
    model = ScriptedModel(
        [call("lookup", city="Paris", newlines=True), call("lookup", city="Paris", newlines=True), "ok"]
    )
    Agent(model, tools=[lookup], repeat_calls=True).run("x")
    assert runs == ["Paris", "Paris"]


def test_calls_that_wait_for_approval_are_announced_before_the_approver_is_asked():
    from meowgent_nb.events import ApprovalRequested
    from meowgent_nb.notebook.views.transcript import Transcript

    transcript = Transcript()
    seen_while_asked = []

    class Watcher:
        async def approve(self, requests):
            seen_while_asked.append(transcript.to_text())
            return [Approved()]

    model = ScriptedModel(
        [call("delete_file", path="a", newlines=True) + call("add", a=1, b=1, newlines=True), "ok"]
    )
    events = []

    async def main():
        async for event in Agent(model, tools=[add, delete_file], approver=Watcher()).stream("x"):
            transcript.handle(event)
            if not isinstance(event, (RunStart, TextDelta, PartialCall)):
                events.append(event)

    asyncio.run(main())
    kinds = [type(e).__name__ for e in events]
    assert kinds[:4] == ["ToolCallEvent", "ToolCallEvent", "ApprovalRequested", "ApprovalEvent"]
    assert events[2] == ApprovalRequested((ToolCall("delete_file", {"path": "a"}, id="call_1"),))
    assert seen_while_asked == [
        "[tool] delete_file(path='a') -> waiting for approval\n[tool] add(a=1, b=1) -> running"
    ]


def test_a_name_written_as_the_person_typed_it_calls_the_one_offered_tool_it_means():
    @tool
    def number_theory_gcd(a: int, b: int) -> int:
        """Greatest common divisor."""
        return 15

    @tool
    def get_weather(city: str) -> str:
        """The weather."""
        return "sunny"

    @tool
    def get__weather(city: str) -> str:
        """The weather, too."""
        return "rainy"

    answer = (
        call("number_theory.gcd", a=45, b=60, newlines=True)  # one offered tool folds to it: that tool runs
        + call("Number-Theory GCD", a=45, b=60, newlines=True)  # the same tool again
        + call("get.weather", city="Paris", newlines=True)  # offered tools differ only by case and separators
        + call("gcd", a=1, b=2, newlines=True)  # no offered tool folds to it
    )
    model = ScriptedModel([answer, "Done."])
    agent = Agent(model, tools=[number_theory_gcd, get_weather], repeat_calls=True)
    result = agent.run("gcd of 45 and 60, and the weather")
    assert [(r.call.name, r.kind, r.output) for r in result.tool_results] == [
        ("number_theory_gcd", "ok", "15"),
        ("number_theory_gcd", "ok", "15"),
        ("get_weather", "ok", "sunny"),
        (
            "gcd",
            "unknown_tool",
            "Error: there is no tool named 'gcd'. The tools are: number_theory_gcd, get_weather.",
        ),
    ]
    # Two offered tools share the folded form: the written name stays, and it is unknown.
    model = ScriptedModel([call("GET_WEATHER", city="Paris", newlines=True), "Done."])
    result = Agent(model, tools=[get_weather, get__weather]).run("weather")
    assert [(r.call.name, r.kind) for r in result.tool_results] == [("GET_WEATHER", "unknown_tool")]


def test_settings_after_the_model_are_keyword_only_and_the_old_spellings_warn_naming_the_new():
    model = ScriptedModel([])
    with pytest.warns(DeprecationWarning) as caught:
        agent = Agent(model, [add], None, "xml", 3)
    assert str(caught[0].message) == (
        "Agent's settings after the model are keyword-only: write Agent(model, tools=..., approver=...,"
        " protocol=..., max_turns=...); passing them by position is deprecated."
    )
    assert caught[0].filename == __file__  # the warning points at the caller
    assert ([t.name for t in agent.tools], agent.max_turns, agent.settings.max_turns) == (["add"], 3, 3)

    with pytest.warns(DeprecationWarning) as caught:
        agent = Agent(model, tools=[add], ask="marked")
    assert str(caught[0].message) == "Agent(ask='marked') is deprecated: write Agent(approve='ask')."
    assert agent.approve == agent.settings.approve == "ask"
    with pytest.warns(DeprecationWarning, match=r"write Agent\(approve='every'\)"):
        assert Agent(model, tools=[add], ask="every").approve == "every"
    with pytest.warns(DeprecationWarning, match=r"Agent\(approve='marked'\) is deprecated"):
        assert Agent(model, tools=[add], approve="marked").approve == "ask"

    with pytest.raises(TypeError, match="multiple values for argument 'tools'"):
        Agent(model, [add], tools=[add])
    with pytest.raises(SettingsError) as error:
        Agent(model, tools=[add], approve="allow")
    assert str(error.value) == "Invalid Agent settings:\n- approve must be 'ask' or 'every', got 'allow'"


def test_the_settings_are_one_value_the_loop_and_its_call_runner_share():
    agent = Agent(ScriptedModel([]), tools=[add], max_turns=2, tool_timeout=None)
    agent.max_workers = 3  # an attribute reads and sets the agent's RunSettings
    assert agent.settings == RunSettings(max_turns=2, tool_timeout=None, max_workers=3)


def test_the_removed_tool_search_warns_and_every_tool_is_described():
    described = Agent(ScriptedModel([]), tools=[add]).system_prompt()
    for given in ({"tool_search": True}, {"tool_search": False}, {"always_show": [add]}):
        with pytest.warns(
            UserWarning, match=r"^Agent: tool_search and always_show were removed and are ignored"
        ) as caught:
            agent = Agent(ScriptedModel([]), tools=[add], **given)
        assert caught[0].filename == __file__  # the warning points at the caller
        assert agent.system_prompt() == described
