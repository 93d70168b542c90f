"""A server's form: the restricted schema read into fields, hostile schemas refused with every
problem named, entries parsed and answers checked exactly; and `ServerAsks` declining or refusing
where no one can answer, never sending content that does not fit the form."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from meowgent_nb.agent.running_call import RunningCall
from meowgent_nb.mcp.client.asking import ElicitAnswer, ServerAsks
from meowgent_nb.mcp.content.elicit import (
    MESSAGE_SHOWN,
    ElicitSchemaError,
    check_content,
    form_from_schema,
    parse_entry,
)
from meowgent_nb.tools.calls import ToolCall

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 5},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "maximum": 1.5},
        "email": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
            "default": "free",
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "age", "size"],
}


def test_a_flat_schema_becomes_one_field_per_property_in_order():
    form = form_from_schema("Who?", SCHEMA)
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("name", "string", True),
        ("age", "integer", True),
        ("score", "number", False),
        ("email", "string", False),
        ("day", "string", False),
        ("ok", "boolean", False),
        ("size", "choice", True),
        ("plan", "choice", False),
        ("tags", "choices", False),
    ]
    name, age, score, *_, size, plan, tags = form.fields
    assert (name.title, name.hint) == ("Your name", "text, 2 to 5 characters")
    assert (age.title, age.hint, score.hint) == (
        "age",
        "a whole number from 0 to 150",
        "a number, at most 1.5",
    )
    assert size.options == (("s", "Small"), ("m", "Medium"))
    assert (plan.options, plan.default) == ((("free", "Free"), ("pro", "Pro")), "free")
    assert (tags.options, tags.max_length, tags.hint) == (
        (("a", "a"), ("b", "b"), ("c", "c")),
        2,
        "pick at most 2",
    )
    assert form.defaults() == {"ok": True, "plan": "free"}


@pytest.mark.parametrize(
    ("schema", "problems"),
    [
        (
            {
                "type": "object",
                "properties": {"who": {"type": "object", "properties": {"a": {"type": "string"}}}},
            },
            [
                "field 'who': it is a nested object; a form's fields must be flat (text, numbers, yes/no, choices)"
            ],
        ),
        (
            {"type": "object", "properties": {"f": {"type": "file"}, "g": {}}},
            [
                "field 'f': it has the type 'file'; a form field is a string, number, integer, boolean or choice",
                "field 'g': it has no type; a form field is a string, number, integer, boolean or choice",
            ],
        ),
        (
            {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "integer"}}}},
            ["field 'l': a list field must be a multiple choice of strings"],
        ),
        (
            {"type": "object", "properties": {"s": {"type": "string", "format": "credit-card"}}},
            ["field 's': the format 'credit-card' is not one of email, uri, date, date-time"],
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "default": "ten", "minimum": True}}},
            [
                "field 'n': minimum must be a number, not True",
                "field 'n': its default 'ten' does not fit: expected a whole number, got 'ten'",
            ],
        ),
        (
            {
                "type": "object",
                "properties": {"c": {"type": "string", "enum": ["a", "a"]}},
                "required": ["c", "z"],
            },
            ["it requires fields it does not have: 'z'", "field 'c': a choice is offered twice"],
        ),
        (
            {"type": "object", "properties": {"r": {"$ref": "#/defs/x"}}},
            [
                "field 'r': it is a nested object; a form's fields must be flat (text, numbers, yes/no, choices)"
            ],
        ),
        ({"type": "string"}, ["the requested schema is not an object schema"]),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(51)}},
            ["it has 51 fields (at most 50)"],
        ),
        (
            {"type": "object", "properties": {"e": {"type": "string", "enum": [str(i) for i in range(501)]}}},
            ["field 'e': it offers 501 choices (at most 500)"],
        ),
    ],
)
def test_a_schema_that_is_not_flat_or_has_unknown_types_is_refused_naming_every_problem(schema, problems):
    with pytest.raises(ElicitSchemaError) as caught:
        form_from_schema("Hi", schema)
    assert list(caught.value.problems) == problems
    assert str(caught.value) == "the server's form cannot be shown: " + "; ".join(problems)


def test_a_huge_message_is_kept_whole_but_shown_cut_saying_how_much_is_left_out():
    form = form_from_schema("x" * 1_000_000, {"type": "object", "properties": {}})
    assert len(form.message) == 1_000_000
    assert (
        form.shown_message
        == "x" * MESSAGE_SHOWN
        + f"\n[... the server's message goes on for {1_000_000 - MESSAGE_SHOWN:,} more characters]"
    )


def test_titles_are_cut_and_kept_as_text_for_the_widgets_to_escape():
    schema = {"type": "object", "properties": {"a": {"type": "string", "title": "<b>" + "t" * 5000}}}
    (field,) = form_from_schema("m", schema).fields
    assert field.title == ("<b>" + "t" * 5000)[:2000]


@pytest.mark.parametrize(
    ("name", "entry", "value"),
    [
        ("age", " 36 ", 36),
        ("score", "1.25", 1.25),
        ("score", "1", 1),
        ("score", "", None),
        ("email", "a@b.org", "a@b.org"),
        ("day", "2026-12-01", "2026-12-01"),
        ("ok", False, False),
        ("size", "m", "m"),
        ("plan", None, None),
        ("tags", ("a", "c"), ["a", "c"]),
        ("tags", (), None),
    ],
)
def test_entries_become_the_values_sent(name, entry, value):
    field = next(f for f in form_from_schema("m", SCHEMA).fields if f.name == name)
    assert parse_entry(field, entry) == value


@pytest.mark.parametrize(
    ("name", "entry", "problem"),
    [
        ("name", "", "required: enter text, 2 to 5 characters"),
        ("name", "A", "too short: 1 characters, at least 2"),
        ("name", "Ada Lovelace", "too long: 12 characters, at most 5"),
        ("age", "thirty", "'thirty' is not a whole number"),
        ("age", "3.5", "'3.5' is not a whole number"),
        ("age", "151", "151 is above the most allowed, 150"),
        ("age", "-1", "-1 is below the least allowed, 0"),
        ("score", "nan", "expected a number, got nan"),
        ("score", "2", "2 is above the most allowed, 1.5"),
        ("email", "ada at home", "not an email address (name@example.org)"),
        ("day", "1st of May", "not a date (2026-12-01)"),
        ("size", None, "required: pick one"),
        ("size", "xl", "'xl' is not one of the choices"),
        ("tags", ("a", "b", "c"), "pick at most 2 (picked 3)"),
        ("tags", ("a", "z"), "pick from the choices given"),
    ],
)
def test_a_bad_entry_says_what_the_field_takes(name, entry, problem):
    field = next(f for f in form_from_schema("m", SCHEMA).fields if f.name == name)
    with pytest.raises(ValueError) as caught:
        parse_entry(field, entry)
    assert str(caught.value) == problem


def test_an_answer_is_checked_whole_before_it_goes_back():
    form = form_from_schema("m", SCHEMA)
    assert check_content(form, {"name": "Ada", "age": 36, "size": "s"}) == []
    assert check_content(form, {"name": "Ada", "age": True, "size": "s", "extra": 1, "ok": "yes"}) == [
        "'extra' is not a field of the form",
        "age: expected a whole number, got True",
        "ok: expected yes or no (true / false), got 'yes'",
    ]
    assert check_content(form, {"age": 3}) == ["name: required", "size: required"]
    assert check_content(form, ["Ada"]) == ["the answer is not an object of field values"]


# --- ServerAsks: who is asked, and what goes back ---------------------------------------------------------


class Asker:
    """An approver that can ask: answers with what it is given, and records what it was told."""

    def __init__(self, answer: ElicitAnswer | None = None, review: tuple[bool, str] = (True, "by you")):
        self.answer, self.review, self.told, self.asked = answer, review, [], []

    async def elicit(self, request):
        self.asked.append(request)
        return self.answer

    async def review_sampling(self, review):
        self.asked.append(review)
        return self.review

    def tell(self, running, text):
        self.told.append(text)


def params(schema=None, message="Who?", mode="form"):
    return SimpleNamespace(
        mode=mode,
        message=message,
        requested_schema=schema
        or {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )


async def in_a_call(asks: ServerAsks, approver, job, model=None):
    """Run ``job`` (a coroutine function) as if the server asked during an agent's call."""
    from meowgent_nb.agent.running_call import RUNNING_CALL

    loop = asyncio.get_running_loop()
    RUNNING_CALL.set(RunningCall(ToolCall("srv_tool", {}), loop, 30.0, approver, model))
    done = loop.create_future()

    def on_thread():  # the tool's thread: the flight is made there, the question answered on the MCP loop
        with asks.flight():
            inner = asyncio.new_event_loop()
            try:
                done_value = inner.run_until_complete(job())
            finally:
                inner.close()
            loop.call_soon_threadsafe(done.set_result, done_value)

    import contextvars
    import threading

    threading.Thread(target=contextvars.copy_context().run, args=(on_thread,)).start()  # as ToolThreads does
    return await done


def test_accepted_content_that_does_not_fit_the_form_is_declined_not_sent():
    asks = ServerAsks("srv")
    asker = Asker(ElicitAnswer("accept", {"name": 5}))
    result = asyncio.run(in_a_call(asks, asker, lambda: asks.elicit(None, params())))
    assert (result.action, result.content) == ("decline", None)
    assert (
        asks.history[-1].outcome == "decline: the answer does not fit the form: name: expected text, got int"
    )


def test_accepted_content_fits_and_empty_optional_values_are_left_out():
    asks = ServerAsks("srv")
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "note": {"type": "string"}}}
    asker = Asker(ElicitAnswer("accept", {"name": "Ada", "note": None}, "by you"))
    result = asyncio.run(in_a_call(asks, asker, lambda: asks.elicit(None, params(schema))))
    assert (result.action, result.content) == ("accept", {"name": "Ada"})
    assert asks.history[-1].outcome == "accept: by you"


def test_a_hostile_schema_is_an_error_for_the_server_and_a_line_in_the_card():
    asks = ServerAsks("srv")
    asker = Asker()
    schema = {"type": "object", "properties": {"who": {"type": "object"}}}
    result = asyncio.run(in_a_call(asks, asker, lambda: asks.elicit(None, params(schema))))
    problem = "the server's form cannot be shown: field 'who': it is a nested object; a form's fields must be flat (text, numbers, yes/no, choices)"
    assert (result.code, result.message) == (-32602, problem)
    assert asker.told == [f"srv asked for input, but {problem}"] and asker.asked == []


def test_a_url_elicitation_and_an_approver_that_cannot_ask_are_declined_saying_why():
    asks = ServerAsks("srv")
    result = asyncio.run(in_a_call(asks, Asker(), lambda: asks.elicit(None, params(mode="url"))))
    assert result.action == "decline"
    assert asks.history[-1].outcome == "decline: a URL elicitation cannot be followed from the notebook"
    from meowgent_nb import AutoApprove

    result = asyncio.run(in_a_call(asks, AutoApprove(), lambda: asks.elicit(None, params())))
    assert result.action == "decline"
    assert asks.history[-1].outcome == "decline: the agent's approver (AutoApprove()) cannot ask a person"


def test_a_question_outside_any_call_is_declined():
    asks = ServerAsks("srv")
    result = asyncio.run(asks.elicit(None, params()))
    assert result.action == "decline"
    assert (
        asks.history[-1].outcome == "decline: no call of the server 'srv' is running, so no one can be asked"
    )


def test_sampling_denied_by_setting_or_by_the_person_never_reaches_the_model():
    from meowgent_nb import ScriptedModel

    model = ScriptedModel(["never"])
    message = SimpleNamespace(role="user", content=SimpleNamespace(type="text", text="Hi"))
    request = SimpleNamespace(messages=[message], system_prompt=None, max_tokens=5, temperature=None)
    for setting, asker, reason in (
        ("deny", Asker(), "sampling='deny' for 'srv'"),
        ("ask", Asker(review=(False, "by you")), "by you"),
    ):
        asks = ServerAsks("srv", sampling=setting)
        result = asyncio.run(in_a_call(asks, asker, lambda: asks.sample(None, request), model))  # noqa: B023 - called within this iteration
        assert (result.code, result.message) == (-1, f"the sampling request was refused: {reason}")
    assert model.requests == []


def test_the_sampling_setting_must_be_one_of_three():
    with pytest.raises(ValueError) as caught:
        ServerAsks("srv", sampling="always")
    assert str(caught.value) == "McpToolbox 'srv': sampling must be 'ask', 'allow' or 'deny', got 'always'"


def test_the_form_widget_shows_problems_next_to_fields_and_sends_only_a_valid_answer():
    from meowgent_nb.mcp.client.asking import ElicitRequest
    from meowgent_nb.notebook.mcp._elicit_form import ElicitFormView

    form = form_from_schema("<script>alert(1)</script>", SCHEMA)
    running = SimpleNamespace(call=ToolCall("srv_<i>tool</i>", {}))
    answers = []
    view = ElicitFormView(ElicitRequest("<b>srv</b>", form, running), lambda f, *a: f(*a), answers.append)
    header = view.view.children[0].value
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt;" in header
        and "&lt;b&gt;srv&lt;/b&gt;" in header
        and "<script>" not in header
    )
    entries = dict(zip([f.name for f in form.fields], range(len(form.fields))))
    view.entries[entries["name"]].value = "Ada"
    view.entries[entries["age"]].value = "200"
    view._choose("accept")
    assert answers == []
    assert view.notes[entries["age"]].value == (
        '<span class="meowgent-field-problem" style="color: #c62828">200 is above the most allowed, 150</span>'
    )
    assert "nothing was sent: fix the 2 fields marked" in view.status.value  # age, and size (required)
    view.entries[entries["age"]].value = "36"
    view.entries[entries["size"]].value = "m"
    view._choose("accept")
    assert answers == [
        ElicitAnswer("accept", {"name": "Ada", "age": 36, "ok": True, "size": "m", "plan": "free"}, "by you")
    ]
    view.finish("accepted")
    assert all(entry.disabled for entry in view.entries)


# --- odd values in a schema: a refusal, never a crash ------------------------------------------------------

HUGE = 10**400
BEYOND = "1000000000...00000 (401 digits) is beyond the numbers a form holds (finite, within ±1.8e308)"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"type": "number", "minimum": HUGE}, f"minimum {BEYOND}"),
        ({"type": "integer", "maximum": -HUGE}, "maximum -100000000...00000 (401 digits)" + BEYOND[31:]),
        ({"type": "string", "minLength": HUGE}, f"minLength {BEYOND}"),
        (
            {"type": "array", "items": {"type": "string", "enum": ["a"]}, "maxItems": HUGE},
            f"maxItems {BEYOND}",
        ),
        (
            {"type": "number", "maximum": float("nan")},
            "maximum nan is beyond the numbers a form holds (finite, within ±1.8e308)",
        ),
        (
            {"type": "number", "minimum": float("-inf")},
            "minimum -inf is beyond the numbers a form holds (finite, within ±1.8e308)",
        ),
        (
            {"type": "number", "default": HUGE},
            "its default 1000000000...00000 (401 digits) does not fit: expected a number, got 1000000000...00000 (401 digits)",
        ),
        (
            {"type": "number", "default": float("inf")},
            "its default inf does not fit: expected a number, got inf",
        ),
        (
            {"type": "string", "default": HUGE},
            "its default 1000000000...00000 (401 digits) does not fit: expected text, got int",
        ),
        ({"type": "string", "enum": ["a", HUGE]}, "its enum must be a list of strings"),
        (
            {"type": "string", "enum": ["a"], "default": {"a": [1, 2, 3, 4, 5, 6, 7]}},
            "its default {'a': [1, 2, 3, 4, 5, ...]} does not fit: {'a': [1, 2, 3, 4, 5, ...]} is not one of the choices",
        ),
        (
            {"type": "string", "enum": [str(i) for i in range(1_000_000)]},
            "it offers 1,000,000 choices (at most 500)",
        ),
        ({"type": "string", "oneOf": [HUGE] * 501}, "it offers 501 choices (at most 500)"),
        ({"type": "string", "enum": ["x" * 2001]}, "a choice is longer than 2,000 characters"),
        (
            {"type": {"nested": [HUGE]}},
            "it has the type {'nested': [1000000000...00000 (401 digits)]}; a form field is a string, number, integer, boolean or choice",
        ),
        (
            {"type": "string", "format": ["x" * 10_000]},
            f"the format ['{'x' * 37}...{'x' * 38}'] is not one of email, uri, date, date-time",
        ),
        ({"type": "number", "minimum": "1e400"}, "minimum must be a number, not '1e400'"),
        ({"type": "integer", "minimum": True}, "minimum must be a number, not True"),
    ],
)
def test_an_odd_value_in_a_schema_is_a_refusal_naming_it(spec, problem):
    with pytest.raises(ElicitSchemaError) as caught:
        form_from_schema("m", {"type": "object", "properties": {"n": spec}})
    assert str(caught.value) == f"the server's form cannot be shown: field 'n': {problem}"


def test_a_schema_nested_past_python_s_reach_or_with_a_million_required_names_is_refused():
    deep: dict = {}
    for _ in range(100_000):
        deep = {"type": "string", "default": deep}
    with pytest.raises(ElicitSchemaError) as caught:
        form_from_schema("m", {"type": "object", "properties": {"n": deep}})
    assert str(caught.value) == (
        "the server's form cannot be shown: a value in it cannot be read"
        " (RecursionError: 'maximum recursion depth exceeded while encoding a JSON object')"
    )
    with pytest.raises(ElicitSchemaError) as caught:
        form_from_schema("m", {"type": "object", "properties": {}, "required": ["a"] * 1_000_000})
    assert str(caught.value) == "the server's form cannot be shown: it has 1,000,000 fields (at most 50)"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"type": "string", "title": "Name \ud800"}}},
        {"type": "object", "properties": {"n": {"type": "string", "enum": ["a", "\ud800"]}}},
        {"type": "object", "properties": {"\ud800": {"type": "string"}}},
    ],
)
def test_half_a_surrogate_pair_anywhere_in_a_schema_is_refused(schema):
    # Python reads JSON's "\ud800" into a string no answer, card or comm message can hold.
    with pytest.raises(ElicitSchemaError) as caught:
        form_from_schema("m", schema)
    assert str(caught.value) == (
        "the server's form cannot be shown: in the request, '\\ud800' is half of a UTF-16 surrogate pair, which is not text"
    )


class Declines:
    """A person who would decline every form, and hears what they are told."""

    def __init__(self):
        self.told, self.asked = [], []

    async def elicit(self, request):  # pragma: no cover - an odd form never reaches a person
        self.asked.append(request)
        return ElicitAnswer("decline")

    async def review_sampling(self, review):  # pragma: no cover - not asked here
        return False, "not asked"

    def tell(self, running, text):
        self.told.append(text)


def test_a_real_server_s_odd_form_is_refused_back_to_it_and_told_to_the_person_in_one_line():
    import json
    import sys
    from pathlib import Path

    from meowgent_nb import Agent, ScriptedModel
    from meowgent_nb.mcp import McpToolbox

    asking = str(Path(__file__).parents[1] / "mcp_servers" / "asking_server.py")
    problems = {
        "huge maximum": f"field 'n': maximum {BEYOND}",
        "huge default": "field 'n': its default 1000000000...00000 (401 digits) does not fit: expected a whole number, got 1000000000...00000 (401 digits)",
        "huge minLength": "field 'n': minLength -100000000...00000 (401 digits)" + BEYOND[31:],
        "enormous enum": "field 'n': it offers 100,000 choices (at most 500)",
    }
    calls = "".join(
        "<tool_call>" + json.dumps({"name": "asking_ask_odd", "arguments": {"kind": kind}}) + "</tool_call>"
        for kind in problems
    )
    person = Declines()
    with McpToolbox("asking", [sys.executable, asking], timeout=30.0) as box:
        agent = Agent(ScriptedModel([calls, "No forms."]), tools=box, approver=person)
        result = agent.run("Ask me odd things")
        outcomes = sorted(asked.outcome for asked in box.history)
    refusals = {kind: f"the server's form cannot be shown: {problem}" for kind, problem in problems.items()}
    assert [(r.kind, r.output) for r in result.tool_results] == [
        (
            "error",
            f"Error: McpServerError: the MCP server 'asking' refused the call to ask_odd: {refusal} (error -32602)",
        )
        for refusal in refusals.values()
    ]
    assert sorted(person.told) == sorted(
        f"asking asked for input, but {refusal}" for refusal in refusals.values()
    )
    assert all("\n" not in line for line in person.told) and person.asked == []
    assert outcomes == sorted(f"refused: {refusal}" for refusal in refusals.values())
    assert result.text == "No forms." and agent.messages[-1] == {"role": "assistant", "content": "No forms."}
