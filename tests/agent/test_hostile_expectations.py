"""Expectations are untrusted input (a notebook's metadata sets them): whatever the text, reading
it ends soon in an `Expectation` or one `ExpectationError`, never a MemoryError, a RecursionError
or a hang; and checking a run with one ends soon too, whatever its regexes.

Each class of hostile input is tested past its bound just over it, far over it, and at sizes that
made the reader before the bounds raise a bare MemoryError or RecursionError, or take minutes.
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb import Agent, AutoApprove, ScriptedModel, tool
from meowgent_nb.agent.expectations import (
    SYNTAX,
    ExpectationError,
    Regex,
    check_expectation,
    parse_expectation,
    value_matches,
)

TOO_LONG = (
    "The expectation is {n:,} characters long; one may have at most 2,000: name the calls that matter,"
    " and match a long value with a glob ('Par*'), a regex ('re:...') or *."
)
TOO_DEEP = (
    "The expectation nests more than 20 levels deep here (brackets, operators or dotted names): write it"
    " flatter, or match a deep value with * (any value)."
)
RE2 = (
    "Regexes run on RE2, which matches in time linear in the value and so refuses backreferences (\\1)"
    " and lookaround ((?=...), (?!...)), the features that can take catastrophic time; write the pattern"
    " without them"
)


def refusal(text: str) -> ExpectationError:
    with pytest.raises(ExpectationError) as error:
        parse_expectation(text)
    return error.value


def message(problem: str, text: str, start: int, end: int) -> str:
    return f"{problem}\n  {text}\n  {' ' * start}{'^' * (end - start)}\n{SYNTAX}"


# --- length --------------------------------------------------------------------------------------

LONG = 20_000  # the old reader: MemoryError for unary runs, RecursionError for chains, minutes for calls


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a(x='" + "x" * 10_000_000 + "')", id="a 10 MB string"),
        pytest.param("a(x=" + "9" * LONG + ")", id="a huge number"),
        pytest.param("a(x=" + "-" * LONG + "1)", id="a run of unary minus"),
        pytest.param("a(x=" + "not " * LONG + "1)", id="a run of not"),
        pytest.param("a(x=" + "1+" * LONG + "1)", id="a chain of binary operators"),
        pytest.param("a" + ".a" * LONG, id="a chain of dotted names"),
        pytest.param("a(x=" + "(" * LONG + "1" + ")" * LONG + ")", id="parentheses"),
        pytest.param("a(x=" + "[" * LONG + "]" * LONG + ")", id="lists"),
        pytest.param(", ".join(["a"] * 5000), id="many calls"),
        pytest.param(" then ".join(["a(x='\r\n')"] * 400), id="many steps with line breaks"),
    ],
)
def test_an_expectation_longer_than_the_bound_is_refused_before_it_is_read(text):
    shown = text[:60].replace("\r", " ").replace("\n", " ") + " ..."
    error = refusal(text)
    assert str(error) == message(TOO_LONG.format(n=len(text)), shown, 0, len(shown))
    assert (error.text, error.start, error.end) == (shown, 0, len(shown))


def test_an_expectation_as_long_as_the_bound_is_read():
    text = "a(x='" + "x" * 1993 + "')"
    assert len(text) == 2000
    (step,) = parse_expectation(text).steps
    assert step[0].arguments == (("x", "x" * 1993),)
    assert str(refusal(text + " ")).splitlines()[0] == TOO_LONG.format(n=2001)


def test_an_expectation_that_is_no_text_is_shown_short():
    error = refusal(list(range(100_000)))
    assert str(error).splitlines()[0] == ("An expectation is text, got list [0, 1, 2, 3, 4, 5, ...].")


# --- nesting -------------------------------------------------------------------------------------

# (text around the nesting, one level, the leaf, the column where level 21 begins): the call is
# the first level.
NESTINGS = {
    "parentheses": ("a(x={})", "({})", "1", lambda: 4 + 19),
    "lists": ("a(x={})", "[{}]", "1", lambda: 4 + 19),
    "dicts": ("a(x={})", "{{'k': {}}}", "1", lambda: 4 + 19 * 6),
    "brackets of every kind": ("a(x={})", "([{{{}}}])", "1", lambda: 4 + 19),
    "unary minus": ("a(x={})", "-{}", "1", lambda: 4 + 19),
    "unary plus": ("a(x={})", "+{}", "1", lambda: 4 + 19),
    "inversion": ("a(x={})", "~{}", "1", lambda: 4 + 19),
    "not": ("a(x={})", "not {}", "1", lambda: 4 + 19 * 4),
    "a chain of binary operators": ("a(x={})", "{}+1", "1", lambda: 4),
    "a chain of powers": ("a(x={})", "1**{}", "1", lambda: 4 + 19 * 3),
    "subscripts": ("a(x={})", "{}[0]", "b", lambda: 4),
    "conditionals": ("a(x={})", "1 if 1 else {}", "1", lambda: 4 + 19 * 12),
    "lambdas": ("a(x={})", "lambda: {}", "1", lambda: 4 + 19 * 8),
    "dotted names": ("{}()", "{}.a", "a", lambda: 0),
    "calls of calls": ("{}()", "{}()", "a", lambda: 0),
}


def nested(name: str, levels: int) -> str:
    around, level, leaf, _ = NESTINGS[name]
    inner = leaf
    for _ in range(levels):
        inner = level.format(inner)
    return around.format(inner)


def most_levels(name: str) -> int:
    """The most levels of ``name`` that fit in 2,000 characters."""
    around, level, leaf, _ = NESTINGS[name]
    return (2000 - len(around.format(leaf))) // (len(level.format("")))


@pytest.mark.parametrize("name", NESTINGS)
@pytest.mark.parametrize("how_deep", ["just over", "as deep as fits"])
def test_an_expectation_nested_deeper_than_the_bound_is_refused_marking_where(name, how_deep):
    # The call's own level counts, so 20 levels more pass the bound by one.
    text = nested(name, 20 if how_deep == "just over" else most_levels(name))
    at = NESTINGS[name][3]()
    error = refusal(text)
    assert str(error) == message(TOO_DEEP, text, at, at + 1)


def test_an_expectation_nested_as_deep_as_the_bound_is_read():
    (step,) = parse_expectation(nested("lists", 19)).steps
    value = dict(step[0].arguments)["x"]
    for _ in range(19):
        (value,) = value
    assert value == 1


def test_python_s_parser_giving_up_deep_in_a_stack_is_the_same_refusal():
    # Python's parser counts the caller's frames: a kernel deep in a stack gets a RecursionError
    # from a text that a shallow caller reads.
    text = "a(x=" + "-" * 1990 + "1)"

    def deep(frames: int) -> ExpectationError:
        return deep(frames - 1) if frames else refusal(text)

    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    error = deep(sys.getrecursionlimit() - depth - 60)
    assert str(error) == message(TOO_DEEP, text, 0, len(text))


# Each wraps what it is given in one level (an operator's operand in parentheses, so that no
# precedence flattens two levels into one).
LEVELS = st.sampled_from(
    [
        "[{}]",
        "({},)",
        "{{'k': {}}}",
        "-({})",
        "+({})",
        "~({})",
        "not ({})",
        "({})+1",
        "1+({})",
        "f({})",
        "({})[0]",
        "({}).a",
        "lambda: ({})",
        "1 if 1 else ({})",
        "({})**2",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LEVELS, min_size=20, max_size=120))
def test_twenty_levels_of_any_kinds_nested_in_a_call_are_refused_as_too_deep(levels):
    inner = "1"
    for level in levels:
        inner = level.format(inner)
    text = f"a(x={inner})"
    problem = str(refusal(text)).splitlines()[0]
    assert problem == (TOO_DEEP if len(text) <= 2000 else TOO_LONG.format(n=len(text)))


@settings(max_examples=200, deadline=None)
@given(st.lists(LEVELS, max_size=19))
def test_fewer_levels_are_read_or_refused_for_what_they_say_not_for_their_depth(levels):
    inner = "1"
    for level in levels:
        inner = level.format(inner)
    try:
        parse_expectation(f"a(x={inner})")
    except ExpectationError as error:
        assert str(error).splitlines()[0] not in (TOO_DEEP, TOO_LONG)


# --- regexes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("regex", "detail"),
    [
        ("(a)\\1", "invalid escape sequence: \\1"),
        ("(?P<x>a)(?P=x)", "invalid perl operator: (?P"),
        ("(?=a)a", "invalid perl operator: (?="),
        ("(?!a)b", "invalid perl operator: (?!"),
        ("(?<=a)b", "invalid perl operator: (?<="),
        ("[\\pL\\pN]{1000}[\\pL\\pN]{1000}[\\pL\\pN]{1000}", "pattern too large - compile failed"),
    ],
)
def test_a_regex_that_could_take_catastrophic_time_is_refused_when_read(regex, detail):
    text = f"a(x={'re:' + regex!r})"
    error = refusal(text)
    problem = f"The regular expression {regex!r} cannot be run: {detail}. {RE2}."
    assert str(error) == message(problem, text, 4, len(text) - 1)


@tool
def search(q: str) -> str:
    """Search."""
    return "nothing"


def test_a_regex_that_backtracks_for_ever_in_python_checks_a_run_at_once():
    sent = "a" * 5000 + "!"
    said = json.dumps({"name": "search", "arguments": {"q": sent}})
    model = ScriptedModel([f"<tool_call>{said}</tool_call>", "Done."])
    result = Agent(model, tools=[search], approver=AutoApprove()).run("Go.")
    verdict = check_expectation("search(q='re:(a+)+b'), ...", result)
    assert verdict.met is False
    assert verdict.line == f"Expectation not met: call 1 search had q='{'a' * 36}..., expected q='re:(a+)+b'."


@pytest.mark.parametrize(
    ("regex", "value", "matches"),
    [
        (".*", "a\ud800", True),  # a lone surrogate (JSON may carry one) is read as U+FFFD
        ("a.", "a\ud800", True),
        ("a\ufffd", "a\udfff", True),
        ("a", "a\ud800", False),
        pytest.param("(a|aa)+", "a" * 100_000, True, id="(a|aa)+ of 100,000 a"),
        ("\\d+", "\u0663", False),  # RE2's \d, \w and \s are ASCII
    ],
)
def test_a_regex_matches_any_string_value_in_linear_time(regex, value, matches):
    assert value_matches(Regex(regex), value) is matches
