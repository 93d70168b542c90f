"""Arize Phoenix, a real trace viewer, started on 127.0.0.1 for a test and read through its REST API.

Phoenix (``arize-phoenix``, about 150 packages) lives in a venv of its own, ``.venv-phoenix`` at the
top of the clone: its pins are not ours to share, and installing it beside the test extra would
cost every install its time. .ci/run makes that venv in the background while the main install and
pyright run (the command is `MAKE`); ``MEOWGENT_PHOENIX`` names another ``phoenix`` executable.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.browser_notebook import free_port

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = "tests/support/phoenix-requirements.txt"
MAKE = f"python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install -r {REQUIREMENTS}"
"""The command, run at the top of the clone, that makes the venv the tests look for."""
EXECUTABLE_ENV = "MEOWGENT_PHOENIX"
STARTUP = 60  # seconds: Phoenix migrates its new SQLite database first (15 s on a busy 2-core machine)


def phoenix_executable() -> Path | None:
    """The ``phoenix`` command ``MEOWGENT_PHOENIX`` names, else the clone's ``.venv-phoenix``'s, if it exists."""
    named = os.environ.get(EXECUTABLE_ENV)
    path = Path(named) if named else ROOT / ".venv-phoenix" / "bin" / "phoenix"
    return path if path.is_file() else None


def require_phoenix() -> Path:
    """The ``phoenix`` command; without it skip the calling test, saying how to make it (fail it with ``CI`` set)."""
    import pytest

    executable = phoenix_executable()
    if executable is not None:
        return executable
    where = os.environ.get(EXECUTABLE_ENV) or str(ROOT / ".venv-phoenix" / "bin" / "phoenix")
    reason = f"the Phoenix test needs Arize Phoenix ({where} is missing): `{MAKE}` at the top of the clone"
    if os.environ.get("CI"):
        pytest.fail(
            reason + " (CI is set, so this is a failure, not a skip; .ci/run makes it)", pytrace=False
        )
    pytest.skip(reason)


class Phoenix:
    """A Phoenix server on 127.0.0.1, its data in ``folder``, started by `start` and stopped by `stop`."""

    def __init__(self, executable: Path, folder: Path):
        self.executable = executable
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / "phoenix.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it (it answers later: `wait_ready`)."""
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.folder),  # its SQLite database and exports, not ~/.phoenix
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),  # not 4317: other servers and tests may hold it
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",  # no web fonts fetched: CI has no network
        }
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(self.executable), "serve"],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as one
            )

    def wait_ready(self) -> None:
        """Return once it answers ``/healthz``; raise AssertionError with its log if it exits or never does."""
        assert self.process is not None, "Phoenix.start() first"
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"Phoenix exited with {self.process.returncode}:\n{self._log_tail()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"Phoenix did not answer /healthz within {STARTUP} s:\n{self._log_tail()}")

    def project_id(self, name: str) -> str:
        """The id Phoenix's UI and API give the project ``name``."""
        projects = httpx.get(f"{self.url}/v1/projects", timeout=10).raise_for_status().json()["data"]
        [project] = [p for p in projects if p["name"] == name]
        return project["id"]

    def spans(self, project: str, count: int, timeout: float = 15) -> list[dict[str, Any]]:
        """The project's spans from the REST API (``GET /v1/projects/{project}/spans``), oldest first,
        once there are ``count`` of them: the exporter sends in batches and Phoenix writes them later."""
        deadline = time.monotonic() + timeout
        spans: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            response = httpx.get(f"{self.url}/v1/projects/{project}/spans", params={"limit": 100}, timeout=10)
            if response.status_code == 200:
                spans = response.json()["data"]
                if len(spans) >= count:
                    return sorted(spans, key=lambda span: (span["start_time"], span["name"]))
            time.sleep(0.2)
        raise AssertionError(
            f"Phoenix's project {project!r} has {len(spans)} spans after {timeout} s, not {count}:\n{self._log_tail()}"
        )

    def stop(self) -> None:
        """Stop it and what it started."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(15)

    def _log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]
