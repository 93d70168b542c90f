"""Roots that do not override what the person configured: the reference filesystem server.

`@modelcontextprotocol/server-filesystem DIR` (npm, pinned, installed once under the temporary directory) works in DIR until its client offers
roots; then it works in those instead. A box offers only the roots the person chose, so a server
started on a folder outside the notebook's keeps that folder, and one given ``--root`` works there
(and the add output says so). Without npm or the registry the tests are skipped.
"""

from __future__ import annotations

import shlex
import shutil
import time

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb.mcp import McpToolbox, McpToolError
from tests.mcp_servers import npm_packages

PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The server's command, without its folder."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    try:
        folder = npm_packages.installed(PACKAGE, ["npm"])
    except RuntimeError as error:
        pytest.skip(str(error))
    return [str(folder / "node_modules" / ".bin" / "mcp-server-filesystem")]


@pytest.fixture
def folders(tmp_path):
    """Two folders outside the notebook's (the tests run in the repository), a file in each."""
    data, other = tmp_path / "data", tmp_path / "other"
    for folder, text in ((data, "in data"), (other, "in other")):
        folder.mkdir()
        (folder / "a.txt").write_text(text)
    return data.resolve(), other.resolve()


def _read_once_the_roots_are_applied(box: McpToolbox, path, within: float = 10.0):
    """``read_text_file`` of ``path`` once the server has asked for its roots and stopped refusing
    the folder (at most ``within`` seconds)."""
    deadline = time.monotonic() + within
    while True:
        try:
            if box.history:
                return box["read_text_file"].run({"path": str(path)})
        except McpToolError as error:
            if "outside allowed directories" not in str(error) or time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"the server never asked for its roots in {within:g} s")
        time.sleep(0.05)


def test_a_server_started_on_a_folder_outside_the_notebooks_reads_a_file_inside_it(server, folders):
    data, _ = folders
    with McpToolbox("fs", [*server, str(data)], prefix=False) as box:
        assert box["read_text_file"].run({"path": str(data / "a.txt")}) == {"content": "in data"}
        assert box.asks.roots == [] and [a.kind for a in box.history] == []  # never asked: none offered


def test_add_root_offers_that_folder_says_so_and_the_server_works_there(ip, server, folders):
    data, other = folders
    command = shlex.join([*server, str(data)])
    with capture_output() as out:
        ip.run_line_magic("tools", f"mcp add fs --no-prefix --root {shlex.quote(str(other))} -- {command}")
    try:
        assert out.stdout.splitlines()[-1] == f"Roots offered to fs: {other}"
        box = ip.magics_manager.registry["AgentMagics"].toolboxes[-1]
        # The server asks for the roots after the handshake and applies them on its own time (it
        # resolves each folder first): a call in that window is still judged by its old folder.
        assert _read_once_the_roots_are_applied(box, other / "a.txt") == {"content": "in other"}
        assert [a.kind for a in box.history] == ["roots"]
        with pytest.raises(McpToolError) as refused:  # the person's root, not the command's folder
            box["read_text_file"].run({"path": str(data / "a.txt")})
        assert str(refused.value).startswith(
            f"Access denied - path outside allowed directories: {data / 'a.txt'}"
        )
    finally:
        ip.run_line_magic("tools", "mcp remove fs")
