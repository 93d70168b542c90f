"""Expected calls: the language (read with ast, never run) and the check against real runs.

Runs are real `Agent` runs on a `ScriptedModel`: the check reads what the run did (its calls, the
validated arguments, the outcomes, how it ended), never what it said.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent_nb import Agent, AutoApprove, DenyAll, ScriptedModel, tool
from meowgent_nb.agent.expectations import (
    ANY,
    SYNTAX,
    Expectation,
    ExpectationError,
    ExpectationNotMet,
    ExpectedCall,
    Regex,
    acts_of,
    check_expectation,
    parse_expectation,
    value_matches,
)
from meowgent_nb.agent.rules import Rules
from tests.support.tool_calls import call


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return f"21 degrees in {city}"


@tool
def count(n: int) -> int:
    """Count."""
    return n


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def search(q: str) -> str:
    """Search."""
    return "nothing"


def run(*turns: str, approver=None, max_turns: int = 8):
    agent = Agent(
        ScriptedModel(list(turns)),
        tools=[get_weather, count, delete_file, search],
        approver=approver or AutoApprove(),
        max_turns=max_turns,
    )
    return agent.run("Go.")


PARIS_THEN_DELETE = "get_weather(city='Paris') then delete_file(path='old.txt')"
RE2 = (
    "Regexes run on RE2, which matches in time linear in the value and so refuses backreferences (\\1)"
    " and lookaround ((?=...), (?!...)), the features that can take catastrophic time; write the pattern"
    " without them"
)


# --- reading -------------------------------------------------------------------------------------


def test_an_expectation_reads_as_steps_of_calls_an_allowance_and_an_end():
    read = parse_expectation(
        "get_weather(city='Par*') then delete_file(path='old.txt') -> ok, search, ... then answered"
    )
    assert read == Expectation(
        (
            (ExpectedCall("get_weather", (("city", "Par*"),), None, "get_weather(city='Par*')"),),
            (
                ExpectedCall("delete_file", (("path", "old.txt"),), "ok", "delete_file(path='old.txt')"),
                ExpectedCall("search", (), None, "search"),
            ),
        ),
        others=True,
        end="answered",
        source="get_weather(city='Par*') then delete_file(path='old.txt') -> ok, search, ... then answered",
    )


def test_values_are_literals_globs_regexes_or_any_also_nested():
    (step,) = parse_expectation(
        "'read-file'(a=*, b='*', c='re:\\d+', d=[1, *], e={'k': 're:x|y'}, f=-2.5, g=None)"
    ).steps
    (only,) = step
    assert only.tool == "read-file"
    values = dict(only.arguments)
    assert values["a"] is ANY and values["b"] is ANY and values["d"][1] is ANY
    assert values["c"] == Regex(r"\d+") and values["e"]["k"] == Regex("x|y")
    assert (values["d"][0], values["f"], values["g"]) == (1, -2.5, None)


def test_nothing_in_an_expectation_is_run():
    # A call a careless reader might evaluate: it is read as text, and a name is no value.
    with pytest.raises(ExpectationError) as error:
        parse_expectation("get_weather(city=__import__('os').system('touch /tmp/pwned'))")
    assert (
        str(error.value)
        .splitlines()[0]
        .startswith("__import__('os').system('touch /tmp/pwned') is not a value")
    )


@pytest.mark.parametrize(
    ("text", "problem", "marked"),
    [
        (
            "get_weather('Paris')",
            "Name each argument: write tool(name=value); a value without its name is not read.",
            (12, 19),
        ),
        ("a then", "The expectation ends with a separator: name a call after it, or remove it.", (2, 6)),
        (", a", "The expectation begins with a separator: name a call first.", (0, 1)),
        ("a,,b", "Nothing between two separators: name a call there.", (2, 3)),
        (
            "a(x=foo)",
            "foo is not a value: write a literal ('Paris', 3, True, None, [1, 2], {'a': 1}) or * for any value.",
            (4, 7),
        ),
        ("a(x=1", "'(' is never closed.", (1, 5)),
        ("a(x=[1, 2)", "An unmatched ')'.", (9, 10)),
        ("a(x='1)", "Cannot read a string that is never closed here.", (4, 7)),
        (
            "a -> maybe",
            "Unknown outcome 'maybe': write -> ok, -> error or -> denied (or timeout, invalid_arguments, unknown_tool, parse_error).",
            (5, 10),
        ),
        (
            "a then ... then b",
            "'...' allows calls not named anywhere in the run: write it once, last, as ', ...' (A then B, ...).",
            (7, 10),
        ),
        (
            "answered then a",
            "'answered' says how the run ended: put it last, alone (A then answered); a tool named so is written answered().",
            (0, 8),
        ),
        ("a(x=1, x=2)", "'x' is given twice.", (7, 10)),
        ("a(**k)", "Write each argument as name=value (no **).", (2, 5)),
        ("a(x='re:(')", f"The regular expression '(' cannot be run: missing ): (. {RE2}.", (4, 10)),
        ("   ", "The expectation is empty: name the calls the run should make.", (0, 3)),
        (
            "3(x=1)",
            "A call begins with the tool's name: get_weather(city='Paris'), or 'read-file'(path='a') for a name that is no Python name.",
            (0, 1),
        ),
        ("a # then b", "'#' has no place in an expectation (quote a value that has one).", (2, 10)),
        (
            "a(x=1) b(y=2)",
            "Cannot read 'a(x=1) b(y=2)' as a call: invalid syntax (two calls are joined by ', ' or ' then ').",
            (7, 8),
        ),
        ("a(x=1) -> ok -> ok", "A call has one outcome: write tool(...) -> ok.", (13, 15)),
        (
            "a(x='é', y=foo)",
            "foo is not a value: write a literal ('Paris', 3, True, None, [1, 2], {'a': 1}) or * for any value.",
            (11, 14),
        ),
    ],
)
def test_an_expectation_that_cannot_be_read_says_what_marks_where_and_shows_the_syntax(text, problem, marked):
    with pytest.raises(ExpectationError) as error:
        parse_expectation(text)
    start, end = marked
    assert str(error.value) == f"{problem}\n  {text}\n  {' ' * start}{'^' * (end - start)}\n{SYNTAX}"
    assert (error.value.start, error.value.end) == marked


def test_an_expectation_that_is_no_text_is_an_error():
    with pytest.raises(ExpectationError) as error:
        parse_expectation(["get_weather"])
    assert str(error.value).splitlines()[0] == "An expectation is text, got list ['get_weather']."


# --- values --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ("Paris", "Paris", True),
        ("Paris", "paris", False),
        ("Par*", "Paris", True),
        ("Par*", "Berlin", False),
        ("data[1].csv", "data[1].csv", True),  # a literal with glob characters still matches itself
        # The approval rules' glob dialect (agent.patterns): * stays within a path segment, ** crosses,
        # [ is itself (no character classes).
        ("*.txt", "notes/a.txt", False),
        ("*.txt", "notes\\a.txt", False),
        ("**.txt", "notes/a.txt", True),
        ("notes/*", "notes/a.txt", True),
        ("notes/?.txt", "notes/a.txt", True),
        ("data[12].csv", "data1.csv", False),
        ("data[*].csv", "data[1].csv", True),
        ("P?ris", 1, False),
        (Regex(r"\d+"), "123", True),
        (Regex(r"\d+"), "123a", False),  # the whole value
        (Regex(r"\d+"), 123, False),
        (ANY, None, True),
        (True, 1, False),
        (1, True, False),
        (1, 1.0, True),
        (None, 0, False),
        ([1, ANY], [1, "x"], True),
        ([1, ANY], [1, "x", 2], False),
        ({"a": "x*"}, {"a": "xy"}, True),
        ({"a": "x*"}, {"a": "xy", "b": 1}, False),
    ],
)
def test_a_value_matches_exactly_as_a_glob_as_a_regex_or_any(expected, actual, matches):
    assert value_matches(expected, actual) is matches


# --- checked against real runs -------------------------------------------------------------------


def test_a_met_expectation_is_one_line():
    result = run(call("get_weather", city="Paris"), call("delete_file", path="old.txt"), "Done.")
    verdict = check_expectation(PARIS_THEN_DELETE + " then answered", result)
    assert verdict.met is True
    assert str(verdict) == f"Expectation met: {PARIS_THEN_DELETE} then answered (2 calls, answered)."
    verdict.raise_if_unmet()


def test_a_missing_call_fails_showing_both_side_by_side():
    verdict = check_expectation(PARIS_THEN_DELETE, run(call("get_weather", city="Paris"), "Done."))
    assert str(verdict) == (
        "Expectation not met: delete_file(path='old.txt') was not called.\n"
        "       expected                     actual\n"
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok  ✓\n"
        "  2    delete_file(path='old.txt')  -                                  ✗ missing\n"
        "  end  (any)                        answered                           ✓"
    )


def test_a_wrong_argument_fails_naming_it():
    result = run(call("get_weather", city="London"), call("delete_file", path="old.txt"), "Done.")
    assert str(check_expectation(PARIS_THEN_DELETE, result)) == (
        "Expectation not met: call 1 get_weather had city='London', expected city='Paris'.\n"
        "       expected                     actual\n"
        "  1    get_weather(city='Paris')    1 get_weather(city='London') -> ok   ✗ wrong city\n"
        "  2    delete_file(path='old.txt')  2 delete_file(path='old.txt') -> ok  ✓\n"
        "  end  (any)                        answered                             ✓"
    )


def test_a_wrong_order_fails_marking_both():
    result = run(call("delete_file", path="old.txt"), call("get_weather", city="Paris"), "Done.")
    assert str(check_expectation(PARIS_THEN_DELETE, result)) == (
        "Expectation not met: call 1 delete_file came before call 2 get_weather, expected the other order.\n"
        "       expected                     actual\n"
        "  1    get_weather(city='Paris')    2 get_weather(city='Paris') -> ok    ✗ out of order\n"
        "  2    delete_file(path='old.txt')  1 delete_file(path='old.txt') -> ok  ✗ out of order\n"
        "  end  (any)                        answered                             ✓"
    )
    # In any order (a comma), the same run meets it.
    assert check_expectation("get_weather(city='Paris'), delete_file(path='old.txt')", result).met


def test_an_extra_call_fails_unless_the_calls_end_with_dots():
    result = run(
        call("get_weather", city="Paris"), call("search", q="x"), call("delete_file", path="old.txt"), "Done."
    )
    assert str(check_expectation(PARIS_THEN_DELETE, result)) == (
        "Expectation not met: call 2 search(q='x') -> ok was not expected (end the calls with ', ...' to allow others).\n"
        "       expected                     actual\n"
        "  1    get_weather(city='Paris')    1 get_weather(city='Paris') -> ok    ✓\n"
        "  2    delete_file(path='old.txt')  3 delete_file(path='old.txt') -> ok  ✓\n"
        "       -                            2 search(q='x') -> ok                ✗ not expected\n"
        "  end  (any)                        answered                             ✓"
    )
    assert check_expectation(PARIS_THEN_DELETE + ", ...", result).met
    assert not check_expectation(
        "get_weather(city='Paris') then delete_file(path='old.txt') then search, ...", result
    ).met


def test_the_check_reads_validated_arguments_defaults_and_as_sent():
    result = run(call("count", n="17"), call("get_weather", city="Oslo"), "Done.")
    assert [(a.arguments, a.sent) for a in acts_of(result)] == [
        ({"n": 17}, {"n": "17"}),
        ({"city": "Oslo", "unit": "celsius"}, {"city": "Oslo"}),
    ]
    assert check_expectation("count(n=17) then get_weather(unit='celsius')", result).met
    assert check_expectation("count(n='17') then get_weather(city='O*')", result).met
    assert not check_expectation("count(n=18) then get_weather(unit='fahrenheit')", result).met


def test_outcomes_and_ends():
    denied = run(call("delete_file", path="a"), "Not allowed.", approver=DenyAll("no"))
    assert check_expectation("delete_file(path='a') -> denied then answered", denied).met
    assert str(check_expectation("delete_file -> ok", denied)).splitlines()[0] == (
        "Expectation not met: call 1 delete_file ended denied, expected -> ok."
    )
    failed = run(call("count", n="many"), "Sorry.")
    assert check_expectation("count -> error", failed).met
    assert check_expectation("count -> invalid_arguments", failed).met
    assert not check_expectation("count -> denied", failed).met
    looping = run(*[call("search", q=str(n)) for n in range(4)], "never", max_turns=2)
    assert looping.stopped == "max_turns"
    assert check_expectation("search(q='0') then search(q='1') -> denied then stopped", looping).met
    assert check_expectation("search, search then max_turns", looping).met
    verdict = check_expectation("search, ... then answered", looping)
    assert verdict.line == "Expectation not met: the run ended max_turns, expected answered."
    assert verdict.table().splitlines()[-1] == "  end  answered  max_turns                  ✗ wrong end"


def test_no_calls_and_an_answer():
    result = run("Just words.")
    assert check_expectation("answered", result).met
    assert (
        str(check_expectation("search", result)).splitlines()[0]
        == "Expectation not met: search was not called."
    )


def test_an_unmet_expectation_raises_one_readable_line_and_the_table():
    verdict = check_expectation("search", run("Just words."))
    with pytest.raises(ExpectationNotMet) as error:
        verdict.raise_if_unmet()
    assert error.value._render_traceback_() == [
        "\x1b[31mExpectationNotMet\x1b[0m: Expectation not met: search was not called.",
        *verdict.table().splitlines(),
        "(the full traceback: %agent traceback)",
    ]


def test_a_step_takes_the_calls_that_fit_whatever_their_order_within_it():
    # The wildcard call could take either; the matching gives the exact one its own.
    result = run(call("count", n=1) + call("count", n=2), "Done.")
    assert check_expectation("count(n=*), count(n=1)", result).met
    assert check_expectation("count(n=1) then count(n=*)", result).met
    assert not check_expectation("count(n=2) then count(n=*)", result).met


# --- property tests ------------------------------------------------------------------------------

RESERVED = {"then", "answered", "stopped", "max_turns", "repeated_failure", "interrupted"}
NAMES = (
    st.text("abcdefgh_", min_size=1, max_size=8).map(lambda n: "t" + n).filter(lambda n: n not in RESERVED)
)
LITERALS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12).filter(lambda s: s != "*" and not s.startswith("re:")),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=4,
)
CALLS = st.tuples(
    NAMES, st.dictionaries(NAMES, LITERALS, max_size=2), st.sampled_from([None, "ok", "error", "denied"])
)
STEPS = st.lists(st.lists(CALLS, min_size=1, max_size=2), min_size=1, max_size=3)


def write(steps, others, end) -> str:
    def one(name, arguments, outcome):
        text = f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
        return text + (f" -> {outcome}" if outcome else "")

    text = " then ".join(", ".join(one(*c) for c in step) for step in steps)
    return text + (", ..." if others else "") + (f" then {end}" if end else "")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS, st.booleans(), st.sampled_from([None, "answered", "stopped"]))
def test_what_is_written_is_read_back(steps, others, end):
    read = parse_expectation(write(steps, others, end))
    assert [[(c.tool, dict(c.arguments), c.outcome) for c in step] for step in read.steps] == [
        [(name, arguments, outcome) for name, arguments, outcome in step] for step in steps
    ]
    assert (read.others, read.end) == (others, end)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab(),=*'\"[]{}-> .#:re\\0123then", max_size=40))
def test_any_text_is_read_or_refused_with_a_marked_part(text):
    try:
        parse_expectation(text)
    except ExpectationError as error:
        assert 0 <= error.start <= max(error.start, len(text))
        assert str(error).endswith(SYNTAX)


def test_expectations_and_rules_read_a_glob_as_one_dialect():
    rules = Rules(["f path=notes/*.txt -> allow"])
    for value in ("notes/a.txt", "notes/b/a.txt", "notes/[1].txt", "other/a.txt", "notes/.txt"):
        allowed = rules.decide("f", {"path": value}) is not None
        assert value_matches("notes/*.txt", value) is allowed, value
