"""A served resource template gets one plain, decoded path segment per placeholder, whatever a
client sends: a real `ToolServer` read by the real `mcp` client."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import MCPError

from meowgent_nb import tool
from meowgent_nb.mcp import ToolServer, resource
from meowgent_nb.mcp.server.published import segment_problem
from tests.mcp.test_mcp_serve import client

GIVEN: list[str] = []


@resource("notes://{name}")
def note(name: str) -> str:
    """A note by its name."""
    GIVEN.append(name)
    return f"note {name}"


@resource("files://{folder}/{name}")
def file(folder: str, name: str) -> str:
    """A file in a folder."""
    GIVEN.append(f"{folder}|{name}")
    return f"file {folder}/{name}"


@resource("notes://dir/{name}")
def in_dir(name: str) -> str:
    """A note in the folder dir."""
    GIVEN.append(f"dir|{name}")
    return f"in dir {name}"


@tool
def ping() -> str:
    """Answers pong."""
    return "pong"


@pytest.fixture(scope="module")
def served():
    server = ToolServer([ping], resources=[note, file, in_dir])
    yield server
    server.stop()


def read(server: ToolServer, uri: str) -> tuple[str, str | int]:
    async def main():
        async with client(server) as mcp:
            try:
                result = await mcp.read_resource(uri)
            except MCPError as error:
                return "error", error.code, error.message
            return "ok", result.contents[0].text

    return asyncio.run(main())


SEPARATOR = "contains the path separator {!r}; give one name without separators"
FOLDER = "names a folder (. and .. are refused); give a name in it"


@pytest.mark.parametrize(
    ("uri", "value", "problem"),
    [
        ("notes://..%2Fsecret.txt", "../secret.txt", SEPARATOR.format("/")),
        ("notes://%2E%2E%2Fsecret.txt", "../secret.txt", SEPARATOR.format("/")),
        ("notes://%2e%2e%2f%2e%2e%2fetc%2fpasswd", "../../etc/passwd", SEPARATOR.format("/")),
        ("notes://%2Fetc%2Fpasswd", "/etc/passwd", SEPARATOR.format("/")),
        ("notes://..%5Csecret.txt", "..\\secret.txt", SEPARATOR.format("\\")),
        ("notes://%2E%2E", "..", FOLDER),
        ("notes://..", "..", FOLDER),
        ("notes://%2E", ".", FOLDER),
        ("notes://C%3A%5Cwindows", "C:\\windows", SEPARATOR.format("\\")),
        ("notes://C:secret", "C:secret", "is an absolute path (a drive letter); give one name"),
        ("notes://a%00.txt", "a\x00.txt", "contains the control character U+0000; give printable text"),
        ("notes://a%0Ab", "a\nb", "contains the control character U+000A; give printable text"),
        ("notes://a%C2%85b", "a\x85b", "contains the control character U+0085; give printable text"),
        (
            "notes://..%252Fsecret.txt",
            "..%2Fsecret.txt",
            "is still percent-encoded after decoding ('%2F': encoded twice); encode it once",
        ),
        (
            "notes://%252E%252E",
            "%2E%2E",
            "is still percent-encoded after decoding ('%2E': encoded twice); encode it once",
        ),
        ("files://..%2F../x", "..", FOLDER),
        (
            "notes://%EF%BC%8E%EF%BC%8E%EF%BC%8Fsecret",
            "\uff0e\uff0e\uff0fsecret",
            SEPARATOR.format("/"),
        ),  # fullwidth ../
        ("notes://%EF%BC%8E%EF%BC%8E", "\uff0e\uff0e", FOLDER),
    ],
)
def test_a_value_that_is_not_one_plain_segment_is_refused_naming_the_placeholder(served, uri, value, problem):
    GIVEN.clear()
    placeholder = "folder" if uri.startswith("files") else "name"
    assert read(served, uri) == (
        "error",
        -32602,
        f"{uri}: the value of {{{placeholder}}}, {value!r}, {problem}",
    )
    assert GIVEN == []


@pytest.mark.parametrize(
    ("uri", "text", "given"),
    [
        ("notes://groceries", "note groceries", "groceries"),
        ("notes://a%20b", "note a b", "a b"),
        ("notes://..hidden", "note ..hidden", "..hidden"),
        ("notes://100%25", "note 100%", "100%"),
        ("files://docs/readme.md", "file docs/readme.md", "docs|readme.md"),
        ("notes://dir/x", "in dir x", "dir|x"),  # {name} refuses "dir/x"; the template that takes it answers
        ("notes://dir%2Fx", "in dir x", "dir|x"),
    ],
)
def test_plain_segments_are_decoded_once_and_read(served, uri, text, given):
    GIVEN.clear()
    assert read(served, uri) == ("ok", text)
    assert [given] == GIVEN


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12))
def test_a_value_that_is_read_is_one_plain_segment(text):
    """Whatever a decoded value is, `match` gives it to the function only when it is one segment."""
    from urllib.parse import quote

    for uri in (
        f"notes://{quote(text, safe='')}",
        f"notes://{quote(quote(text, safe=''), safe='')}",
        f"notes://{text}",
    ):
        try:
            values = note.match(uri)
        except ValueError:
            continue
        if values is None:
            continue
        name = values["name"]
        assert "/" not in name and "\\" not in name and name not in (".", "..")
        assert segment_problem(name) is None
