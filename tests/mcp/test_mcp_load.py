"""`load_mcp_config`: a configuration file's servers started for real (stdio and streamable HTTP),
with ``${VAR}`` from the environment reaching them and never showing in any output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from meowgent_nb.mcp import load_mcp_config
from meowgent_nb.mcp.config import McpConfigError
from meowgent_nb.mcp.load import LoadedServers
from tests.mcp_servers.serving import http_server

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "annotated_server.py")
TOKEN = "tok_fake_5f3a9c1e7b2d"


def write(path: Path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_stdio_and_http_servers_load_with_their_variables_and_the_rest_is_reported(tmp_path):
    environ = {"MEOW_TOKEN": TOKEN, "WORK": str(tmp_path)}
    with http_server(SERVER, tmp_path) as url:
        path = write(
            tmp_path / "claude_desktop_config.json",
            {
                "mcpServers": {
                    "local": {
                        "command": sys.executable,
                        "args": [SERVER],
                        "env": {"SERVER_TOKEN": "${MEOW_TOKEN}"},
                        "cwd": "${WORK:-/}",
                    },
                    "web": {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${MEOW_TOKEN}"}},
                    "locked": {"url": url, "headers": {"Authorization": "Bearer ${MISSING_TOKEN}"}},
                    "gone": {"command": "/nonexistent/server", "args": ["--token", "${MEOW_TOKEN}"]},
                    "old": {"command": "old-server", "disabled": True},
                    "odd": {"command": sys.executable, "args": [SERVER], "alwaysAllow": ["search"]},
                }
            },
        )
        loaded = load_mcp_config(path, environ=environ, call_timeout=10)
        try:
            assert isinstance(loaded, LoadedServers) and list(loaded) == ["local", "web", "odd"]
            local, web = loaded["local"], loaded["web"]
            assert local["local_env_var"].run({"name": "SERVER_TOKEN"}) == f"set, {len(TOKEN)} characters"
            assert local["local_cwd"].run({}) == str(tmp_path)
            assert web["web_header"].run({"name": "Authorization"}) == f"present, {len(TOKEN) + 7} characters"
            assert loaded.failed == {
                "locked": "${MISSING_TOKEN} in headers.Authorization is not set in the environment; set it"
                " (in a notebook: %env MISSING_TOKEN=...) or give a default, ${MISSING_TOKEN:-default}",
                "gone": "could not connect to the MCP server 'gone' (/nonexistent/server --token ***):"
                " [Errno 2] No such file or directory: '/nonexistent/server'.\n"
                "Check the command, and that the server starts on its own in a terminal.",
            }
            assert loaded.summary() == (
                f"Loaded from {path}: local, web, odd\n"
                "Not loaded: locked: ${MISSING_TOKEN} in headers.Authorization is not set in the environment;"
                " set it (in a notebook: %env MISSING_TOKEN=...) or give a default, ${MISSING_TOKEN:-default}\n"
                "Not loaded: gone: could not connect to the MCP server 'gone' (/nonexistent/server --token ***):"
                " [Errno 2] No such file or directory: '/nonexistent/server'.\n"
                "    Check the command, and that the server starts on its own in a terminal.\n"
                "Disabled in the file: old\n"
                "Note: odd: ignored what this client does not use: 'alwaysAllow'"
            )
            shown = [
                loaded.summary(),
                repr(loaded),
                *map(repr, loaded.values()),
                *(b.target for b in loaded.values()),
            ]
            assert not [text for text in shown if TOKEN in text]
        finally:
            loaded.close()
        assert [box.connected for box in loaded.values()] == [False, False, False]


def test_skipped_servers_are_reported_with_the_reason_given(tmp_path):
    path = write(tmp_path / "mcp.json", {"servers": {"local": {"command": sys.executable, "args": [SERVER]}}})
    loaded = load_mcp_config(path, skip={"local": "already added"})
    assert (dict(loaded), loaded.failed) == ({}, {"local": "already added"})


def test_options_are_given_to_every_box(tmp_path):
    path = write(tmp_path / "mcp.json", {"servers": {"a": {"command": sys.executable, "args": [SERVER]}}})
    loaded = load_mcp_config(path, prefix=False, include=["cwd"])
    try:
        assert loaded["a"].names == ["cwd"]
    finally:
        loaded.close()


def test_a_file_that_cannot_be_read_raises_and_starts_nothing(tmp_path):
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(tmp_path / "missing.json")
    assert (
        str(caught.value)
        == f"cannot read the MCP configuration {tmp_path / 'missing.json'}: No such file or directory."
    )
    big = tmp_path / "big.json"
    big.write_text('{"mcpServers": {}, "pad": "' + "x" * 10_000_000 + '"}')
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(big)
    assert str(caught.value) == (
        f"{big} is 10,000,029 bytes; an MCP configuration is at most 1,000,000 characters. Check that it is the right file."
    )
    big.write_text('{"mcpServers": {}, "pad": "' + "x" * 2_000_000 + '"}')  # read, then refused
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(big)
    assert str(caught.value) == (
        f"{big} is 2,000,029 characters; an MCP configuration is at most 1,000,000. Check that it is the right file."
    )
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"mcpServers": {"caf\xe9": {"command": "x"}}}')
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(latin)
    assert str(caught.value) == f"{latin} is not UTF-8 text; is it the right file?"


def test_a_server_name_given_twice_starts_nothing_and_names_the_file(tmp_path):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        f'{{"mcpServers": {{"local": {{"command": "{sys.executable}", "args": ["{SERVER}"]}}, "local": {{"command": "/nonexistent"}}}}}}'
    )
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(path)
    assert str(caught.value) == (
        f"{path}: the server name 'local' is given twice in 'mcpServers'; JSON keeps only the last, so the"
        " first would be dropped without a word. Give each server its own name (or remove one)."
    )
