"""Spellings of one place in rules: a deny or ask rule matches every spelling of the place it names,
an allow rule none that leaves it, and a value with no one reading matches deny and ask, never allow."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb.agent.rules import Rule, RuleError, Rules

ALLOW_SCRATCH = ("allow", 1, "allowed by rule 1 (delete_file path=scratch/**)")
DENY_KEEP = ("deny", 2, "denied by rule 2 (delete_file path=keep/**)")


def verdict(rules, tool, **arguments):
    found = rules.decide(tool, arguments)
    return None if found is None else (found.action, found.number, found.reason)


@pytest.mark.parametrize(
    "value",
    [
        "scratch/..%2fsecrets.txt",
        "scratch/..%2Fsecrets.txt",
        "scratch/..%5csecrets.txt",
        "scratch/..%5Csecrets.txt",
        "scratch/..\uff0fsecrets.txt",  # a full-width solidus
        "scratch/..\uff3csecrets.txt",  # a full-width reverse solidus
        "scratch/..\u2215secrets.txt",  # a division slash
        "scratch/..%252fsecrets.txt",  # encoded twice
        "scratch/..%25252fsecrets.txt",  # three times
        "scratch/..\uff05\uff12\uff46secrets.txt",  # a full-width '%2f'
        "scratch/..\x00/secrets.txt",  # a NUL, which C cuts a path at
        "scratch/.\x00./secrets.txt",
        "scratch%2f..%2f..%2fetc/passwd",
        "scratch/a/..%2f..%2f..%2fetc/passwd",
    ],
)
def test_an_encoded_or_look_alike_separator_after_dot_dot_does_not_escape_an_allow_glob(value):
    rules = Rules(["delete_file path=scratch/** -> allow"])
    assert verdict(rules, "delete_file", path=value) is None


@pytest.mark.parametrize(
    "value",
    [
        "scratch/a.txt",
        "./scratch/a.txt",
        "scratch//a.txt",
        "scratch/./a.txt",
        "scratch/a%2fb.txt",  # read either way, a place inside scratch/
        "scratch/sub/a.txt",
        "scratch/caf\u00e9.txt",
        unicodedata.normalize("NFD", "scratch/caf\u00e9.txt"),
    ],
)
def test_an_allow_glob_still_allows_plain_spellings_of_places_inside_it(value):
    rules = Rules(["delete_file path=scratch/** -> allow"])
    assert verdict(rules, "delete_file", path=value) == ALLOW_SCRATCH


KEEP_SPELLINGS = [
    "keep/a.txt",
    "keep/../keep/a.txt",
    "./keep/a.txt",
    "other/../keep/a.txt",
    "keep//a.txt",
    "keep/./a.txt",
    " keep/a.txt",
    "keep%2fa.txt",
    "keep%2Fa.txt",
    "keep%252fa.txt",
    "%6Beep/a.txt",
    "%256beep/a.txt",
    "keep\\a.txt",
    "keep%5ca.txt",
    "keep\uff0fa.txt",
    "\uff4b\uff45\uff45\uff50/a.txt",  # full-width letters
    "KEEP/A.TXT",  # the same file on a case-insensitive disk
    "keep./a.txt",  # Windows drops a name's trailing dots and spaces
    "keep /a.txt",
    "keep/a.txt.",
]


@pytest.mark.parametrize("order", ["allow first", "deny first"])
@pytest.mark.parametrize("value", KEEP_SPELLINGS)
def test_a_deny_glob_denies_every_spelling_of_a_place_in_it_whatever_the_order(value, order):
    texts = ["delete_file -> allow", "delete_file path=keep/** -> deny"]
    rules = Rules(texts if order == "allow first" else texts[::-1])
    number = 2 if order == "allow first" else 1
    assert verdict(rules, "delete_file", path=value) == (
        "deny",
        number,
        f"denied by rule {number} (delete_file path=keep/**)",
    )


@pytest.mark.parametrize("kind", ["glob", "set", "regex"])
def test_the_absolute_spelling_of_a_place_inside_the_working_directory_is_denied(kind, tmp_path, monkeypatch):
    home = tmp_path / "home"
    project = home / "proj"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    pattern = {"glob": "keep/**", "set": '{"keep/a.txt"}', "regex": r"re:keep/[a-z]+\.txt"}[kind]
    rules = Rules(["delete_file -> allow", f"delete_file path={pattern} -> deny"])
    denied = ("deny", 2, f"denied by rule 2 (delete_file path={pattern})")
    for value in [
        f"{project}/keep/a.txt",
        f"{project}//keep/./a.txt",
        f"{home}/x/../proj/keep/a.txt",
        "~/proj/keep/a.txt",
        f"{project}%2fkeep%2fa.txt",
    ]:
        assert verdict(rules, "delete_file", path=value) == denied, value
    # outside the working directory, or only alike: the allow decides
    allowed = ("allow", 1, "allowed by rule 1 (delete_file)")
    for value in [f"{tmp_path}/keep/a.txt", f"{project}-old/keep/a.txt", "/keep/a.txt"]:
        assert verdict(rules, "delete_file", path=value) == allowed, value
    # an allow rule never matches the absolute spelling: it is not the place as written
    assert (
        verdict(Rules(["delete_file path=keep/** -> allow"]), "delete_file", path=f"{project}/keep/a.txt")
        is None
    )


@pytest.mark.parametrize("value", ["./keep/a.txt", "keep/../keep/a.txt", "keep%2fa.txt", "KEEP/a.txt"])
def test_an_ask_glob_asks_about_every_spelling(value):
    rules = Rules(["delete_file -> allow", "delete_file path=keep/** -> ask"])
    assert verdict(rules, "delete_file", path=value) == (
        "ask",
        2,
        "asked by rule 2 (delete_file path=keep/**)",
    )


@pytest.mark.parametrize(
    "value",
    [
        "notes.txt\x00",  # a NUL
        "notes\x1b.txt",  # an escape
        "notes%00.txt",  # a NUL, encoded
        "notes%ff.txt",  # not UTF-8 once decoded
        "notes%2525252525.txt",  # still encoded after 4 rounds
        "../notes.txt",  # climbs above where it starts
        "a/../../notes.txt",
        "a/.../notes.txt",  # a name of only dots and spaces
        "a/.. /notes.txt",
        "a/. ./notes.txt",
        "notes\ud800.txt",  # a lone surrogate (JSON may carry one): no UTF-8 spelling, and RE2 takes UTF-8
    ],
)
def test_a_value_with_no_normal_form_matches_every_deny_and_ask_pattern_and_no_allow(value):
    for pattern in ["keep/**", "{keep/a.txt}", '"keep/a.txt"', "re:keep/.*"]:
        deny = Rules([f"delete_file path={pattern} -> deny"])
        ask = Rules([f"delete_file path={pattern} -> ask"])
        assert verdict(deny, "delete_file", path=value) == (
            "deny",
            1,
            f"denied by rule 1 (delete_file path={pattern})",
        )
        assert verdict(ask, "delete_file", path=value) == (
            "ask",
            1,
            f"asked by rule 1 (delete_file path={pattern})",
        )
    for pattern in ["**", "re:.*"]:
        assert verdict(Rules([f"delete_file path={pattern} -> allow"]), "delete_file", path=value) is None


def test_text_with_tabs_and_newlines_has_a_normal_form():
    text = "Dear Ada,\n\tsee you at 10/12.\r\n"
    assert verdict(Rules(["send body=** -> allow"]), "send", body=text) == (
        "allow",
        1,
        "allowed by rule 1 (send body=**)",
    )
    assert verdict(Rules(["send body=*secret* -> deny"]), "send", body=text) is None


def test_nfc_and_nfd_spellings_are_the_same_name_in_values_and_in_globs():
    nfc, nfd = "caf\u00e9", unicodedata.normalize("NFD", "caf\u00e9")
    assert nfc != nfd
    for glob, value in [(nfc, nfd), (nfd, nfc)]:
        rules = Rules([f"delete_file path={glob}/** -> deny"])
        assert verdict(rules, "delete_file", path=f"{value}/menu.txt")[0] == "deny"
        allow = Rules([f"delete_file path={glob}/** -> allow"])
        assert verdict(allow, "delete_file", path=f"{value}/menu.txt")[0] == "allow"


@pytest.mark.parametrize("glob", ["./keep/**", "keep//**", "keep\\**", "keep%2f**", "KEEP/**"])
def test_a_glob_is_put_in_the_same_normal_form_as_the_values(glob):
    rules = Rules([f"delete_file path={glob} -> deny"])
    assert verdict(rules, "delete_file", path="keep/a.txt") == (
        "deny",
        1,
        f"denied by rule 1 (delete_file path={glob})",
    )


def test_a_deny_set_or_exact_value_denies_every_spelling_and_an_allow_one_only_the_value_as_written():
    deny = Rules(
        ["delete_file path={secrets.txt,keys/id.pem} -> deny", 'delete_file path="notes.txt" -> ask']
    )
    for value in ["./secrets.txt", "SECRETS.TXT", "x/../keys/id.pem", "keys%2fid.pem", "keys\\id.pem"]:
        assert verdict(deny, "delete_file", path=value) == (
            "deny",
            1,
            "denied by rule 1 (delete_file path={secrets.txt,keys/id.pem})",
        )
    assert verdict(deny, "delete_file", path="./notes.txt") == (
        "ask",
        2,
        'asked by rule 2 (delete_file path="notes.txt")',
    )
    assert verdict(deny, "delete_file", path="keys/id.pem.bak") is None
    allow = Rules(["delete_file path={a.txt} -> allow", 'delete_file path="b.txt" -> allow'])
    assert verdict(allow, "delete_file", path="a.txt") == (
        "allow",
        1,
        "allowed by rule 1 (delete_file path={a.txt})",
    )
    assert verdict(allow, "delete_file", path="b.txt") == (
        "allow",
        2,
        'allowed by rule 2 (delete_file path="b.txt")',
    )
    for value in ["./a.txt", "A.TXT", "x/../b.txt", "b%2etxt"]:
        assert verdict(allow, "delete_file", path=value) is None


def test_a_deny_regex_matches_the_value_as_written_decoded_or_in_normal_form():
    rules = Rules(["delete_file -> allow", "delete_file path=re:keep/[a-z.]+ -> deny"])
    for value in ["keep/a.txt", "./keep/a.txt", "keep%2fa.txt", "x/../keep/a.txt", "keep\\a.txt"]:
        assert verdict(rules, "delete_file", path=value) == (
            "deny",
            2,
            "denied by rule 2 (delete_file path=re:keep/[a-z.]+)",
        )
    assert verdict(rules, "delete_file", path="KEEP/a.txt") == ("allow", 1, "allowed by rule 1 (delete_file)")
    url = Rules(["fetch -> allow", r"fetch url=re:https://evil\.example/.* -> deny"])
    assert verdict(url, "fetch", url="https:%2f%2fevil.example/x")[0] == "deny"  # decoded, '//' kept
    assert verdict(url, "fetch", url="https://good.example/x")[0] == "allow"


def test_lists_still_match_no_glob_set_or_regex_even_to_deny():
    rules = Rules(
        [
            "delete_file -> allow",
            "delete_file path=** -> deny",
            "delete_file path={a} -> deny",
            "delete_file path=re:.* -> deny",
        ]
    )
    assert verdict(rules, "delete_file", path=["keep/a.txt"]) == (
        "allow",
        1,
        "allowed by rule 1 (delete_file)",
    )
    assert verdict(rules, "delete_file", path={"a": 1}) == ("allow", 1, "allowed by rule 1 (delete_file)")


@pytest.mark.parametrize(
    ("glob", "why"),
    [
        ("a%ff/**", "its percent-encoding decodes to bytes that are not UTF-8"),
        ("a%2f%2e%2e%2f%2e%2e/**", "its '..' climbs above where it starts"),
        ("a%00/**", "it has a control character (such as NUL)"),
        ("a/.%20./**", "it has a name of only dots and spaces ('. .'), which systems read apart"),
    ],
)
def test_a_glob_that_cannot_be_read_as_one_place_is_refused_saying_why(glob, why):
    with pytest.raises(RuleError) as caught:
        Rule.parse(f"delete_file path={glob} -> deny")
    assert str(caught.value) == (
        f"Cannot read the rule 'delete_file path={glob} -> deny': the glob path={glob} cannot be read as one"
        f" place: {why}; write the place plainly (e.g. path=scratch/**), or quote the value to match exactly"
        f' that: path="{glob}".'
    )


def test_a_glob_holding_the_wildcards_private_characters_is_refused():
    with pytest.raises(RuleError) as caught:
        Rule.parse("t p=a\ue001 -> deny")
    assert str(caught.value) == (
        "Cannot read the rule 't p=a\\ue001 -> deny': the glob p=a\\ue001 has a private-use character"
        " (U+E000 to U+E002) that the rules use for its wildcards; to match a value that has one, quote"
        ' it: p="a\\ue001".'
    )


def test_a_huge_value_is_read_in_bounded_passes():
    rules = Rules(["t p=keep/** -> deny", "t p=scratch/** -> allow"])
    assert verdict(rules, "t", p="scratch/" + "a/" * 200_000 + "%25" * 200_000)[0] == "allow"
    assert verdict(rules, "t", p="scratch/" + "a/" * 200_000 + "../" * 200_001 + "keep/x")[0] == "deny"
    assert verdict(rules, "t", p="scratch/" + "%2525" * 100_000 + "%252e%252e%252f" * 2)[0] == "allow"


# Respellings of a path, for the properties below: each separator, each '..' and each character
# spelled one of the ways a reader may take for the same one.
SEPARATORS = [
    "/",
    "\\",
    "//",
    "/./",
    "%2f",
    "%2F",
    "%5c",
    "%5C",
    "\uff0f",
    "\uff3c",
    "%252f",
    "%255C",
    "\u2215",
]
DOTS = ["..", "%2e%2e", "%2E.", ".%2e", "\uff0e\uff0e", "%252e%252e", "\uff0e."]
NAMES = [
    "a.txt",
    "b",
    "notes",
    "caf\u00e9",
    "x y",
    ".env",
    "data.tar.gz",
    "\u00dcn\u00ef",
    "r\u00e9sum\u00e9.pdf",
]


def respell_name(draw, name: str, *, case: bool) -> str:
    if draw(st.booleans()):
        name = unicodedata.normalize("NFD", name)
    out = []
    for char in name:
        how = draw(st.sampled_from(["as is", "as is", "upper", "lower", "wide", "encoded", "encoded twice"]))
        if how in ("upper", "lower") and case:
            char = char.upper() if how == "upper" else char.lower()
        elif how == "wide" and "!" <= char <= "~":
            char = chr(ord(char) + 0xFEE0)
        elif how.startswith("encoded"):
            hexes = "".join(f"%{byte:02x}" for byte in char.encode())
            hexes = hexes.upper() if draw(st.booleans()) else hexes
            char = hexes.replace("%", "%25") if how == "encoded twice" else hexes
        out.append(char)
    return "".join(out) + (draw(st.sampled_from(["", ".", " ", ". "])) if case else "")


def respell(draw, segments: list[str], *, case: bool) -> str:
    out = [draw(st.sampled_from(["", "", "./", ".\\", "%2e/"]))]
    for i, segment in enumerate(segments):
        if i:
            out.append(draw(st.sampled_from(SEPARATORS)))
        if segment == "..":
            out.append(draw(st.sampled_from(DOTS)))
            continue
        if draw(st.integers(0, 3)) == 0:  # a detour: "zz/../" before the name
            out += [
                "zz",
                draw(st.sampled_from(SEPARATORS)),
                draw(st.sampled_from(DOTS)),
                draw(st.sampled_from(SEPARATORS)),
            ]
        out.append(respell_name(draw, segment, case=case))
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4))
def test_any_spelling_of_a_denied_place_is_denied(data, names):
    value = respell(data.draw, ["keep", *names], case=True)
    rules = Rules(["delete_file -> allow", "delete_file path=keep/** -> deny"])
    assert verdict(rules, "delete_file", path=value) == DENY_KEEP, value


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    inside=st.lists(st.sampled_from(NAMES), max_size=3),
    extra=st.integers(1, 2),
    outside=st.lists(st.sampled_from(NAMES), min_size=1, max_size=2),
)
def test_no_spelling_of_a_place_outside_scratch_is_allowed_by_its_glob(data, inside, extra, outside):
    segments = [*inside, *[".."] * (len(inside) + extra), *outside]
    value = "scratch/" + respell(data.draw, segments, case=False)  # the way out is in the respelled part
    assert verdict(Rules(["delete_file path=scratch/** -> allow"]), "delete_file", path=value) is None, value


@settings(max_examples=200, deadline=None)
@given(data=st.data(), names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))
def test_plain_spellings_of_a_place_inside_scratch_are_allowed(data, names):
    separator = data.draw(st.sampled_from(["/", "//", "/./"]))
    value = data.draw(st.sampled_from(["", "./"])) + separator.join(["scratch", *names])
    value = unicodedata.normalize(data.draw(st.sampled_from(["NFC", "NFD"])), value)
    assert (
        verdict(Rules(["delete_file path=scratch/** -> allow"]), "delete_file", path=value) == ALLOW_SCRATCH
    )
