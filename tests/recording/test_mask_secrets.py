"""Exact secrets (an MCP server's tokens) are masked in every form a careless echo writes them in.

The oracle is an attacker's: the secret must not be readable from the masked text as it is,
percent-decoded, or base64-decoded from any starting character in either alphabet.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb.mcp.config import redact
from meowgent_nb.recording._mask import Mask


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
@given(secret=secrets, before=around, after=around, form=st.sampled_from(["plain", "percent", "plus", "b64", "urlsafe"]))
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
