"""Definition errors, argument validation, and tools built from configs and JSON Schemas."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel

from meowgent_nb import (
    MeowgentError,
    Tool,
    ToolArgumentsError,
    ToolCall,
    ToolDefinitionError,
    ToolResult,
    tool,
)


class Address(BaseModel):
    street: str
    zip_code: int = 0


@tool
def get_weather(
    city: Annotated[str, "City name"], unit: Literal["celsius", "fahrenheit"] = "celsius", days: int = 1
) -> str:
    """Get the weather."""
    return f"{city}: 21 {unit} for {days} day(s)"


def _error(tool_: Tool, arguments: object) -> str:
    with pytest.raises(ToolArgumentsError) as caught:
        tool_.validate(arguments)
    assert caught.value.tool_name == tool_.name
    return str(caught.value)


# --- definition errors ------------------------------------------------------------------------


def test_one_error_names_every_problem():
    def bad(a, *args, b: object, c=lambda: 1, **kwargs):
        pass

    with pytest.raises(ToolDefinitionError) as caught:
        tool(bad)
    assert str(caught.value) == (
        "Cannot make a tool from test_tools.test_one_error_names_every_problem.<locals>.bad:\n"
        "- parameter 'a' has neither a type annotation nor a default; annotate it, e.g. a: str\n"
        "- *args is not supported: a model passes named arguments; declare each one\n"
        "- **kwargs is not supported: a model passes named arguments; declare each one\n"
        "- parameter 'c': type function cannot be described as JSON Schema (Unable to generate"
        " pydantic-core schema for <class 'function'>); use a basic type, Literal, Enum, list,"
        " dict, a TypedDict, a dataclass or a pydantic model"
    )
    assert len(caught.value.problems) == 4
    assert isinstance(caught.value, MeowgentError)


def test_lambda_needs_a_name():
    with pytest.raises(ToolDefinitionError) as caught:
        tool(lambda x: x)
    assert caught.value.problems == (
        "a lambda has no name; pass one: tool(lambda ..., name='...')",
        "parameter 'x' has neither a type annotation nor a default; annotate it, e.g. x: str",
    )
    double = tool(lambda x=1: x * 2, name="double")
    assert (double.name, double.run({"x": "4"})) == ("double", 8)


def test_unannotated_self_points_at_the_bound_method():
    class Thing:
        def act(self, n: int) -> int:
            return n

    with pytest.raises(ToolDefinitionError) as caught:
        tool(Thing.act)
    assert caught.value.problems == (
        "parameter 'self' has neither a type annotation nor a default;"
        " decorate the bound method instead, e.g. tool(instance.method)",
    )


def test_unresolvable_type_hint_names_the_parameter():
    source = "from __future__ import annotations\ndef f(x: Missing, y: int) -> Gone: ...\n"
    namespace: dict = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError) as caught:
        tool(namespace["f"])
    assert caught.value.problems == (
        "parameter 'x': the type hint 'Missing' cannot be resolved (NameError: name 'Missing' is not"
        " defined); define the types it names at module level, or import them",
        "the return type: the type hint 'Gone' cannot be resolved (NameError: name 'Gone' is not"
        " defined); define the types it names at module level, or import them",
    )


def test_bad_options_are_reported_together():
    with pytest.raises(ToolDefinitionError) as caught:
        tool(name="has space", approval="yes", timeout=0)(get_weather.function)
    assert caught.value.problems == (
        "the name 'has space' is not a valid tool name; use letters, digits, '_', '-' and '.',"
        " starting with a letter or '_', at most 64 characters",
        "approval must be True, False, \"always\" or a function of the arguments, got 'yes'",
        "timeout must be a positive number of seconds or None, got 0",
    )


# --- validation -------------------------------------------------------------------------------


def test_validate_coerces_and_fills_defaults():
    assert get_weather.validate({"city": "Oslo", "days": "17"}) == {
        "city": "Oslo",
        "unit": "celsius",
        "days": 17,
    }


def test_validation_error_lines_name_argument_problem_and_allowed():
    assert _error(get_weather, {"city": 3, "unit": "kelvin", "dayz": 2}) == (
        "Invalid arguments for tool 'get_weather':\n"
        "- city: input should be a valid string, got 3\n"
        "- unit: input should be 'celsius' or 'fahrenheit', got \"kelvin\"\n"
        "- dayz: unknown argument (did you mean days?); this tool takes: city, unit, days"
    )
    assert _error(get_weather, {}) == (
        "Invalid arguments for tool 'get_weather':\n- city: missing; this argument is required"
    )
    assert _error(get_weather, ["Oslo"]) == (
        "Invalid arguments for tool 'get_weather':\n"
        '- (arguments): must be a JSON object mapping argument names to values, got ["Oslo"]'
    )


def test_validation_of_nested_union_and_long_input():
    @tool
    def ship(to: Address, key: int | list[int], note: str | None = None) -> None:
        """Ship."""

    assert _error(ship, {"to": {"zip_code": "x"}, "key": "k", "note": "n" * 100}) == (
        "Invalid arguments for tool 'ship':\n"
        "- to.street: missing; this field is required\n"
        '- to.zip_code: input should be a valid integer, unable to parse string as an integer, got "x"\n'
        '- key: input should be int | list[int], got "k"'
    )
    message = _error(ship, {"to": {"street": "s"}, "key": [1, "b"], "note": 5})
    assert message == (
        "Invalid arguments for tool 'ship':\n"
        '- key: input should be int | list[int], got [1, "b"]\n'
        "- note: input should be a valid string, got 5"
    )
    long_value = "n" * 100
    assert _error(get_weather, {"city": "a", "unit": long_value}).splitlines()[1] == (
        "- unit: input should be 'celsius' or 'fahrenheit', got \"" + "n" * 56 + "..."
    )


def test_tool_without_parameters_rejects_arguments():
    @tool
    def now() -> str:
        """The time."""
        return "noon"

    assert now.parameters == {"additionalProperties": False, "properties": {}, "type": "object"}
    assert (
        _error(now, {"x": 1})
        == "Invalid arguments for tool 'now':\n- x: unknown argument; this tool takes no arguments"
    )
    assert now.run({}) == "noon"


def test_positional_only_parameters_are_passed_by_position():
    @tool
    def power(base: int, /, exponent: int = 2) -> int:
        """Raise."""
        return base**exponent

    assert power.run({"base": 3, "exponent": "3"}) == 27


def test_async_tool_runs_inside_a_running_loop():
    @tool
    async def slow_echo(text: str) -> str:
        """Echo."""
        await asyncio.sleep(0)
        return text.upper()

    async def main():
        inside = slow_echo.run({"text": "a"})  # a thread of its own: this loop is busy
        awaited = await slow_echo.arun({"text": "b"})
        plain = await get_weather.arun({"city": "c"})
        return inside, awaited, plain

    assert asyncio.run(main()) == ("A", "B", "c: 21 celsius for 1 day(s)")


def test_call_and_result_values():
    call = ToolCall("get_weather", {"city": "Oslo"}, id="call_1")
    result = ToolResult(call, "Oslo: 21 celsius", value="Oslo: 21 celsius", duration=0.5)
    failed = ToolResult(call, "Timed out after 30 s", kind="timeout")
    assert (result.ok, failed.ok, failed.exception) == (True, False, None)
    assert repr(call) == "ToolCall(name='get_weather', arguments={'city': 'Oslo'}, id='call_1')"


# --- tools that are not Python functions ------------------------------------------------------


def _lookup(**arguments):
    return arguments


def test_config_tool_renders_validates_and_runs_like_a_function():
    config = {
        "name": "lookup_order",
        "description": "Find an order.",
        "arguments": [
            {"name": "order_id", "type": "integer", "description": "The order number"},
            {"name": "region", "type": "string", "enum": ["eu", "us"], "default": "eu"},
            {"name": "note", "type": "string", "required": False},
        ],
    }
    lookup = Tool.from_config(config, _lookup)

    @tool
    def lookup_order(
        order_id: Annotated[int, "The order number"],
        region: Literal["eu", "us"] = "eu",
        note: str | None = None,
    ):
        """Find an order."""

    assert lookup.parameters == lookup_order.parameters
    assert lookup.to_xml() == lookup_order.to_xml()
    assert lookup.run({"order_id": "7"}) == {"order_id": 7, "region": "eu", "note": None}
    assert _error(lookup, {"order_id": "x", "extra": 1}) == (
        "Invalid arguments for tool 'lookup_order':\n"
        '- order_id: input should be a valid integer, unable to parse string as an integer, got "x"\n'
        "- extra: unknown argument; this tool takes: order_id, region, note"
    )


def test_config_without_arguments_and_bad_configs():
    ping = Tool.from_config({"name": "ping", "description": "Check the service."}, lambda: "pong")
    assert ping.parameters == {"additionalProperties": False, "properties": {}, "type": "object"}
    assert ping.run({}) == "pong"
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_config(
            {"name": "x", "arguments": [{"name": "a", "type": "decimal"}, {"name": "a", "kind": "s"}]},
            _lookup,
        )
    assert str(caught.value) == (
        "Cannot make a tool from config 'x':\n- arguments.1.kind: extra inputs are not permitted"
    )
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_config(
            {"name": "x", "arguments": [{"name": "a", "type": "decimal"}, {"name": "a"}]}, _lookup
        )
    assert caught.value.problems == (
        "argument 'a': unknown type 'decimal'; use one of array, bool, boolean, dict, float, int,"
        " integer, list, number, object, str, string",
        "argument 'a' is declared twice",
    )


SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer", "minimum": 1, "default": 5},
    },
    "required": ["query"],
}


def test_schema_tool_renders_validates_and_runs():
    search = Tool.from_schema("search", "Search the index.", SEARCH_SCHEMA, _lookup, approval=True)
    assert search.parameters == {**SEARCH_SCHEMA, "additionalProperties": False}
    assert search.to_xml() == (
        '<tool name="search">Search the index.\n'
        '<param name="query">What to look for</param>\n'
        '<param name="limit" type="integer" default="5" minimum="1"/>\n'
        "</tool>"
    )
    assert search.run({"query": "cats"}) == {"query": "cats", "limit": 5}
    assert _error(search, {"limit": 0, "sort": "asc"}) == (
        "Invalid arguments for tool 'search':\n"
        "- query: missing; this argument is required\n"
        "- sort: unknown argument; this tool takes: query, limit\n"
        "- limit: 0 is less than the minimum of 1"
    )


# The filesystem server's edit_file arguments, as zod-to-json-schema writes them.
EDIT_FILE_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}


def test_schema_tool_names_each_missing_field_once():
    edit = Tool.from_schema("edit_file", "Edit a file.", EDIT_FILE_SCHEMA, _lookup)
    assert _error(edit, {"path": "a.txt", "edits": [{"newText": "x"}]}) == (
        "Invalid arguments for tool 'edit_file':\n- edits[0].oldText: missing; this field is required"
    )
    assert _error(
        edit, {"path": "a.txt", "edits": [{}, {"oldText": "y", "newText": "z", "dryRun": True}]}
    ) == (
        "Invalid arguments for tool 'edit_file':\n"
        "- edits[0].oldText: missing; this field is required\n"
        "- edits[0].newText: missing; this field is required\n"
        "- edits[1].dryRun: unknown field; remove it"
    )
    assert _error(edit, {}) == (
        "Invalid arguments for tool 'edit_file':\n"
        "- path: missing; this argument is required\n"
        "- edits: missing; this argument is required"
    )
    both = {"type": "object", "allOf": [{"required": ["a"]}, {"required": ["a", "b"]}]}
    assert _error(Tool.from_schema("both", "B.", both, _lookup), {}) == (
        "Invalid arguments for tool 'both':\n"
        "- a: missing; this argument is required\n"
        "- b: missing; this argument is required"
    )


def test_schema_tool_leaves_out_what_tells_a_model_nothing_and_keeps_names_and_values():
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$comment": "generated; do not edit",
        "title": "statusArguments",
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title"},  # a property called title
            "$schema": {"type": "string", "title": "Schema", "description": "A schema's URL."},
            "$comment": {"type": "string", "title": "Why", "$comment": "a note"},
            "label": {"type": "string", "title": "Shown to people"},  # its only explanation
            "meta": {
                "type": "object",
                "additionalProperties": {"type": "string", "title": "Value"},
                "default": {"title": "T", "$schema": "S"},
                "examples": [{"$comment": "c"}],
            },
            "page": {"$ref": "#/$defs/Page"},
        },
        "required": ["title", "page"],
        "$defs": {
            "Page": {
                "title": "Page",
                "type": "object",
                "properties": {"number": {"title": "Number", "type": "integer", "minimum": 1}},
                "required": ["number"],
                "additionalProperties": False,
            }
        },
    }
    made = Tool.from_schema("status", "Show the status.", schema, _lookup)
    assert made.parameters == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "$schema": {"type": "string", "description": "A schema's URL."},
            "$comment": {"type": "string", "title": "Why"},
            "label": {"type": "string", "title": "Shown to people"},
            "meta": {
                "type": "object",
                "additionalProperties": {"type": "string", "title": "Value"},
                "default": {"title": "T", "$schema": "S"},
                "examples": [{"$comment": "c"}],
            },
            "page": {"$ref": "#/$defs/Page"},
        },
        "required": ["title", "page"],
        "$defs": {
            "Page": {
                "type": "object",
                "properties": {"number": {"type": "integer", "minimum": 1}},
                "required": ["number"],
                "additionalProperties": False,
            }
        },
        "additionalProperties": False,
    }
    assert made.to_xml() == (
        '<tool name="status">Show the status.\n'
        '<param name="title"/>\n'
        '<param name="$schema" required="false">A schema\'s URL.</param>\n'
        '<param name="$comment" title="Why" required="false"/>\n'
        '<param name="label" title="Shown to people" required="false"/>\n'
        '<param name="meta" type="object" default="{&quot;title&quot;:&quot;T&quot;,&quot;$schema&quot;:&quot;S&quot;}">\n'
        '<values title="Value"/>\n'
        '<schema>{"examples":[{"$comment":"c"}]}</schema>\n'
        "</param>\n"
        '<param name="page" ref="Page"/>\n'
        "<defs>\n"
        '<def name="Page" additionalProperties="false">\n'
        '<param name="number" type="integer" minimum="1"/>\n'
        "</def>\n"
        "</defs>\n"
        "</tool>"
    )
    assert _error(made, {"title": "x", "page": {"number": 0}, "$schema": 1}) == (
        "Invalid arguments for tool 'status':\n"
        "- $schema: 1 is not of type 'string'\n"
        "- page.number: 0 is less than the minimum of 1"
    )


def test_schema_tool_rejects_an_invalid_schema():
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("s", "S.", {"type": "array", "minItems": -1}, _lookup)
    assert caught.value.problems == (
        'the schema must have "type": "object", got \'array\'',
        "the schema is not a valid JSON Schema: -1 is less than the minimum of 0",
    )


# --- examples ---------------------------------------------------------------------------------


def _forecast(city: Annotated[str, "City name"], days: int = 1, unit: Literal["c", "f"] = "c") -> str:
    """Forecast the weather."""
    return f"{city}: {days} day(s) in {unit}"


def _examples_error(examples: object) -> tuple[str, ...]:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(examples=examples)(_forecast)
    assert str(caught.value).startswith("Cannot add the examples to test_tools._forecast:\n- ")
    return caught.value.problems


def test_examples_are_kept_as_given_in_an_immutable_tuple():
    given = [{"city": "Paris", "days": 2}, {"unit": "f", "city": "Oslo"}]
    forecast = tool(examples=given)(_forecast)
    given[0]["days"] = 99  # the author's list and dicts are copied, not kept
    assert forecast.examples == ({"city": "Paris", "days": 2}, {"unit": "f", "city": "Oslo"})
    assert type(forecast.examples) is tuple
    forecast.examples[0]["city"] = "Rome"  # a copy: nothing the model reads changes
    assert forecast.examples[0] == {"city": "Paris", "days": 2}
    with pytest.raises(AttributeError):
        forecast.examples = ()
    assert forecast("Paris", 2) == "Paris: 2 day(s) in c"
    assert tool(_forecast).examples == () == tool(examples=[])(_forecast).examples
    assert Tool(_forecast, examples=[{"city": "Bern"}]).examples == ({"city": "Bern"},)


def test_an_example_is_checked_by_the_validation_a_model_call_goes_through():
    assert _examples_error([{"city": "Paris"}, {"days": 2}, {"city": "Oslo", "unit": "k", "when": 1}]) == (
        "examples[1] is not a call the tool accepts: city: missing; this argument is required;"
        " correct it or leave it out",
        "examples[2] is not a call the tool accepts: unit: input should be 'c' or 'f', got \"k\";"
        " correct it or leave it out",
        "examples[2] is not a call the tool accepts: when: unknown argument; this tool takes: city, days,"
        " unit; correct it or leave it out",
    )


def test_an_example_the_validation_would_coerce_is_refused_as_the_model_would_copy_it():
    assert Tool(_forecast).validate({"city": "Paris", "days": "2"})["days"] == 2  # lax for a model's call
    assert _examples_error([{"city": "Paris", "days": "2"}, {"city": 7}]) == (
        "examples[0]: days: '2' is not of type 'integer'; the model copies an example as written,"
        " so write each value as its schema type",
        "examples[1] is not a call the tool accepts: city: input should be a valid string, got 7;"
        " correct it or leave it out",
    )


def test_examples_that_are_no_list_of_dicts_or_no_json_are_refused():
    assert _examples_error({"city": "Paris"}) == (
        "examples must be a list of argument dicts, got one dict; wrap it in a list: examples=[{...}]",
    )
    assert _examples_error("city=Paris") == ("examples must be a list of argument dicts, got str",)
    assert _examples_error([["Paris"], None]) == (
        "examples[0] must be a dict of argument names to values, got list",
        "examples[1] must be a dict of argument names to values, got NoneType",
    )
    nested: list = []
    nested.append(nested)  # a cycle
    assert _examples_error(
        [
            {"city": {"Paris"}},
            {"city": "Paris", "days": float("inf")},
            {1: "Paris"},
            {"city": "Paris", "deep": nested},
            {"city": Address(street="Main")},
        ]
    ) == (
        "examples[0]: city is of type set, which JSON cannot carry; write it as the model would: a string,"
        " number, boolean, null, list or dict",
        "examples[1]: days is inf, which JSON cannot carry; use a finite number or null",
        "examples[2]: the example has the key 1 (int); JSON object keys are strings",
        "examples[3]: deep[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0] nests deeper"
        " than 20 levels; an example shows the shape of a call",
        "examples[4]: city is of type Address, which JSON cannot carry; write it as the model would: a"
        " string, number, boolean, null, list or dict",
    )


def test_too_many_too_large_and_repeated_examples_are_refused():
    six = [{"city": city} for city in ("Oslo", "Rome", "Bern", "Kyiv", "Lima", "Riga")]
    assert _examples_error(six) == (
        "6 examples given, at most 5: every example is in the prompt on every turn; keep the few that"
        " show different uses",
    )
    assert tool(examples=six[:5])(_forecast).examples == tuple(six[:5])
    fits = {"city": "x" * 289}  # {"city":"..."} is 300 characters
    assert tool(examples=[fits])(_forecast).examples == (fits,)
    assert _examples_error([{"city": "x" * 290}, {"city": "Oslo"}, {"city": "Oslo"}]) == (
        "examples[0] is 301 characters as JSON, more than 300; shorten its values: an example shows"
        " the shape of a call, not a whole input",
        "examples[2] repeats examples[0]; leave it out",
    )


def test_config_and_schema_tools_take_examples_too():
    config = {
        "name": "lookup_order",
        "arguments": [{"name": "order_id", "type": "integer"}],
        "examples": [{"order_id": 7}],
    }
    assert Tool.from_config(config, _lookup).examples == ({"order_id": 7},)
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_config({**config, "examples": [{"order_id": "7"}, {}]}, _lookup)
    assert str(caught.value) == (
        "Cannot add the examples to config 'lookup_order':\n"
        "- examples[0]: order_id: '7' is not of type 'integer'; the model copies an example as written,"
        " so write each value as its schema type\n"
        "- examples[1] is not a call the tool accepts: order_id: missing; this argument is required;"
        " correct it or leave it out"
    )
    search = Tool.from_schema(
        "search", "S.", SEARCH_SCHEMA, _lookup, examples=[{"query": "cats", "limit": 3}]
    )
    assert search.examples == ({"query": "cats", "limit": 3},)
    published = Tool.from_schema("search", "S.", {**SEARCH_SCHEMA, "examples": [{"query": "dogs"}]}, _lookup)
    assert published.examples == ({"query": "dogs"},)
    assert published.parameters == {**SEARCH_SCHEMA, "additionalProperties": False}  # not a keyword there
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("search", "S.", SEARCH_SCHEMA, _lookup, examples=[{"query": "cats", "limit": 0}])
    assert caught.value.problems == (
        "examples[0] is not a call the tool accepts: limit: 0 is less than the minimum of 1;"
        " correct it or leave it out",
    )
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("search", "S.", {**SEARCH_SCHEMA, "examples": []}, _lookup, examples=[])
    assert caught.value.problems == (
        'examples are given twice, as examples= and as the schema\'s "examples"; keep one',
    )


def test_import_has_no_side_effects():
    code = (
        "import sys, meowgent_nb\n"
        "heavy = {'IPython', 'ipywidgets', 'ollama', 'httpx', 'ipykernel', 'llama_cpp'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
