"""The second look at a call: whether its argument values come from what the person wrote."""

from __future__ import annotations

import pytest

from meowgent_nb import tool
from meowgent_nb.protocols.list import list_schema
from meowgent_nb.tools.grounding import any_grounded, grounded, numbers, user_text, words

WEATHER = {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}


@pytest.mark.parametrize(
    ("arguments", "text", "expected"),
    [
        ({"city": "Paris"}, "What's the weather in paris today?", True),  # case folded
        ({"city": "Paris, France"}, "weather in Paris?", True),  # one word is enough
        ({"city": "San Francisco"}, "hi there, how are you?", False),  # made up
        ({"city": "Ｐａｒｉｓ"}, "weather in Paris", True),  # width folded (NFKC)
        ({"city": "上海"}, "我想知道上海目前的天气状况", True),  # unspaced script: character pairs
        ({"city": "北京"}, "我想知道上海目前的天气状况", False),
        ({"days": 3}, "the forecast for the next 3 days", True),
        ({"days": 3.0}, "the forecast for the next 3 days", True),  # 3.0 is 3
        ({"days": 7}, "the forecast for the next 3 days", False),
        ({"amount": "2,5"}, "add 2,5 litres", True),
        ({"unit": "celsius"}, "hi there", True),  # a choice of the schema: nothing to check
        ({"city": "Oslo", "unit": "celsius"}, "hi there", False),  # the choice does not ground Oslo
        ({"verbose": True}, "hi there", True),  # flags say nothing either way
        ({}, "hi there", True),  # no arguments: nothing to check
        ({"where": {"cities": ["Rome", "Oslo"]}}, "compare oslo and bergen", True),  # nested values
        ({"query": "!!!"}, "hi", True),  # no word in it: nothing to check
    ],
)
def test_a_call_is_grounded_when_one_of_its_values_is_in_the_persons_words(arguments, text, expected):
    assert grounded(arguments, WEATHER, text) is expected


def test_words_and_numbers_as_compared():
    assert words("Hello, São-Paulo_2 上海市") == {"hello", "são", "paulo", "2", "上海", "海市"}
    assert numbers("from -2.5 to 10, or 4,5 (v1.2.3, x2)") == {-2.5, 10.0, 4.5, 45.0}  # not in words


def test_the_person_s_text_is_their_messages_only():
    messages = [
        {"role": "system", "content": "You help with the weather in Oslo."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! Which city?"},
        {"role": "user", "content": "Bergen"},
        {"role": "user", "content": [{"type": "image"}]},  # not text: left out
    ]
    assert user_text(messages) == "hi\nBergen"


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return "sunny"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


SCHEMA = list_schema([get_weather, add])


def test_a_list_is_kept_when_one_of_its_calls_is_grounded():
    invented = {"name": "get_weather", "arguments": {"city": "San Francisco"}}
    said = {"name": "add", "arguments": {"a": 2, "b": 40}}
    assert any_grounded([invented], SCHEMA, "hi, what's 2 plus 40?") is False
    assert any_grounded([invented, said], SCHEMA, "hi, what's 2 plus 40?") is True
    assert any_grounded([said], SCHEMA, "hi there") is False


@pytest.mark.parametrize(
    "calls", [None, [], {"name": "add"}, [{"name": "add", "arguments": "2, 40"}], ["add"]]
)
def test_what_is_not_a_list_of_calls_is_not_judged(calls):
    assert any_grounded(calls, SCHEMA, "hi there") is True


def test_an_unknown_tool_s_values_are_all_checked():
    # No properties for it: a value that would be an enum choice of a known tool is checked too.
    assert any_grounded([{"name": "nope", "arguments": {"unit": "celsius"}}], SCHEMA, "hi") is False
