"""The one redaction helper: exact secrets in any form they are written in, and URL credentials."""

from __future__ import annotations

import pytest

from meowgent_nb._redact import address_credentials, redact, reveals, shown_address, without_credentials


@pytest.mark.parametrize(
    "address, shown, credentials",
    [
        ("http://user:secret@gpu:8000/v1", "http://gpu:8000/v1", "user:secret"),
        ("user:pw@host:11434", "host:11434", "user:pw"),  # OLLAMA_HOST may leave out the scheme
        ("https://u:p@ss@box/v1", "https://box/v1", "u:p@ss"),  # to the last "@" before the path
        ("http://box/users/@me", "http://box/users/@me", None),  # an "@" in the path is not a login
        ("http://@box", "http://box", None),
        ("127.0.0.1:11434", "127.0.0.1:11434", None),
    ],
)
def test_an_address_is_shown_without_its_credentials(address, shown, credentials):
    assert (shown_address(address), address_credentials(address)) == (shown, credentials)


def test_urls_in_text_lose_their_credentials_and_nothing_else():
    text = "Log in as alice:pw@box, see 1https://bob:hunter22@example.com/x or mail carol@example.com"
    assert without_credentials(text) == (
        "Log in as alice:pw@box, see 1https://example.com/x or mail carol@example.com"
    )


def test_a_secret_is_hidden_as_it_is_and_escaped():
    key = "sk-a/b c"
    text = "sk-a/b c, sk-a%2Fb+c, sk-a\\/b\\u0020c, sk-a&sol;b&#32;c, sk-a/bc"
    assert redact(text, [key], "[key]") == "[key], [key], [key], [key], sk-a/bc"
    assert redact(text, ["", key]) == "***, ***, ***, ***, sk-a/bc"
    assert (reveals(text, [key]), reveals("sk-a/bc", [key]), reveals("anything", [])) == (True, False, False)
    assert redact("a\\1", ["a"], "\\g<0>") == "\\g<0>\\1"  # the replacement is taken literally
