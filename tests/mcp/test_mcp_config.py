"""MCP configuration files (Claude Desktop, Cursor, VS Code): text + environment -> server specs.

`parse_mcp_config` is pure, so these tests give it text and a dict; `load_mcp_config` (which
starts the servers) is tested with real servers in test_mcp_load.py.
"""

from __future__ import annotations

import json

import pytest

from meowgent_nb.mcp.config import McpConfigError, ServerSpec, header_secrets, parse_mcp_config, redact

TOKEN = "ghp_fake0123456789abcdef"
ENV = {"GITHUB_TOKEN": TOKEN, "HOME": "/home/ann", "EMPTY": ""}


def parse(data, environ=ENV):
    return parse_mcp_config(json.dumps(data), environ, "mcp.json")


def test_claude_desktop_servers_with_variables_expanded():
    config = parse(
        {
            "mcpServers": {
                "github": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-github", "--user=${USER_NAME:-ann}"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}", "LOG": "${env:HOME}/log"},
                    "cwd": "${HOME}/src",
                },
                "web": {
                    "url": "https://example.com/mcp?org=${ORG:-meow}",
                    "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
                },
            }
        }
    )
    assert (config.failed, config.disabled, config.notes) == ({}, (), ())
    github, web = config.servers["github"], config.servers["web"]
    assert github == ServerSpec(
        "github",
        command=("npx", "-y", "@modelcontextprotocol/server-github", "--user=ann"),
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN, "LOG": "/home/ann/log"},
        cwd="/home/ann/src",
        secrets=frozenset({TOKEN, "/home/ann", "/home/ann/log"}),
    )
    assert web == ServerSpec(
        "web",
        url="https://example.com/mcp?org=meow",
        headers={"Authorization": f"Bearer {TOKEN}"},
        secrets=frozenset({TOKEN, f"Bearer {TOKEN}"}),
    )
    assert github.toolbox_arguments() == {
        "command": ["npx", "-y", "@modelcontextprotocol/server-github", "--user=ann"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN, "LOG": "/home/ann/log"},
        "cwd": "/home/ann/src",
        "secrets": github.secrets,
    }
    assert web.toolbox_arguments() == {
        "url": "https://example.com/mcp?org=meow",
        "headers": {"Authorization": f"Bearer {TOKEN}"},
        "secrets": web.secrets,
    }
    # The repr names the env variables and headers but shows no value from the environment.
    assert repr(github) == (
        "ServerSpec('github', stdio: 'npx -y @modelcontextprotocol/server-github --user=ann',"
        " env={'GITHUB_PERSONAL_ACCESS_TOKEN': '***', 'LOG': '***'}, cwd='***/src')"
    )
    assert repr(web) == (
        "ServerSpec('web', http: 'https://example.com/mcp?org=meow', headers={'Authorization': '***'})"
    )


def test_vs_code_servers_key_and_types():
    config = parse(
        {
            "inputs": [],
            "servers": {
                "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
                "docs": {"type": "http", "url": "http://127.0.0.1:9000/mcp"},
            },
        }
    )
    assert config.servers == {
        "time": ServerSpec("time", command=("uvx", "mcp-server-time")),
        "docs": ServerSpec("docs", url="http://127.0.0.1:9000/mcp"),
    }


def test_defaults_apply_when_a_variable_is_unset_or_empty_and_an_empty_value_is_kept_without_one():
    config = parse(
        {"mcpServers": {"a": {"command": "run", "args": ["${EMPTY:-x}", "${MISSING:-}", "${EMPTY}"]}}}
    )
    assert config.servers["a"].command == ("run", "x", "", "")


def test_an_unset_variable_fails_its_server_only_and_names_the_field_and_variable():
    config = parse(
        {
            "mcpServers": {
                "good": {"command": "run"},
                "web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
                "arg": {"command": "run", "args": ["--key", "${SECRET_KEY}"]},
            }
        }
    )
    assert list(config.servers) == ["good"]
    assert config.failed == {
        "web": "${API_KEY} in headers.Authorization is not set in the environment; set it (in a notebook:"
        " %env API_KEY=...) or give a default, ${API_KEY:-default}",
        "arg": "${SECRET_KEY} in args[1] is not set in the environment; set it (in a notebook:"
        " %env SECRET_KEY=...) or give a default, ${SECRET_KEY:-default}",
    }


def test_disabled_servers_are_skipped_and_unknown_keys_noted():
    config = parse(
        {
            "mcpServers": {
                "old": {"command": "old-server", "disabled": True},
                "new": {"command": "run", "disabled": False, "envFile": ".env", "autoApprove": ["x"]},
                "bad": {"command": "run", "disabled": "yes"},
            }
        }
    )
    assert list(config.servers) == ["new"]
    assert config.disabled == ("old",)
    assert config.notes == ("new: ignored what this client does not use: 'envFile', 'autoApprove'",)
    assert config.failed == {"bad": "'disabled' must be true or false, not a string"}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (["npx", "server"], "must be an object with 'command' or 'url', not a list"),
        ("npx server", "must be an object with 'command' or 'url', not a string"),
        ({}, "has neither 'command' (a stdio server) nor 'url' (an HTTP server)"),
        ({"command": "a", "url": "http://x/mcp"}, "has both 'command' (stdio) and 'url' (HTTP); keep one"),
        ({"command": ["npx", "x"]}, "'command' must be a string, not a list"),
        ({"command": "  "}, "'command' is empty"),
        ({"command": "a", "args": "x y"}, "'args' must be a list of strings, not a string"),
        ({"command": "a", "args": ["x", 3]}, "'args' must be a list of strings; args[1] is a number"),
        ({"command": "a", "env": ["A=1"]}, "'env' must be an object of strings, not a list"),
        ({"command": "a", "env": {"PORT": 8080}}, "env.PORT must be a string, not a number"),
        ({"command": "a", "env": {"A=B": "x"}}, "env: 'A=B' is not a usable environment variable name"),
        ({"command": "a", "cwd": 5}, "'cwd' must be a string, not a number"),
        (
            {"command": "a", "headers": {"X": "y"}},
            "'headers' go with 'url' (an HTTP server), not with 'command'",
        ),
        (
            {"url": "http://x/mcp", "args": ["a"], "env": {}},
            "args, env go with 'command' (a stdio server), not with 'url'",
        ),
        ({"url": "file:///etc/passwd"}, "'url' must start with http:// or https://"),
        (
            {"url": "http://x/mcp", "headers": {"Bad Header": "v"}},
            "headers: 'Bad Header' is not a usable HTTP header name",
        ),
        ({"url": "http://x/mcp", "headers": {"X-Key": None}}, "headers.X-Key must be a string, not a null"),
        (
            {"url": "http://x/mcp", "type": "sse"},
            (
                "uses the SSE transport, which this client does not speak; give the server's streamable-HTTP"
                ' endpoint (often ending in /mcp) with "type": "http"'
            ),
        ),
        ({"url": "http://x/mcp", "type": "stdio"}, "'type' is 'stdio' but the server has 'url'"),
        ({"command": "a", "type": "websocket"}, "'type' must be \"stdio\" or \"http\", not 'websocket'"),
        ({"command": "a", "type": 1}, '\'type\' must be "stdio" or "http", not a number'),
        (
            {"command": "a", "args": ["${input:token}"]},
            (
                "cannot expand ${input:token} in args[0]; use ${VAR} or ${VAR:-default} with an environment"
                " variable (VS Code's ${input:...} prompts are not supported)"
            ),
        ),
        (
            {"command": "a", "args": ["${}"]},
            (
                "cannot expand ${} in args[0]; use ${VAR} or ${VAR:-default} with an environment"
                " variable (VS Code's ${input:...} prompts are not supported)"
            ),
        ),
    ],
)
def test_a_bad_server_entry_fails_with_its_reason(entry, problem):
    config = parse({"mcpServers": {"x": entry, "ok": {"command": "run"}}})
    assert (config.failed, list(config.servers)) == ({"x": problem}, ["ok"])


@pytest.mark.parametrize("name", ["my server", "a/b", "../x", "", "1st", "x" * 33, "naïve", "a.b"])
def test_a_name_that_cannot_start_tool_names_is_refused(name):
    config = parse({"mcpServers": {name: {"command": "run"}, "ok": {"command": "run"}}})
    assert config.failed == {
        name: "is not a usable server name; use letters, digits, '_' and '-' (at most 32, starting with"
        " a letter or '_'), and rename it in the file"
    }
    assert list(config.servers) == ["ok"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "mcp.json is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1). Fix the file (comments are not allowed).",
        ),
        (
            "",
            "mcp.json is not JSON: Expecting value: line 1 column 1 (char 0). Fix the file (comments are not allowed).",
        ),
        (
            "[" * 100_000,
            "mcp.json is not JSON (it is nested too deeply). Fix the file (comments are not allowed).",
        ),
        (
            "[1, 2]",
            "mcp.json must be a JSON object with 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code), not a JSON list.",
        ),
        (
            '"mcpServers"',
            "mcp.json must be a JSON object with 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code), not a JSON string.",
        ),
        (
            "{}",
            "mcp.json must have 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code) (it has neither).",
        ),
        (
            '{"mcpServers": {}, "servers": {}}',
            "mcp.json must have 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code) (it has both).",
        ),
        (
            '{"mcpServers": [{"command": "x"}]}',
            "mcp.json: 'mcpServers' must be an object of servers by name, not a list.",
        ),
        (
            " " * 1_000_001,
            "mcp.json is 1,000,001 characters; an MCP configuration is at most 1,000,000. Check that it is the right file.",
        ),
    ],
)
def test_a_file_that_is_not_a_configuration_raises(text, message):
    with pytest.raises(McpConfigError) as caught:
        parse_mcp_config(text, ENV, "mcp.json")
    assert str(caught.value) == message


def test_no_message_or_repr_contains_a_value_from_the_file_env_headers_or_environment():
    literal = "sk-literal-secret-in-the-file"
    config = parse(
        {
            "mcpServers": {
                "a": {"command": "run", "env": {"K": literal, "N": 5}},
                "b": {"url": "http://x/mcp", "headers": {"Authorization": literal, "X": ["y"]}},
                "c": {"command": "run", "env": {"K": "${GITHUB_TOKEN}"}, "args": ["${NOPE}"]},
                "d": {"command": "run", "env": {"K": "${GITHUB_TOKEN}"}},
                "e": {"url": "http://x/mcp", "headers": {"Authorization": literal}},
            }
        }
    )
    shown = repr(config.failed) + repr(list(config.servers.values())) + repr(config.notes)
    assert sorted(config.failed) == ["a", "b", "c"]
    assert literal not in shown and TOKEN not in shown


def test_redact_masks_secrets_longest_first_and_leaves_short_values():
    secrets = {TOKEN, TOKEN[:8], "1"}
    assert redact(f"--token {TOKEN} and {TOKEN[:8]} and 1", secrets) == "--token *** and *** and 1"


@pytest.mark.parametrize(
    ("headers", "secrets"),
    [
        # The token of a scheme is a secret of its own: a server may echo it without "Bearer ".
        ({"Authorization": f"Bearer {TOKEN}"}, {f"Bearer {TOKEN}", TOKEN}),
        ({"Authorization": f"  bearer   {TOKEN} "}, {f"  bearer   {TOKEN} ", TOKEN}),
        ({"authorization": f"ApiKey {TOKEN}"}, {f"ApiKey {TOKEN}", TOKEN}),  # any scheme in Authorization
        ({"X-Auth": f"Token {TOKEN}"}, {f"Token {TOKEN}", TOKEN}),  # Bearer, Basic, Token in any header
        # Basic: the token, and its user:password and password.
        (
            {"Authorization": "Basic YW5uOmNvcnJlY3QtaG9yc2U="},
            {
                "Basic YW5uOmNvcnJlY3QtaG9yc2U=",
                "YW5uOmNvcnJlY3QtaG9yc2U=",
                "ann:correct-horse",
                "correct-horse",
            },
        ),
        ({"Authorization": "Basic YW5uOnB3"}, {"Basic YW5uOnB3", "YW5uOnB3"}),  # "ann:pw", "pw": too short
        ({"Authorization": "Basic not-base64!"}, {"Basic not-base64!", "not-base64!"}),
        # Placeholders shorter than 8 characters are not masked alone; other headers are values.
        ({"Authorization": "Bearer none"}, {"Bearer none"}),
        ({"X-Title": "My Notebook", "X-Key": TOKEN}, {"My Notebook", TOKEN}),
    ],
)
def test_a_header_s_secrets_are_its_value_and_the_credentials_written_in_it(headers, secrets):
    assert header_secrets(headers) == secrets


TWICE_NAME = (
    "mcp.json: the server name {} is given twice in {!r}; JSON keeps only the last, so the first would be"
    " dropped without a word. Give each server its own name (or remove one)."
)
TWICE_KEY = (
    "mcp.json: the key {} is given twice in one object ({}); JSON keeps only the last. Remove one of them."
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"mcpServers": {"git": {"command": "uvx"}, "time": {"command": "t"}, "git": {"command": "npx"}}}',
            TWICE_NAME.format("'git'", "mcpServers"),
        ),
        (
            '{"servers": {"a": {"command": "x"}, "b": {"command": "y"}, "a": {"url": "http://h"}, "b": {"command": "z"}}}',
            TWICE_NAME.format("'a', 'b'", "servers"),
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "command": "rm"}}}',
            TWICE_KEY.format("'command'", "'mcpServers' -> 'a'"),
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "env": {"HOME": "/a", "HOME": "/b"}}}}',
            TWICE_KEY.format("'HOME'", "'mcpServers' -> 'a' -> 'env'"),
        ),
        (
            '{"mcpServers": {"a": {"command": "x", "args": ["-v", {"k": 1, "k": 2}]}}}',
            TWICE_KEY.format("'k'", "'mcpServers' -> 'a' -> 'args' -> '1'"),
        ),
        (
            '{"mcpServers": {}, "mcpServers": {"a": {"command": "x"}}}',
            TWICE_KEY.format("'mcpServers'", "the top level"),
        ),
    ],
)
def test_a_key_given_twice_is_refused_naming_the_file_and_the_name(text, message):
    with pytest.raises(McpConfigError) as caught:
        parse_mcp_config(text, ENV, "mcp.json")
    assert str(caught.value) == message
