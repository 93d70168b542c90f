"""`McpToolbox`'s options (prefix, include / exclude, env, cwd, secrets) and the annotations it reads
(title, openWorldHint), against a real SDK server (tests/mcp_servers/annotated_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from meowgent_nb import Tool
from meowgent_nb.mcp import McpServerError, McpTool, McpToolbox, McpToolError
from meowgent_nb.mcp.client.toolbox import mcp_tool, needs_approval

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "annotated_server.py")
COMMAND = [sys.executable, SERVER]
TOKEN = "tok_fake_5f3a9c1e7b2d"
ALL = ["search", "read_note", "env_var", "cwd", "header"]


def test_titles_are_kept_and_open_world_tools_ask_even_when_read_only(tmp_path):
    with McpToolbox("ann", COMMAND) as box:
        assert [(t.name, t.title, t.approval) for t in box] == [
            ("ann_search", "Search the web", True),  # readOnlyHint, but openWorldHint: it reaches outside
            ("ann_read_note", "Read a local note", False),  # the annotations' title; openWorldHint false
            ("ann_env_var", None, False),
            ("ann_cwd", None, False),
            ("ann_header", None, False),
        ]
        assert box["ann_search"].description == "Search the web (read-only, but it reaches outside)."
    assert needs_approval({"readOnlyHint": True, "openWorldHint": True}) is True
    assert needs_approval({"readOnlyHint": True, "openWorldHint": False}) is False
    assert needs_approval({"openWorldHint": False}) is True


def test_a_title_is_one_bounded_line_and_describes_a_tool_without_a_description():
    spec = {"name": "t", "title": "  Two\nlines\t" + "x" * 200, "inputSchema": {"type": "object"}}
    made = mcp_tool(spec, lambda name, arguments: "")
    assert made.title == "Two lines " + "x" * 87 + "..."
    assert made.description == made.title
    assert mcp_tool({"name": "t", "title": 5, "annotations": {"title": " "}}, lambda n, a: "").title is None


def test_a_server_tool_is_an_mcp_tool_with_what_mcp_adds_declared():
    spec = {
        "name": "a/b",
        "inputSchema": {"type": "object"},
        "annotations": {"idempotentHint": True},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    }
    made = mcp_tool(spec, lambda name, arguments: "", prefix="p_")
    assert isinstance(made, McpTool) and isinstance(made, Tool)
    assert (made.name, made.remote_name, made.title, made.runs_as_task, made.idempotent) == (
        "p_a_b",
        "a/b",
        None,
        False,
        True,
    )
    assert made.output_schema == {"type": "object", "properties": {"n": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("prefix", "names"),
    [
        (True, ["ann_search", "ann_read_note", "ann_env_var", "ann_cwd", "ann_header"]),
        (False, ALL),
        ("web.", ["web.search", "web.read_note", "web.env_var", "web.cwd", "web.header"]),
        ("", ALL),
    ],
)
def test_any_prefix(prefix, names):
    with McpToolbox("ann", COMMAND, prefix=prefix, include=ALL) as box:
        assert (box.names, box.prefix) == (names, {True: "ann_", False: ""}.get(prefix, prefix))


@pytest.mark.parametrize("prefix", ["1x_", "a b", "x" * 33, 3, None])
def test_a_prefix_that_cannot_start_a_tool_name_is_refused_before_anything_starts(prefix):
    with pytest.raises(ValueError) as caught:
        McpToolbox("ann", ["/nonexistent/never-started"], prefix=prefix)
    assert str(caught.value) == (
        "McpToolbox 'ann': prefix must be True, False or a string of letters, digits, '_', '.' and '-'"
        f" starting with a letter or '_' (at most 32), got {prefix!r}"
    )


def test_include_and_exclude_choose_the_server_tools():
    with McpToolbox("ann", COMMAND, include=["cwd", "search"]) as box:
        assert (box.names, box.left_out) == (["ann_search", "ann_cwd"], ["read_note", "env_var", "header"])
    with McpToolbox("ann", COMMAND, include="cwd") as box:  # one name, not the letters c, w, d
        assert box.names == ["ann_cwd"]
    with McpToolbox("ann", COMMAND, exclude=["search"], approval={"search": False, "cwd": True}) as box:
        assert [(t.name, t.approval) for t in box] == [
            ("ann_read_note", False),
            ("ann_env_var", False),
            ("ann_cwd", True),
            ("ann_header", False),
        ]
        assert box.left_out == ["search"]


@pytest.mark.parametrize("option", ["include", "exclude"])
def test_an_unknown_name_in_include_or_exclude_lists_the_servers_tools(option):
    with pytest.raises(ValueError) as caught:
        McpToolbox("ann", COMMAND, **{option: ["search", "serch", "ann_cwd"]})
    assert str(caught.value) == (
        f"McpToolbox 'ann': {option} names unknown tools: serch, ann_cwd;"
        " the server has: search, read_note, env_var, cwd, header"
    )


def test_include_with_exclude_is_refused():
    with pytest.raises(ValueError) as caught:
        McpToolbox("ann", COMMAND, include=["cwd"], exclude=["search"])
    assert str(caught.value) == "McpToolbox 'ann': give include= or exclude=, not both"


def test_env_and_cwd_reach_the_server_and_env_values_are_never_shown(tmp_path):
    with McpToolbox("ann", COMMAND, env={"MEOW_TOKEN": TOKEN, "DEBUG": "1"}, cwd=str(tmp_path)) as box:
        assert box["ann_env_var"].run({"name": "MEOW_TOKEN"}) == f"set, {len(TOKEN)} characters"
        assert box["ann_cwd"].run({}) == str(tmp_path)
        assert (box.env_names, box.header_names) == (("MEOW_TOKEN", "DEBUG"), ())
        assert repr(box) == (
            f"McpToolbox('ann', stdio: {box.target!r}, env={{'MEOW_TOKEN': '***', 'DEBUG': '***'}}, connected,"
            " tools=['ann_search', 'ann_read_note', 'ann_env_var', 'ann_cwd', 'ann_header'])"
        )
        assert TOKEN not in repr(box)


@pytest.mark.parametrize("timeout", [0, -1, True, "5"])
def test_a_bad_connect_timeout_is_refused(timeout):
    with pytest.raises(ValueError) as caught:
        McpToolbox("ann", COMMAND, connect_timeout=timeout)
    assert str(caught.value) == (
        f"McpToolbox 'ann': connect_timeout must be a positive number of seconds, got {timeout!r}"
    )


def test_secrets_are_masked_in_the_target_and_in_a_failure_quoting_the_servers_stderr():
    script = "import sys; print('refused token', sys.argv[1], file=sys.stderr); sys.exit(1)"
    with pytest.raises(McpServerError) as caught:
        McpToolbox("bad", [sys.executable, "-c", script, TOKEN], secrets=[TOKEN], connect_timeout=10)
    message = str(caught.value)
    assert TOKEN not in message
    assert message.splitlines()[-2:] == [
        "refused token ***",
        "Check the command, and that the server starts on its own in a terminal.",
    ]
    assert message.startswith(f"could not connect to the MCP server 'bad' ({sys.executable} -c ")
    assert " ***): " in message.splitlines()[0]


def test_a_tool_error_quoting_a_secret_back_is_masked():
    demo = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
    box = McpToolbox("demo", [sys.executable, demo], include=["refuse"], secrets=[TOKEN])
    with box, pytest.raises(McpToolError) as caught:
        box["demo_refuse"].run({"reason": f"the token {TOKEN} is wrong"})
    assert str(caught.value) == "Error executing tool refuse: cannot do that: the token *** is wrong"
