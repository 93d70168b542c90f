"""BFCL's AST rules as `benchmarks._bfcl_score` applies them, on small hand-written cases."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks._bfcl_score import KINDS, bfcl_name, score, standardize
from meowgent_nb.testing import assert_system_prompt

GCD = {
    "name": "math.gcd",
    "description": "Greatest common divisor.",
    "parameters": {
        "type": "dict",
        "required": ["a", "b"],
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    },
}
AREA = {
    "name": "area",
    "description": "Area of a circle.",
    "parameters": {
        "type": "dict",
        "required": ["radius"],
        "properties": {
            "radius": {"type": "float"},
            "unit": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "dict", "properties": {"city": {"type": "string"}}},
            "flag": {"type": "boolean"},
        },
    },
}
GCD_ANSWER = [{"math.gcd": {"a": [12], "b": [18]}}]


def area_answer(**extra):
    possible = {"radius": [2.0], "unit": ["square meters", ""]}
    possible.update(extra)
    return [{"area": possible}]


def test_standardize_drops_spaces_punctuation_and_case():
    assert standardize("April 1, 2024") == "april12024"
    assert standardize("New_York-City/NY.*^") == "newyorkcityny"
    assert standardize("it's") == 'it"s'


def test_bfcl_name_writes_dots_as_underscores():
    assert bfcl_name("math.gcd") == "math_gcd"
    assert bfcl_name("get_weather") == "get_weather"


def test_simple_call_passes_with_the_dotted_name_written_either_way():
    assert score("simple", [GCD], [("math_gcd", {"a": 12, "b": 18})], GCD_ANSWER) == ""
    assert score("simple", [GCD], [("math.gcd", {"a": 12, "b": 18})], GCD_ANSWER) == ""


@pytest.mark.parametrize(
    ("calls", "kind"),
    [
        ([], "no call"),
        ([("area", {"radius": 2.0})], "wrong tool"),
        ([("math_gcd", {"a": 12})], "missing argument"),
        ([("math_gcd", {"a": 12, "b": 18, "c": 1})], "extra argument"),
        ([("math_gcd", {"a": "12", "b": 18})], "wrong type"),
        ([("math_gcd", {"a": True, "b": 18})], "wrong type"),
        ([("math_gcd", {"a": 12.0, "b": 18})], "wrong type"),
        ([("math_gcd", {"a": 12, "b": 19})], "wrong value"),
        ([("math_gcd", {"a": 12, "b": 18}), ("math_gcd", {"a": 1, "b": 2})], "extra calls"),
    ],
)
def test_simple_failure_kinds(calls, kind):
    assert score("simple", [GCD], calls, GCD_ANSWER) == kind


def test_unreadable_call_fails_except_in_irrelevance():
    assert score("live_simple", [GCD], [], GCD_ANSWER, unreadable=True) == "unreadable call"
    assert score("live_simple", [GCD], [("math_gcd", {"a": 12, "b": 18})], GCD_ANSWER, unreadable=True) == (
        "unreadable call"
    )
    assert score("irrelevance", [GCD], [], None, unreadable=True) == ""


def test_int_is_accepted_for_float_and_strings_are_normalised():
    assert score("simple", [AREA], [("area", {"radius": 2, "unit": "Square-Meters"})], area_answer()) == ""
    assert score("simple", [AREA], [("area", {"radius": 2, "unit": "feet"})], area_answer()) == "wrong value"


def test_optional_parameter_must_be_given_unless_marked_with_empty_string():
    assert score("simple", [AREA], [("area", {"radius": 2.0})], area_answer()) == ""
    required_unit = [{"area": {"radius": [2.0], "unit": ["meters"]}}]
    assert score("simple", [AREA], [("area", {"radius": 2.0})], required_unit) == "missing argument"


def test_parameter_outside_the_possible_answer_is_extra():
    calls = [("area", {"radius": 2.0, "flag": True})]
    assert score("simple", [AREA], calls, area_answer()) == "extra argument"


def test_lists_compare_item_by_item_after_normalising_and_check_item_types():
    answer = area_answer(tags=[["Red Car", "blue"]])
    assert score("simple", [AREA], [("area", {"radius": 2.0, "tags": ["red car", "Blue"]})], answer) == ""
    assert score("simple", [AREA], [("area", {"radius": 2.0, "tags": ["blue", "red car"]})], answer) == (
        "wrong value"
    )
    assert score("simple", [AREA], [("area", {"radius": 2.0, "tags": [1, 2]})], answer) == "wrong type"


@pytest.mark.parametrize(
    ("where", "kind"),
    [
        ({"city": "sf"}, ""),
        ({"city": "LA"}, "wrong value"),
        ({"town": "SF"}, "wrong value"),
        ({}, "wrong value"),
    ],
)
def test_dicts_compare_key_by_key(where, kind):
    answer = area_answer(where=[{"city": ["San Francisco", "SF"]}])
    assert score("simple", [AREA], [("area", {"radius": 2.0, "where": where})], answer) == kind


def test_a_string_answer_for_a_number_is_a_variable_compared_as_is():
    answer = [{"math.gcd": {"a": ["x"], "b": [18]}}]
    assert score("simple", [GCD], [("math_gcd", {"a": "x", "b": 18})], answer) == ""
    assert score("simple", [GCD], [("math_gcd", {"a": "X", "b": 18})], answer) == "wrong value"


def test_multiple_takes_the_one_expected_call_among_several_functions():
    answer = [{"area": {"radius": [2.0]}}]
    assert score("multiple", [GCD, AREA], [("area", {"radius": 2.0})], answer) == ""
    assert score("live_multiple", [GCD, AREA], [("math_gcd", {"a": 1, "b": 2})], answer) == "wrong tool"


def test_parallel_matches_each_expected_call_once_in_any_order():
    answer = [{"math.gcd": {"a": [45], "b": [60]}}, {"math.gcd": {"a": [81], "b": [63]}}]
    first, second = ("math_gcd", {"a": 45, "b": 60}), ("math_gcd", {"a": 81, "b": 63})
    assert score("parallel", [GCD], [second, first], answer) == ""
    assert score("parallel", [GCD], [first, first], answer) == "wrong value"
    assert score("parallel", [GCD], [first], answer) == "too few calls"
    assert score("parallel", [GCD], [first, second, first], answer) == "extra calls"


def test_parallel_multiple_reports_wrong_tool_only_when_no_call_names_the_expected_one():
    answer = [{"math.gcd": {"a": [45], "b": [60]}}, {"area": {"radius": [2.0]}}]
    gcd = ("math_gcd", {"a": 45, "b": 60})
    assert score("parallel_multiple", [GCD, AREA], [("area", {"radius": 2.0}), gcd], answer) == ""
    assert score("parallel_multiple", [GCD, AREA], [gcd, gcd], answer) == "wrong tool"
    assert score("parallel_multiple", [GCD, AREA], [gcd, ("area", {"radius": 3.0})], answer) == "wrong value"


def test_irrelevance_passes_without_a_call_and_relevance_with_one():
    assert score("live_irrelevance", [GCD], [], None) == ""
    assert score("irrelevance", [GCD], [("math_gcd", {"a": 1, "b": 2})], None) == "extra calls"
    assert score("live_relevance", [GCD], [("math_gcd", {})], None) == ""
    assert score("live_relevance", [GCD], [], None) == "no call"


def test_every_kind_returned_is_listed():
    assert set(KINDS) >= {"no call", "unreadable call", "wrong tool", "extra calls", "too few calls"}


# The runner's own parts, on a scripted model: no bfcl-eval and no real model needed.

PARALLEL_CASE = {
    "id": "own_parallel_0",
    "question": [
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "gcd of 45, 60 and 81, 63"}]
    ],
    "function": [GCD],
}
TWO_CALLS = (
    '<tool_call>{"name": "math_gcd", "arguments": {"a": 45, "b": 60}}</tool_call>\n'
    '<tool_call>{"name": "math_gcd", "arguments": {"a": 81, "b": 63}}</tool_call>'
)


def test_to_tool_translates_bfcl_types_and_names_as_its_openai_handler():
    from benchmarks.bfcl import to_tool

    tool = to_tool(AREA)
    properties = tool.parameters["properties"]
    assert tool.name == "area"
    float_note = " This is a float type value."
    assert properties["radius"] == {"type": "number", "format": "float", "description": float_note}
    assert properties["where"]["type"] == "object"
    assert properties["tags"] == {"type": "array", "items": {"type": "string"}}
    assert to_tool(GCD).name == "math_gcd"
    assert AREA["parameters"]["type"] == "dict"  # the case's own document is left as it was


def test_run_case_reads_every_call_of_the_first_turn_and_runs_none(monkeypatch):
    import benchmarks.bfcl as bfcl
    from meowgent_nb import ScriptedModel

    ran = []
    monkeypatch.setattr(bfcl, "_never_run", lambda **kw: ran.append(kw))
    model = ScriptedModel([TWO_CALLS, "done"])
    answer = [{"math.gcd": {"a": [81], "b": [63]}}, {"math.gcd": {"a": [45], "b": [60]}}]
    assert asyncio.run(bfcl.run_case(PARALLEL_CASE, answer, "parallel", model, "xml")) == ""
    assert ran == []
    assert len(model.requests) == 1
    assert_system_prompt(model, "Be brief.", request=0)


def test_run_case_scores_a_call_in_an_irrelevance_case_and_an_answer_without_one():
    import benchmarks.bfcl as bfcl
    from meowgent_nb import ScriptedModel

    model = ScriptedModel([TWO_CALLS, "I can't help with that."])
    assert asyncio.run(bfcl.run_case(PARALLEL_CASE, None, "live_irrelevance", model, "xml")) == "extra calls"
    model = ScriptedModel(["I can't help with that."])
    assert asyncio.run(bfcl.run_case(PARALLEL_CASE, None, "live_irrelevance", model, "xml")) == ""


def test_dump_writes_each_cases_result_calls_and_the_raw_answer():
    import io
    import json

    import benchmarks.bfcl as bfcl
    from meowgent_nb import ScriptedModel

    model = bfcl.Recording(ScriptedModel([TWO_CALLS, "done"]))
    dump = io.StringIO()
    answer = [{"math.gcd": {"a": [81], "b": [63]}}]  # one call expected: two are too many
    kind = asyncio.run(bfcl.run_case(PARALLEL_CASE, answer, "parallel", model, "xml", dump))
    assert kind == "extra calls"
    assert [json.loads(line) for line in dump.getvalue().splitlines()] == [
        {
            "id": PARALLEL_CASE["id"],
            "protocol": "xml",
            "kind": "extra calls",
            "calls": [["math_gcd", {"a": 45, "b": 60}], ["math_gcd", {"a": 81, "b": 63}]],
            "answer": TWO_CALLS,
        }
    ]
    assert model.name == model.model.name  # everything else is the recorded model's
