"""Exact secrets (an MCP server's tokens) are masked in every form a careless echo writes them in.

The oracle is an attacker's: the secret must not be readable from the masked text as it is,
percent-decoded, or base64-decoded from any starting character in either alphabet. The property
test's oracle (`decoded`) goes further: it reads the text through the standard library's own
decoders (``unquote``, ``unquote_plus``, ``html.unescape``, ``json``), up to three in a row in any
order, then base64 from any starting character; its encoder escapes each character of a secret
its own way (percent in either hex case, JSON, HTML), a secret's base64 too.
"""

from __future__ import annotations

import base64
import binascii
import html
import html.entities
import itertools
import json
import re
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb.mcp.config import redact
from meowgent_nb.recording import Mask


def readable(secret: str, text: str) -> bool:
    data = secret.encode()
    if secret in text or secret in unquote(text) or secret in unquote_plus(text):
        return True
    for alphabet in (text, text.replace("-", "+").replace("_", "/")):
        for start in range(4):
            window = alphabet[start:]
            try:  # characters outside the alphabet (a mask's stars) are dropped, as a lenient decoder does
                decoded = base64.b64decode(window + "=" * (-len(window) % 4), validate=False)
            except (binascii.Error, ValueError):
                continue
            if data in decoded:
                return True
    return False


secrets = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=12, max_size=40)
around = st.binary(max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    secret=secrets,
    before=around,
    after=around,
    form=st.sampled_from(["plain", "percent", "plus", "b64", "urlsafe"]),
)
def test_a_secret_is_unreadable_in_any_written_form_after_masking(secret, before, after, form):
    whole = before + secret.encode() + after
    text = {
        "plain": before.hex() + secret + after.hex(),
        "percent": quote(whole.decode("latin-1"), safe=""),
        "plus": quote_plus(whole.decode("latin-1")),
        "b64": base64.b64encode(whole).decode(),
        "urlsafe": base64.urlsafe_b64encode(whole).decode(),
    }[form]
    assert readable(secret, text)  # the oracle sees it before masking
    masked = Mask(secrets=[secret]).string(text)
    assert not readable(secret, masked), (text, masked)


def test_the_forms_of_a_token_in_one_echo_and_an_errors_redaction_are_the_same_masking():
    token = "access-1-5isTUkYqBFwVKOh-"
    header = f"Bearer {token}"
    echo = f"{header} | {base64.b64encode(header.encode()).decode()} | {quote(header)}"
    assert Mask(secrets=[token]).string(echo) == "Bearer *** | QmVhcmVyIG***0= | Bearer%20***"
    assert redact(echo, {token}) == "Bearer *** | QmVhcmVyIG***0= | Bearer%20***"
    assert redact("a key abc and abcd", {"abc", "abcd"}) == "a key abc and ***"  # 3 characters: not masked


def test_a_secret_is_masked_through_percent_json_and_html_escapes_in_any_case_and_mixture():
    secret = "s3cr3t/T0ken+with=odd~chars and space"
    mask = Mask(secrets=[secret])
    written = [
        "s3cr3t%2fT0ken%2bwith%3dodd%7echars%20and%20space",  # lowercase hex
        "s3cr3t%2FT0ken%2bwith%3Dodd~chars+and+space",  # mixed case, + for a space
        "s3cr3t\\/T0ken\\u002Bwith\\u003dodd~chars and\\u0020space",  # JSON: \/ and \\uXXXX
        "s3cr3t&#47;T0ken&plus;with&#x3D;odd&#X7e;chars&#32;and&nbsp space".replace("&nbsp ", "&#0032;"),
        "s3cr3t&sol;T0ken%2B&#119;ith\\u003dodd~chars and space",  # escapes mixed in one secret
    ]
    assert [mask.string(f"<{text}>") for text in written] == ["<***>"] * 5
    # One layer is read through, not two: a text encoded twice is left (documented).
    assert mask.string("s3cr3t%252FT0ken") == "s3cr3t%252FT0ken"


def test_html_reads_128_to_159_as_windows_1252_and_so_does_the_mask():
    assert Mask(secrets=["price\u20ac\u2026 1000"]).string("price&#128;&#x85; 1000!") == "***!"


# --- the property: any secret, any encoding, in any text ----------------------------------------

SYNTAX = {"%": "percent", "+": "percent", "&": "html", "\\": "json"}  # written in their own escape
_SHORT = {char: json.dumps(char)[1:-1] for char in '"\\\b\f\n\r\t'} | {"/": "\\/"}
_NAMES: dict[str, list[str]] = {}
for _name, _value in html.entities.html5.items():
    if _name.endswith(";") and len(_value) == 1:
        _NAMES.setdefault(_value, []).append(_name)


def _cased(text: str, upper: list[bool]) -> str:
    return "".join(c.upper() if u else c.lower() for c, u in zip(text, itertools.cycle(upper or [True])))


def escaped(char: str, family: str, data) -> str:
    """``char`` escaped in ``family``, each choice (hex case, leading zeros, names) drawn from ``data``."""
    if family == "percent":
        if char == " " and data.draw(st.booleans()):
            return "+"
        upper = data.draw(st.lists(st.booleans(), min_size=1, max_size=4))
        return "".join("%" + _cased(f"{byte:02x}", upper) for byte in char.encode())
    if family == "json":
        if char in _SHORT and data.draw(st.booleans()):
            return _SHORT[char]
        units = char.encode("utf-16-be")
        upper = data.draw(st.lists(st.booleans(), min_size=1, max_size=4))
        return "".join("\\u" + _cased(units[i : i + 2].hex(), upper) for i in range(0, len(units), 2))
    # HTML: only the references html.unescape (as a browser) reads as this character.
    codes = [code for code in (ord(char), *range(0x80, 0xA0)) if html.unescape(f"&#{code};") == char]
    choices = [f"&#{'0' * zeros}{code};" for code in codes for zeros in (0, 2)]
    choices += [f"&#{x}{_cased(f'{code:x}', [u])};" for code in codes for x in "xX" for u in (True, False)]
    choices += [f"&{name}" for name in _NAMES.get(char, [])]
    return data.draw(st.sampled_from(choices)) if choices else char


def written(text: str, data, families: list[str]) -> str:
    """``text`` with each character as it is or escaped in one of ``families`` (its own for `SYNTAX`)."""
    out = []
    for char in text:
        family = SYNTAX.get(char) or data.draw(st.sampled_from(["as it is", *families]))
        out.append(char if family == "as it is" else escaped(char, family, data))
    return "".join(out)


def json_unescaped(text: str) -> str:
    return re.sub(r'(?:\\u[0-9a-fA-F]{4})+|\\["\\/bfnrt]', lambda m: json.loads(f'"{m.group()}"'), text)


DECODERS = (unquote, unquote_plus, html.unescape, json_unescaped)


def decoded(secret: str, text: str) -> bool:
    """Whether ``secret`` can be read from ``text`` by up to three decoders in a row, then base64."""
    data, seen, layer = secret.encode(), {text}, {text}
    for _ in range(3):
        layer = {decode(t) for t in layer for decode in DECODERS} - seen
        seen |= layer
    for candidate in seen:
        if secret in candidate:
            return True
        for alphabet in (candidate, candidate.replace("-", "+").replace("_", "/")):
            kept = re.sub(r"[^A-Za-z0-9+/]", "", alphabet)  # what a lenient decoder keeps
            for start in range(4):
                window = kept[start:]
                if len(window) % 4 == 1:  # a lone last character carries no whole byte
                    window = window[:-1]
                if data in base64.b64decode(window + "=" * (-len(window) % 4)):
                    return True
    return False


plain = st.text(
    st.characters(whitelist_categories=("L", "N", "Zs"), whitelist_characters="-_.:/"), max_size=6
)
any_secret = st.text(st.characters(blacklist_categories=("Cs",)), min_size=4, max_size=24)


@settings(max_examples=300, deadline=None)
@given(secret=any_secret, before=plain, after=plain, data=st.data())
def test_any_secret_in_any_encoding_in_any_text_is_unreadable_after_masking(secret, before, after, data):
    families = data.draw(st.lists(st.sampled_from(["percent", "json", "html"]), min_size=1, unique=True))
    if len(secret) >= 12 and data.draw(st.booleans()):  # base64 (BASE64_MIN), at any alignment, escaped too
        whole = before.encode() + secret.encode() + after.encode()
        encode = data.draw(st.sampled_from([base64.b64encode, base64.urlsafe_b64encode]))
        text = written(encode(whole).decode(), data, families)
    else:
        text = before + written(secret, data, families) + after
    assert decoded(secret, text), text  # the oracle reads it before masking
    masked = Mask(secrets=[secret]).string(text)
    assert not decoded(secret, masked), (text, masked)
