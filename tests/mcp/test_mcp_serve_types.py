"""What `%tools serve` publishes besides arguments: annotations, output schemas, structured
results; read back by the notebook's own client (`McpToolbox`) over real HTTP."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from meowgent_nb import Approved, ToolDefinitionError, tool
from meowgent_nb.mcp import McpToolbox, McpToolError, ToolServer
from meowgent_nb.mcp.server._serve_types import annotations_of, output_schema_of


class Weather(BaseModel):
    city: str
    degrees: float


@dataclasses.dataclass
class Count:
    words: int
    lines: int


@tool(read_only=True)
def forecast(city: str) -> Weather:
    """The weather in a city."""
    return Weather(city=city, degrees=21.5)


@tool
def stats(numbers: list[float]) -> dict[str, float]:
    """Smallest and largest."""
    return {"min": min(numbers), "max": max(numbers)}


@tool
def count(text: str) -> Count:
    """Words and lines of a text."""
    return Count(len(text.split()), text.count("\n") + 1)


@tool
def liar() -> dict[str, int]:
    """Claims integers, returns text."""
    return {"a": "not a number"}  # type: ignore[dict-item]


@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}."


@tool(approval=True)
def wipe(path: str) -> str:
    """Delete everything under a path."""
    return f"wiped {path}"


@tool(approval=True, read_only=True)
def peek(path: str) -> str:
    """Reads a private file: asks first, though it changes nothing."""
    return f"peeked at {path}"


class Yes:
    async def approve(self, requests):
        return [Approved("by the test") for _ in requests]


@pytest.fixture(scope="module")
def client():
    served = [forecast, stats, count, liar, greet, wipe, peek]
    server = ToolServer(served, include_approval_tools=True, approver=Yes())
    try:
        with McpToolbox("nb", url=server.url, headers={"Authorization": f"Bearer {server.token}"}) as box:
            yield box
    finally:
        server.stop()


def test_annotations_follow_read_only_else_approval():
    assert annotations_of(forecast) == {"readOnlyHint": True, "destructiveHint": False}
    assert annotations_of(greet) == {"readOnlyHint": True, "destructiveHint": False}
    assert annotations_of(wipe) == {"readOnlyHint": False, "destructiveHint": True}
    assert annotations_of(peek) == {"readOnlyHint": True, "destructiveHint": False}


def test_the_client_asks_where_the_published_hints_say(client):
    asks = {t.name: t.approval for t in client}
    assert asks == {
        "nb_forecast": False,
        "nb_stats": False,
        "nb_count": False,
        "nb_liar": False,
        "nb_greet": False,
        "nb_wipe": True,
        "nb_peek": False,
    }


def test_output_schemas_come_from_return_types_that_are_objects(client):
    assert output_schema_of(greet) is None and client["nb_greet"].output_schema is None
    assert client["nb_stats"].output_schema == {"additionalProperties": {"type": "number"}, "type": "object"}
    assert client["nb_forecast"].output_schema == {
        "properties": {
            "city": {"title": "City", "type": "string"},
            "degrees": {"title": "Degrees", "type": "number"},
        },
        "required": ["city", "degrees"],
        "title": "Weather",
        "type": "object",
    }
    assert sorted(client["nb_count"].output_schema["properties"]) == ["lines", "words"]


def test_structured_results_arrive_as_values_and_the_text_is_unchanged(client):
    weather = client["nb_forecast"].run({"city": "Oslo"})
    assert weather == {"city": "Oslo", "degrees": 21.5} and weather.text == '{"city":"Oslo","degrees":21.5}'
    assert client["nb_stats"].run({"numbers": [3, 1, 2]}) == {"min": 1.0, "max": 3.0}
    assert client["nb_count"].run({"text": "one two\nthree"}) == {"words": 3, "lines": 2}
    assert client["nb_greet"].run({"name": "Ada"}) == "Hello, Ada."


def test_a_result_that_breaks_its_own_return_type_is_an_error_not_a_value(client):
    with pytest.raises(McpToolError) as caught:
        client["nb_liar"].run({})
    assert str(caught.value) == (
        "Error: the result does not match the tool's return type: a: 'not a number' is not of type 'integer'"
    )


def test_read_only_must_be_a_bool_or_none():
    with pytest.raises(ToolDefinitionError) as caught:
        tool(read_only="yes")(greet.function)
    assert caught.value.problems == ("read_only must be True, False or None, got 'yes'",)
