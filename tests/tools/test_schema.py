"""Exact JSON Schemas, descriptions and returns that `@tool` reads from functions."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from meowgent_nb import Tool, tool


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Address(BaseModel):
    """A postal address."""

    street: str
    zip_code: int = 0


class Point(TypedDict):
    x: float
    y: float


def test_annotated_literal_and_default():
    @tool
    def get_weather(
        city: Annotated[str, "City name, e.g. Paris"], unit: Literal["celsius", "fahrenheit"] = "celsius"
    ) -> str:
        """Get the current weather for a city."""

    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get the current weather for a city."
    assert get_weather.parameters == {
        "additionalProperties": False,
        "properties": {
            "city": {"description": "City name, e.g. Paris", "type": "string"},
            "unit": {"default": "celsius", "enum": ["celsius", "fahrenheit"], "type": "string"},
        },
        "required": ["city"],
        "type": "object",
    }
    assert get_weather.returns == "str"
    assert get_weather.output_type == "str"
    assert get_weather.approval is False
    assert get_weather.timeout is None


def test_optional_union_enum_list():
    @tool
    def search(
        query: str,
        limit: int | None = None,
        key: int | str = 0,
        unit: Unit = Unit.CELSIUS,
        tags: list[str] = [],
    ):
        """Search."""

    assert search.parameters["properties"] == {
        "query": {"type": "string"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "key": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 0},
        "unit": {"enum": ["celsius", "fahrenheit"], "type": "string", "default": "celsius"},
        "tags": {"items": {"type": "string"}, "type": "array", "default": []},
    }
    assert search.parameters["required"] == ["query"]


def test_nested_model_typeddict_and_dict_are_inlined_without_titles():
    @tool
    def ship(to: Address, points: list[Point], weights: dict[str, float], title: str = "parcel"):
        """Ship a parcel."""

    assert ship.parameters == {
        "additionalProperties": False,
        "properties": {
            "to": {
                "description": "A postal address.",
                "properties": {
                    "street": {"type": "string"},
                    "zip_code": {"default": 0, "type": "integer"},
                },
                "required": ["street"],
                "type": "object",
            },
            "points": {
                "items": {
                    "additionalProperties": False,
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x", "y"],
                    "type": "object",
                },
                "type": "array",
            },
            "weights": {"additionalProperties": {"type": "number"}, "type": "object"},
            "title": {"default": "parcel", "type": "string"},
        },
        "required": ["to", "points", "weights"],
        "type": "object",
    }


class Node(BaseModel):
    label: str
    children: list[Node] = []


def test_recursive_model_stays_in_defs():
    @tool
    def walk(tree: Node) -> int:
        """Count nodes."""

    assert walk.parameters == {
        "$defs": {
            "Node": {
                "properties": {
                    "label": {"type": "string"},
                    "children": {"default": [], "items": {"$ref": "#/$defs/Node"}, "type": "array"},
                },
                "required": ["label"],
                "type": "object",
            }
        },
        "additionalProperties": False,
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "required": ["tree"],
        "type": "object",
    }
    assert (
        walk.validate({"tree": {"label": "a", "children": [{"label": "b"}]}})["tree"].children[0].label == "b"
    )


def test_description_precedence_annotated_string_then_field_then_docstring():
    @tool
    def f(
        a: Annotated[int, "from Annotated"],
        b: Annotated[int, Field(description="from Field")],
        c: int,
        d: Annotated[int, Field(description="from Field"), "string wins"],
    ):
        """Do it.

        Args:
            a: from docstring a
            b: from docstring b
            c: from docstring c
            d: from docstring d
        """

    assert {k: v["description"] for k, v in f.parameters["properties"].items()} == {
        "a": "from Annotated",
        "b": "from Field",
        "c": "from docstring c",
        "d": "string wins",
    }


def test_field_constraints_are_kept():
    @tool
    def pick(
        n: Annotated[int, Field(ge=1, le=5)] = 3, code: Annotated[str, Field(pattern="^[A-Z]{3}$")] = "ABC"
    ):
        """Pick."""

    assert pick.parameters["properties"] == {
        "n": {"default": 3, "maximum": 5, "minimum": 1, "type": "integer"},
        "code": {"default": "ABC", "pattern": "^[A-Z]{3}$", "type": "string"},
    }


def test_parameter_default_given_as_field():
    @tool
    def f(n: int = Field(4, description="how many")):
        """F."""

    assert f.parameters["properties"] == {"n": {"default": 4, "description": "how many", "type": "integer"}}
    assert f.validate({}) == {"n": 4}


def test_unannotated_parameter_with_default_takes_the_default_type():
    @tool
    def f(n=3, name=None):
        """F."""

    assert f.parameters["properties"] == {"n": {"default": 3, "type": "integer"}, "name": {"default": None}}


def test_parameter_named_title_keeps_its_schema():
    @tool
    def rename(title: Annotated[str, "The new title"], model_config: str = "x") -> None:
        """Rename a document."""

    assert rename.parameters["properties"] == {
        "title": {"description": "The new title", "type": "string"},
        "model_config": {"default": "x", "type": "string"},
    }
    assert rename.validate({"title": "T"}) == {"title": "T", "model_config": "x"}


GOOGLE = """Convert an amount between currencies.

Uses the daily rate.

Args:
    amount: How much to convert.
    currency: ISO code of the target currency,
        e.g. EUR.

Returns:
    The converted amount.
"""

NUMPY = """Convert an amount between currencies.

Uses the daily rate.

Parameters
----------
amount : float
    How much to convert.
currency : str
    ISO code of the target currency, e.g. EUR.

Returns
-------
float
    The converted amount.
"""

SPHINX = """Convert an amount between currencies.

Uses the daily rate.

:param amount: How much to convert.
:param currency: ISO code of the target currency, e.g. EUR.
:returns: The converted amount.
"""


def _convert_with(doc: str, annotate_return: bool) -> Tool:
    def convert(amount: float, currency: str):
        pass

    if annotate_return:
        convert.__annotations__["return"] = float
    convert.__doc__ = doc
    return tool(convert)


def test_google_numpy_and_sphinx_docstrings():
    expected_currency = {
        GOOGLE: "ISO code of the target currency,\ne.g. EUR.",
        NUMPY: "ISO code of the target currency, e.g. EUR.",
        SPHINX: "ISO code of the target currency, e.g. EUR.",
    }
    for doc, currency in expected_currency.items():
        for annotate in (True, False):
            converted = _convert_with(doc, annotate)
            assert converted.description == "Convert an amount between currencies.\n\nUses the daily rate."
            assert converted.parameters["properties"] == {
                "amount": {"description": "How much to convert.", "type": "number"},
                "currency": {"description": currency, "type": "string"},
            }
            if annotate or doc is NUMPY:
                assert converted.returns == "float: The converted amount."
            else:
                assert converted.returns == "The converted amount."


def test_returns_from_annotated_return_and_none():
    @tool
    def total(a: int, b: int) -> Annotated[int, "the sum"]:
        """Add."""

    @tool
    def log(message: str) -> None:
        """Log a message."""

    assert total.returns == "int: the sum"
    assert total.output_type == "int"
    assert log.returns is None
    assert log.output_type == "None"


def test_async_def_and_bound_method():
    @tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        return f"<html>{url}</html>"

    class Counter:
        def __init__(self):
            self.count = 0

        def bump(self, by: int = 1) -> int:
            """Bump the counter."""
            self.count += by
            return self.count

    counter = Counter()
    bump = tool(counter.bump)
    assert fetch.is_async is True
    assert fetch.parameters["properties"] == {"url": {"type": "string"}}
    assert bump.name == "bump"
    assert bump.parameters["properties"] == {"by": {"default": 1, "type": "integer"}}
    assert bump(5) == 5
    assert bump.run({"by": "2"}) == 7
    assert counter.count == 7
    assert fetch.run({"url": "x"}) == "<html>x</html>"


def test_options_override_name_and_description():
    @tool(name="weather.now", description="  Weather right now.  ", approval=True, timeout=2)
    def w(city: str) -> str:
        """Ignored docstring."""
        return city

    assert (w.name, w.description, w.approval, w.timeout) == ("weather.now", "Weather right now.", True, 2.0)
    assert w("Oslo") == "Oslo"
    assert w.__name__ == "w"
    assert w.__doc__ == "Ignored docstring."
