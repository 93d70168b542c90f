"""Results shaped by type before the model reads them: JSON bounded in items and depth, bytes
described, long text keeping its start and end (`tools.output`)."""

from __future__ import annotations

import dataclasses
import json

import pydantic
import pytest

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.tools.output import Shape, output_text, shape_note


def test_a_long_list_shows_its_first_items_and_how_many_more():
    assert json.loads(output_text(list(range(1000)), None, items=3)) == [0, 1, 2, "... 997 more items"]


def test_an_object_with_many_keys_shows_its_first_ones_and_how_many_more():
    value = {f"k{i}": i for i in range(60)}
    shown = json.loads(output_text(value, None))
    assert list(shown)[-2:] == ["k49", "..."] and shown["..."] == "10 more keys" and len(shown) == 51


def test_nesting_deeper_than_the_limit_is_named_not_written():
    deep = {"a": {"b": {"c": [1, 2, 3], "d": {"e": 1}}}}
    assert json.loads(output_text(deep, None, depth=2)) == {"a": {"b": "{2 keys}"}}
    assert json.loads(output_text([[], {}], None, depth=1)) == ["[0 items]", "{0 keys}"]
    assert json.loads(output_text([[[[1]]]], None, depth=2)) == [["[1 item]"]]


def test_within_the_limits_json_is_what_it_always_was():
    assert output_text({"a": [1, 2], "b": None, "c": (1, 2)}, None) == '{"a": [1, 2], "b": null, "c": [1, 2]}'


def test_a_circular_structure_is_its_repr_not_a_crash():
    loop: list = [1]
    loop.append(loop)
    assert output_text(loop, None) == "[1, [...]]"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "[image: image/png]"),
        (b"%PDF-1.7 ...", "[bytes: 12 bytes, application/pdf]"),
        (bytearray(b"\x00\x01" * 1024), "[bytes: 2,048 bytes]"),
        (memoryview(b"abc"), "[bytes: 3 bytes]"),
        (b"", "[bytes: 0 bytes]"),
    ],
)
def test_bytes_are_described_not_dumped(value, text):
    assert output_text(value, 4000) == text


def test_pydantic_and_dataclass_values_are_bounded_too():
    class Page(pydantic.BaseModel):
        rows: list[int]

    @dataclasses.dataclass
    class Box:
        items: list[int]

    assert output_text(Page(rows=[1, 2]), None) == '{"rows":[1,2]}'  # unchanged: pydantic's own JSON
    assert json.loads(output_text(Page(rows=list(range(10))), None, items=2)) == {
        "rows": [0, 1, "... 8 more items"]
    }
    assert json.loads(output_text(Box(items=list(range(10))), None, items=2)) == {
        "items": [0, 1, "... 8 more items"]
    }


def test_the_cut_keeps_the_start_and_the_end_and_says_how_much_went():
    text = "".join(f"line {i}\n" for i in range(1000))
    cut = output_text(text, 300)
    head, note, tail = cut.partition("\n[... cut ")
    assert head == text[:200] and cut.endswith(text[-100:])
    assert note and f"{len(text) - 300:,} of {len(text):,} characters ...]" in tail


def test_the_agents_settings_shape_each_result_and_the_note_says_how():
    @tool
    def rows() -> list:
        """All the rows."""
        return [{"id": i, "tags": {"a": {"b": {"c": 1}}}} for i in range(100)]

    call = '<tool_call>{"name": "rows", "arguments": {}}</tool_call>'
    agent = Agent(ScriptedModel([call, "ok"]), tools=[rows], max_output_items=2, max_output_depth=3)
    (result,) = agent.run("x").tool_results
    assert json.loads(result.output) == [
        {"id": 0, "tags": {"a": "{1 key}"}},
        {"id": 1, "tags": {"a": "{1 key}"}},
        "... 98 more items",
    ]
    assert shape_note(Shape(4000, 2, 3)) == (
        "Its results reach the model as text cut to 4,000 characters, keeping the start and the end; lists and"
        " objects show at most 2 entries a level, 3 levels deep; images reach a model that can look at them, other bytes are described."
    )
    assert shape_note(Shape(None, 50, 6)).startswith("Its results reach the model as text not cut;")
