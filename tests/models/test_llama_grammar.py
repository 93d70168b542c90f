"""The grammars that constrain the embedded model's tool arguments (`_llama_grammar`), and how
a constrained call is closed (`_llama_text.call_closing`).

`bounded` is checked by its exact output everywhere. What the compiled grammars accept is
checked by llama.cpp's own grammar sampler (`grammar_check.accepts`), which needs
llama-cpp-python and the default model's vocabulary.
"""

from __future__ import annotations

import importlib.util
import json
import warnings

import pytest

from meowgent_nb import Tool
from meowgent_nb.models._llama_grammar import ARRAY_MAX_ITEMS, STRING_MAX_LENGTH, GrammarCache, bounded
from meowgent_nb.models._llama_text import call_closing
from meowgent_nb.models.gguf import missing_packages
from meowgent_nb.protocols.xml import call_schema
from tests.support.grammar_check import accepts

HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
needs_llama_cpp = pytest.mark.skipif(not HAVE_LLAMA_CPP, reason="llama-cpp-python is not installed")
needs_vocabulary = pytest.mark.skipif(
    not (HAVE_LLAMA_CPP and not missing_packages()),
    reason="llama-cpp-python or the model's parts are missing",
)
ANY_VALUE = {
    "anyOf": [
        {"type": "string", "maxLength": STRING_MAX_LENGTH},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "string", "maxLength": STRING_MAX_LENGTH},
                    {"type": "number"},
                    {"type": "boolean"},
                    {"type": "null"},
                ]
            },
            "maxItems": ARRAY_MAX_ITEMS,
        },
        {"type": "object"},
    ]
}


def test_the_defaults_are_documented_figures():
    assert (STRING_MAX_LENGTH, ARRAY_MAX_ITEMS) == (200, 16)


def test_strings_and_arrays_get_default_bounds_and_keep_their_own():
    schema = {
        "type": "object",
        "properties": {
            "album": {"type": "string", "description": "The album."},
            "code": {"type": "string", "maxLength": 5},
            "long": {"type": "string", "minLength": 300},
            "tags": {"type": "array", "items": {"type": "string"}},
            "pair": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
            "many": {"type": "array", "items": {"type": "number"}, "minItems": 20},
        },
        "required": ["album"],
    }
    assert bounded(schema) == {
        "type": "object",
        "properties": {
            "album": {"type": "string", "description": "The album.", "maxLength": 200},
            "code": {"type": "string", "maxLength": 5},
            "long": {"type": "string", "minLength": 300, "maxLength": 300},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 16},
            "pair": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
            "many": {"type": "array", "items": {"type": "number"}, "minItems": 20, "maxItems": 20},
        },
        "required": ["album"],
    }
    assert schema["properties"]["album"] == {"type": "string", "description": "The album."}  # not changed


def test_nested_unions_and_type_lists_are_bounded_too():
    assert bounded(
        {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/x"}], "$defs": {"x": {"type": "string"}}}
    ) == {
        "anyOf": [{"type": "string", "maxLength": 200}, {"$ref": "#/$defs/x"}],
        "$defs": {"x": {"type": "string", "maxLength": 200}},
    }
    assert bounded({"type": ["string", "null"], "description": "d"}) == {
        "anyOf": [
            {"type": "string", "description": "d", "maxLength": 200},
            {"type": "null", "description": "d"},
        ]
    }


def test_an_unanchored_pattern_is_left_to_validation():
    assert bounded({"type": "string", "pattern": "[a-z]+"}) == {"type": "string", "maxLength": 200}
    assert bounded({"pattern": "[a-z]+"}) == {"type": "string", "maxLength": 200}
    assert bounded({"type": "string", "pattern": "^[a-z]+$"}) == {
        "type": "string",
        "pattern": "^[a-z]+$",
        "maxLength": 200,
    }


def test_an_untyped_property_becomes_any_value_and_the_rest_stays_typed():
    schema = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "default": {"description": "Any value."}, "x": {}},
    }
    assert bounded(schema) == {
        "type": "object",
        "properties": {"key": {"type": "string", "maxLength": 200}, "default": ANY_VALUE, "x": ANY_VALUE},
    }


@pytest.mark.parametrize(
    ("text", "closing"),
    [
        ('{"name": "f", "arguments": {"a": 1}', "}"),  # a bare call
        ('```json\n{\n  "name": "f",\n  "arguments": {"a": 1}', "}\n```"),  # a fenced one
        ('<tool_call>\n{"name": "f", "arguments": {"a": 1}', "}\n</tool_call>"),
        ('```\n<tool_call>{"name": "f", "arguments": {}', "}\n</tool_call>\n```"),
        ('<tool_call>{"name": "g", "arguments": {}}</tool_call>\n{"name": "f", "arguments": {}', "}"),
        ('```json\n{"name": "g", "arguments": {}}\n```\n```json\n{"name": "f", "arguments": {}', "}\n```"),
    ],
)
def test_a_constrained_call_is_closed_by_what_opened_it(text: str, closing: str):
    assert call_closing(text, "<tool_call>") == closing


# --- compiled by llama.cpp ----------------------------------------------------------------------


def arguments_grammar(parameters: dict):
    tool = Tool.from_schema("f", "F.", parameters, lambda **kwargs: None)
    grammars = GrammarCache().for_arguments(json.dumps(call_schema([tool])), "tiny")
    return grammars["f"]


@needs_vocabulary
def test_a_string_argument_is_bounded_by_its_schema_or_the_default():
    grammar = arguments_grammar(
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string", "maxLength": 3}}}
    )
    assert accepts(grammar, '{"a": "' + "x" * 200 + '"}')
    assert not accepts(grammar, '{"a": "' + "x" * 201 + '"}')
    assert accepts(grammar, '{"b": "abc"}')
    assert not accepts(grammar, '{"b": "abcd"}')
    assert not accepts(grammar, '{"a": "Metal, Country, dontcare, dontcare"}}')  # nothing after the object


@needs_vocabulary
def test_an_array_argument_is_bounded():
    grammar = arguments_grammar(
        {"type": "object", "properties": {"n": {"type": "array", "items": {"type": "integer"}}}}
    )
    assert accepts(grammar, '{"n": [' + ", ".join(["1"] * 16) + "]}")
    assert not accepts(grammar, '{"n": [' + ", ".join(["1"] * 17) + "]}")


@needs_vocabulary
def test_numbers_are_bounded_by_llama_cpps_digits():
    grammar = arguments_grammar({"type": "object", "properties": {"x": {"type": "number"}}})
    assert accepts(grammar, '{"x": 5.0000000000000001}')  # 16 digits after the point
    assert not accepts(grammar, '{"x": 5.00000000000000001}')  # 17
    assert not accepts(grammar, '{"x": 12345678901234567}')  # 17 before it


@needs_vocabulary
def test_a_tool_with_an_untyped_property_keeps_its_grammar():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not constrained" warning
        grammar = arguments_grammar(
            {
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {"description": "Any."}},
                "required": ["key"],
            }
        )
    for value in ['"x"', "1.5", "true", "null", '[1, "a"]', '{"k": "v"}']:
        assert accepts(grammar, '{"key": "k", "value": ' + value + "}"), value
    assert not accepts(grammar, '{"key": 1, "value": 1}')  # the typed property stays typed
    assert not accepts(grammar, '{"value": 1}')  # and required


@needs_llama_cpp
def test_a_schema_llama_cpp_cannot_express_is_said_once_and_left_free():
    tools = [
        Tool.from_schema(
            "odd", "O.", {"type": "object", "properties": {"a": {"$ref": "https://example.com/a"}}}, print
        ),
        Tool.from_schema("fine", "F.", {"type": "object", "properties": {"a": {"type": "string"}}}, print),
    ]
    cache = GrammarCache()
    with pytest.warns(UserWarning) as caught:
        grammars = cache.for_arguments(json.dumps(call_schema(tools)), "tiny")
    assert list(grammars) == ["fine"]
    assert [str(w.message) for w in caught] == [
        "The arguments of the tool 'odd' are not constrained: llama.cpp cannot convert their schema"
        " (AssertionError: Fetching remote schemas is not allowed (use --allow-fetch for force))."
        " Its calls are written freely"
        " and validated as usual; plain JSON Schema types (string, number, integer, boolean, array,"
        " object) can be constrained."
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(cache.for_arguments(json.dumps(call_schema(tools)), "tiny")) == ["fine"]  # said once
