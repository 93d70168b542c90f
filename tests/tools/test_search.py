"""`ToolIndex`: the words of a tool, BM25 ranking, ties, and queries that are huge or match nothing."""

from __future__ import annotations

from typing import Annotated, Literal

from meowgent_nb import Tool, tool
from meowgent_nb.tools.search import MAX_QUERY_CHARS, ToolIndex, words


@tool
def get_weather(city: Annotated[str, "City name"], unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather for a city."""
    return ""


@tool
def send_email(to: list[str], subject: str, body: str) -> str:
    """Send an email."""
    return ""


@tool
def convert_units(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a length between units."""
    return 0.0


TOOLS = [get_weather, send_email, convert_units]


def test_words_split_names_and_drop_common_words():
    assert words("getStockPrice") == ["get", "stock", "price"]
    assert words("number_theory.gcd-v2") == ["number", "theory", "gcd", "v", "2"]
    assert words("HTTPServer parses URLs") == ["http", "server", "pars", "url"]
    assert words("Send the emails to me, please") == ["send", "email"]
    assert words("emailed emailing emails email") == ["email"] * 4
    assert words("address class") == ["address", "class"]  # no stem of a double s
    assert words("") == []


def test_the_name_description_parameters_and_enum_values_are_searched():
    index = ToolIndex(TOOLS)
    assert index.search("weather") == [get_weather]
    assert index.search("fahrenheit") == [get_weather]  # an enum value
    assert index.search("subject") == [send_email]  # a parameter name
    assert index.search("convert 5 km to miles") == [convert_units]
    assert index.search("emails") == [send_email]  # stemmed


def test_ranking_is_bm25_and_ties_keep_the_index_order():
    index = ToolIndex(TOOLS)
    # By hand: get_weather has 14 words, 1 of them "unit"; convert_units 11, 5 "unit"; send_email 8.
    # idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)); score = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / 11)).
    assert [round(s, 4) for s in index.scores("unit")] == [0.4228, 0.0, 0.8339]
    assert index.search("unit") == [convert_units, get_weather]
    twins = [
        Tool.from_schema(n, "Do a thing.", {"type": "object"}, print) for n in ("thing_two", "thing_one")
    ]
    assert [t.name for t in ToolIndex(twins).search("thing")] == ["thing_two", "thing_one"]
    assert ToolIndex(TOOLS).search("unit", limit=1) == [convert_units]


def test_queries_that_match_nothing_or_are_huge():
    index = ToolIndex(TOOLS)
    assert index.search("") == []
    assert index.search("the of and") == []  # only common words
    assert index.search("zzz qqq") == []
    huge = "x " * 1_000_000 + "weather"  # the word past MAX_QUERY_CHARS is not read
    assert index.search(huge) == []
    assert index.search(" " * (MAX_QUERY_CHARS - 8) + "weather") == [get_weather]
    assert ToolIndex([]).search("weather") == []
