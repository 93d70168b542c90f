"""The rule language: reading rules, what each pattern matches, deny wins, and hostile rules."""

from __future__ import annotations

import enum
import time
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb.agent.rules import Rule, RuleError, Rules, rule_text_for

HOW = "write a rule as TOOL ARG=PATTERN ... -> allow|ask|deny, e.g. delete_file path=scratch/** -> allow"


def verdict(rules, tool, **arguments):
    found = rules.decide(tool, arguments)
    return None if found is None else (found.action, found.number, found.reason)


def test_a_rule_reads_back_to_its_text_and_names_its_parts():
    rule = Rule.parse('  delete_file   path=scratch/**  mode={fast,"very slow"} ->   allow ')
    assert rule.tool == "delete_file"
    assert [(name, p.kind, p.source) for name, p in rule.patterns] == [
        ("path", "glob", "scratch/**"),
        ("mode", "set", '{fast,"very slow"}'),
    ]
    assert rule.text == 'delete_file path=scratch/** mode={fast,"very slow"} -> allow'
    assert Rule.parse(rule.text) == Rule.parse(rule.text)
    assert Rule.parse(rule.text).text == rule.text


@pytest.mark.parametrize(
    ("value", "matches"),
    [
        ("scratch/a.txt", True),
        ("scratch/deep/er/a.txt", True),
        ("scratch/", True),
        ("scratch", False),
        ("other/scratch/a.txt", False),
        ("/scratch/a.txt", False),
        ("scratch/../secrets.txt", False),
        ("scratch/a/../../etc/passwd", False),
        ("scratch\\..\\secrets.txt", False),
        ("scratch/%2e%2e/secrets.txt", False),
        ("scratch/\uff0e\uff0e/secrets.txt", False),  # full-width dots: '..' once normalized
        ("scratch/.. /secrets.txt", False),  # Windows drops the trailing space
        ("scratch/.../x", False),
        ("scratch/..hidden", True),  # a name that begins with dots is no parent folder
        ("scratch/a..b", True),
        (PurePosixPath("scratch/p.txt"), True),
        (["scratch/a.txt"], False),  # a list matches no glob
        (None, False),
    ],
)
def test_a_globstar_matches_below_its_folder_and_never_a_dot_dot_segment(value, matches):
    rules = Rules(["delete_file path=scratch/** -> allow"])
    expected = ("allow", 1, "allowed by rule 1 (delete_file path=scratch/**)") if matches else None
    assert verdict(rules, "delete_file", path=value) == expected


@pytest.mark.parametrize(
    ("value", "matches"),
    [("a.txt", True), ("dir/a.txt", False), ("dir\\a.txt", False), (".txt", True), ("a.txt.bak", False)],
)
def test_a_star_stays_inside_one_segment(value, matches):
    assert (Rules(["t p=*.txt -> deny"]).decide("t", {"p": value}) is not None) is matches


def test_values_are_matched_by_their_text_numbers_and_bools_as_json():
    class Colour(enum.Enum):
        RED = "red"

    rules = Rules(["t n={1,2} b=true c=red -> allow"])
    assert verdict(rules, "t", n=2, b=True, c=Colour.RED) == (
        "allow",
        1,
        "allowed by rule 1 (t n={1,2} b=true c=red)",
    )
    assert verdict(rules, "t", n=3, b=True, c="red") is None
    assert verdict(rules, "t", n=1, b=False, c="red") is None
    assert verdict(rules, "t", n=1, b=True) is None  # an argument the rule names must be there


def test_a_regex_matches_the_whole_value():
    rules = Rules([r"send to=re:[a-z]+@example\.org -> allow"])
    assert verdict(rules, "send", to="ada@example.org") == (
        "allow",
        1,
        r"allowed by rule 1 (send to=re:[a-z]+@example\.org)",
    )
    assert verdict(rules, "send", to="ada@example.org.evil.com") is None
    assert verdict(rules, "send", to="x ada@example.org") is None
    quoted = Rules(['send to=re:"[a-z]+ [a-z]+" -> deny'])
    assert verdict(quoted, "send", to="ada lovelace")[0] == "deny"


def test_quoted_values_are_exact_and_may_hold_anything():
    rules = Rules(['open path="scratch/../my file*.txt" -> allow'])
    assert verdict(rules, "open", path="scratch/../my file*.txt")[0] == "allow"  # quoted: exact, no glob
    assert verdict(rules, "open", path="scratch/../my file1.txt") is None


def test_deny_wins_over_ask_and_allow_whatever_the_order():
    rules = Rules(
        [
            "delete_file -> allow",
            "delete_file path=scratch/** -> ask",
            "delete_file path=scratch/keep/** -> deny",
            "delete_file path=scratch/** -> allow",
        ]
    )
    assert verdict(rules, "delete_file", path="scratch/keep/x") == (
        "deny",
        3,
        "denied by rule 3 (delete_file path=scratch/keep/**)",
    )
    assert verdict(rules, "delete_file", path="scratch/x") == (
        "ask",
        2,
        "asked by rule 2 (delete_file path=scratch/**)",
    )
    assert verdict(rules, "delete_file", path="notes.txt") == ("allow", 1, "allowed by rule 1 (delete_file)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", f"Cannot read the rule '': it is empty; {HOW}."),
        (
            "delete_file path=scratch/**",
            "Cannot read the rule 'delete_file path=scratch/**': it does not say what"
            f" to do; end it with -> allow, -> ask or -> deny ({HOW}).",
        ),
        (
            "delete_file path=x -> maybe",
            f"Cannot read the rule 'delete_file path=x -> maybe': after '->' comes allow,"
            f" ask or deny, not 'maybe'; {HOW}.",
        ),
        (
            "delete_file path -> allow",
            "Cannot read the rule 'delete_file path -> allow': 'path' is not ARG=PATTERN;"
            " each argument is written as its name, '=' and a pattern (a glob like scratch/**, re:REGEX, a set {a,b},"
            f" or a quoted exact value); {HOW}.",
        ),
        (
            "delete_file path= -> allow",
            "Cannot read the rule 'delete_file path= -> allow': path= has no pattern;"
            ' to match an empty value write path="".',
        ),
        (
            "delete_file path=a path=b -> allow",
            "Cannot read the rule 'delete_file path=a path=b -> allow': the"
            " argument 'path' has two patterns; give each argument one.",
        ),
        (
            "delete_file path={a,b -> allow",
            "Cannot read the rule 'delete_file path={a,b -> allow': the set"
            " path={...} has no closing '}' after 'b'; write it as path={a,b}.",
        ),
        (
            "delete_file path=a{b,c} -> allow",
            "Cannot read the rule 'delete_file path=a{b,c} -> allow': the glob"
            " path=a{b,c} has a '{' inside it; quote a value that has one as a JSON string (path=\"a{b,c}\"), and"
            " write a set as the whole value: path={a,b}.",
        ),
        (
            "delete_file path=../** -> allow",
            "Cannot read the rule 'delete_file path=../** -> allow': the glob"
            " path=../** has a '..' segment, which a glob cannot have (a value's '..' is resolved before it is"
            ' matched); to match exactly that value, quote it: path="../**".',
        ),
        (
            'delete_file path="abc -> allow',
            "Cannot read the rule 'delete_file path=\"abc -> allow': path= begins a"
            " quoted value that does not end properly (Unterminated string starting at); quote values as JSON"
            ' strings: "my file.txt", with \\" for a quote inside.',
        ),
        (
            "delete-file! -> allow",
            "Cannot read the rule 'delete-file! -> allow': 'delete-file!' is not a tool name"
            f" (letters, digits, '_', '-' and '.', starting with a letter or '_'); {HOW}.",
        ),
    ],
)
def test_a_malformed_rule_is_an_error_naming_it_and_how_to_write_it(text, message):
    with pytest.raises(RuleError) as caught:
        Rule.parse(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "regex",
    [r"(a)\1", r"(?=a)a", r"(?!a).", r"(?<=a)b", r"(a+)+\1"],
)
def test_a_regex_that_can_take_catastrophic_time_is_refused(regex):
    with pytest.raises(RuleError) as caught:
        Rule.parse(f"t p=re:{regex} -> allow")
    assert str(caught.value).startswith(
        f"Cannot read the rule 't p=re:{regex} -> allow': the regex p=re:{regex} is"
    )
    assert "RE2, which matches in time linear in the value and so refuses backreferences" in str(caught.value)


def test_a_nested_quantifier_runs_in_linear_time_instead_of_backtracking():
    rules = Rules(["t p=re:(a+)+b -> deny", "t p=*a*a*a*a*a*a*a*a*a*a*b -> deny"])
    started = time.perf_counter()
    assert rules.decide("t", {"p": "a" * 100_000 + "c"}) is None  # Python's re takes years on this
    assert time.perf_counter() - started < 1.0


def test_a_look_alike_tool_name_is_refused_naming_the_character():
    with pytest.raises(RuleError) as caught:
        Rule.parse("d\u0435lete_file -> allow")  # a Cyrillic 'е'
    assert str(caught.value) == (
        "Cannot read the rule 'd\u0435lete_file -> allow': the tool name 'd\u0435lete_file' has '\u0435' (U+0435"
        " CYRILLIC SMALL LETTER IE); tool names are plain ASCII, so a look-alike letter would make a rule that"
        " matches nothing. Type the name again in ASCII."
    )
    with pytest.raises(RuleError) as caught:
        Rule.parse("delete\u200b_file -> deny")
    assert str(caught.value).startswith(
        "Cannot read the rule 'delete\\u200b_file -> deny': the tool name 'delete\\u200b_file' has '\\u200b'"
        " (U+200B ZERO WIDTH SPACE)"
    )


def test_a_rule_naming_no_tool_is_warned_about_with_the_near_matches():
    rules = Rules(["delete_flie -> allow", "frobnicate -> deny", "list_files -> allow"])
    assert rules.unknown_tools(["delete_file", "list_files"]) == [
        "the rule 'delete_flie -> allow' names no tool here: there is no tool 'delete_flie'; did you mean delete_file?",
        "the rule 'frobnicate -> deny' names no tool here: there is no tool 'frobnicate' (the tools are:"
        " delete_file, list_files)",
    ]


def test_a_rule_naming_an_argument_the_tool_does_not_take_is_warned_about():
    from meowgent_nb import tool

    @tool
    def delete_file(path: str, force: bool = False) -> None:
        """Delete."""

    rules = Rules(
        [
            "delete_file pth=secrets/** -> deny",
            "delete_file force=true verbose=true -> deny",
            "delete_file path=x -> deny",
        ]
    )
    assert rules.unknown_tools([delete_file]) == [
        "the rule 'delete_file pth=secrets/** -> deny' never matches: delete_file takes no argument 'pth'; did you"
        " mean path?",
        "the rule 'delete_file force=true verbose=true -> deny' never matches: delete_file takes no argument"
        " 'verbose' (it takes: path, force)",
    ]


def test_huge_rules_are_refused_with_the_bound():
    with pytest.raises(RuleError) as caught:
        Rule.parse("t p=" + "a" * 3000 + " -> allow")
    assert str(caught.value).endswith(": it is 3,013 characters long; a rule may have at most 2,000.")
    with pytest.raises(
        RuleError, match=r"the pattern of p= is 1,001 characters long; a pattern may have at most 1,000"
    ):
        Rule.parse("t p=re:" + "a" * 1001 + " -> allow")
    rules = Rules()
    for n in range(1000):
        rules.add(f"t{n} -> deny")
    with pytest.raises(RuleError) as caught:
        rules.add("one_more -> deny")
    assert (
        str(caught.value) == "Cannot add the rule 'one_more -> deny': an agent may have at most 1,000 rules."
    )


def test_rules_are_numbered_from_one_and_removed_by_number():
    rules = Rules(["a -> allow", "b -> deny", "c -> ask"])
    assert [(n, rule.text) for n, rule, _ in rules.numbered()] == [
        (1, "a -> allow"),
        (2, "b -> deny"),
        (3, "c -> ask"),
    ]
    assert rules.remove(2).text == "b -> deny"
    assert [rule.text for rule in rules] == ["a -> allow", "c -> ask"]
    assert verdict(rules, "c") == ("ask", 2, "asked by rule 2 (c)")
    with pytest.raises(RuleError) as caught:
        rules.remove(3)
    assert (
        str(caught.value) == "There is no rule 3: the rules are numbered 1 to 2. List them with %agent rules."
    )


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "scratch/a b.txt"},
        {"path": 'quote"and\\backslash', "count": 3, "flag": True, "nothing": None},
        {"path": "caf\u00e9/\u200bhidden -> allow", "tags": ["a", "b"], "opts": {"k": 1, "j": [None]}},
        {"path": Path("scratch/p.txt"), "ratio": 0.5},
        {"path": "*", "other": "{a,b}", "r": "re:x", "j": "json:1"},
        {},
    ],
)
def test_rule_text_for_a_call_matches_exactly_that_call(arguments):
    text = rule_text_for("delete_file", arguments)
    rule = Rule.parse(text)
    assert rule.text == text
    assert rule.matches("delete_file", arguments)
    for name, value in arguments.items():
        changed = {**arguments, name: [value] if not isinstance(value, list) else [*value, "x"]}
        assert not rule.matches("delete_file", changed)
    assert not rule.matches("delete_files", arguments)


def test_rule_text_for_writes_values_as_a_person_reads_them():
    assert rule_text_for("delete_file", {"path": "scratch/a.txt", "force": False, "n": 2}) == (
        'delete_file path="scratch/a.txt" force=json:false n=json:2 -> allow'
    )


_SEGMENT = st.text(alphabet="ab.*?-_", min_size=0, max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    glob=st.lists(
        st.sampled_from(["*", "**", "?", "a", "b", "scratch", "*.txt", "x*"]), min_size=1, max_size=5
    ),
    before=st.lists(_SEGMENT, max_size=3),
    after=st.lists(_SEGMENT, max_size=3),
    dots=st.sampled_from(["..", "...", "%2e%2e", "%2E.", "\uff0e\uff0e", ".. ", "..\t"]),
    separator=st.sampled_from(["/", "\\"]),
)
def test_no_glob_ever_matches_a_value_with_a_dot_dot_segment(glob, before, after, dots, separator):
    rules = Rules([f"t p={'/'.join(glob)} -> allow"])
    value = separator.join([*before, dots, *after])
    assert rules.decide("t", {"p": value}) is None


_PATTERNS = st.sampled_from(["**", "*", "a*", "{a,b}", "re:.*", "re:a.*", '"a"', "scratch/**", "json:1"])


@settings(max_examples=200, deadline=None)
@given(
    rules=st.lists(
        st.tuples(
            st.sampled_from(["allow", "ask", "deny"]),
            st.lists(st.tuples(st.sampled_from(["p", "q"]), _PATTERNS), max_size=2, unique_by=lambda x: x[0]),
        ),
        min_size=1,
        max_size=6,
    ),
    p=st.sampled_from(["a", "b", "ab", "scratch/x", "1", 1, "z"]),
    q=st.sampled_from(["a", "b", 1, True]),
)
def test_deny_wins_whenever_a_deny_rule_matches(rules, p, q):
    texts = [
        " ".join(["t", *(f"{name}={pattern}" for name, pattern in patterns), "->", action])
        for action, patterns in rules
    ]
    found = Rules(texts).decide("t", {"p": p, "q": q})
    matching = [Rule.parse(text) for text in texts if Rule.parse(text).matches("t", {"p": p, "q": q})]
    actions = {rule.action for rule in matching}
    expected = "deny" if "deny" in actions else "ask" if "ask" in actions else "allow" if actions else None
    assert (found.action if found else None) == expected
    if expected is not None:
        assert found.rule == next(rule for rule in matching if rule.action == expected)
