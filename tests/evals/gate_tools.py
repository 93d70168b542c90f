"""The tools and cases of the regression-gate tests, and the settings their cassette was recorded with.

``gate.cassette.json`` holds the embedded model's answers (Qwen2.5-Coder-0.5B, temperature 0) to
`CASES` with `get_weather` and each of the two `convert` tools: `convert` says in its docstring
which unit symbols it takes; `convert_worse` is the same function after a docstring edit that
dropped the Args section. Recorded by ``python tests/evals/record_gate_cassette.py``.
"""

from __future__ import annotations

from pathlib import Path

from meowgent_nb import EvalCase, tool

CASSETTE = Path(__file__).with_name("gate.cassette.json")
MODEL = "local"
OPTIONS = {"temperature": 0.0, "num_ctx": 2048}
"""The settings the cassette was recorded with (AgentMagics.temperature and num_ctx): part of each request's key."""


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city's name, e.g. Paris.
    """
    return f"{city}: sunny"


@tool(name="convert")
def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a length from one unit to another.

    Args:
        value: The length to convert.
        from_unit: The symbol of its unit: one of mm, cm, m, km, in, ft, mi.
        to_unit: The symbol of the unit to convert to: one of mm, cm, m, km, in, ft, mi.
    """
    return value


@tool(name="convert")
def convert_worse(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a length from one unit to another."""
    return value


CASES = [
    EvalCase(
        "How many kilometres is 10 miles?",
        "convert",
        {"value": 10, "from_unit": "mi", "to_unit": "km"},
        "parameters",
    ),
    EvalCase(
        "Convert 30 centimetres to inches.",
        "convert",
        {"value": 30, "from_unit": "cm", "to_unit": "in"},
        "parameters",
    ),
    EvalCase("Is it warm in Madrid today?", "get_weather", {"city": "Madrid"}, "understanding"),
]
