"""A real JupyterLab server and Debian's Chromium, for tests that click in a notebook.

`JupyterLab` starts ``python -m jupyter lab`` on 127.0.0.1 with a random port and token, and
settings and state kept in a temporary folder (no news, no update checks, no saved workspaces).
`NotebookPage` drives one notebook in a Chromium page with the playwright package; every wait
has a generous limit, and a failed wait raises an AssertionError that quotes what the notebook
showed, with a screenshot of the whole page next to the test's temporary files.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

try:
    from playwright.sync_api import Error as PlaywrightError  # its TimeoutError is one too
except ImportError:  # tests/notebook/browser/test_browser.py then skips (or fails, in CI) and says why
    PlaywrightError = RuntimeError  # type: ignore[misc,assignment]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",  # a container's /dev/shm may be 64 MB; Chromium then crashes
]
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# JupyterLab's own settings, as a person would set them: no "Jupyter news" question, no update check.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
EXECUTION_COUNT = re.compile(r"^\[\d+\]:$")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_notebook(path: Path, cells: Sequence[str]) -> None:
    """A notebook of code cells, with the kernelspec (so JupyterLab asks no "Select Kernel")."""
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1))


class JupyterLab:
    """``jupyter lab`` in its own process group, serving ``root``; ``work`` holds its state and log.

    ``app="notebook"`` starts Notebook 7 (``jupyter notebook``) the same way instead. Its kernels
    keep the rules files a person trusts in ``config_dir``, apart from the tests' own store.
    """

    START_TIMEOUT = 90.0

    def __init__(self, root: Path, work: Path, app: str = "lab"):
        self.root, self.work, self.app = root, work, app
        self.token = secrets.token_hex(16)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = work / "jupyterlab.log"
        self.config_dir = work / "meowgent-config"
        """Its kernels' ``$MEOWGENT_CONFIG_DIR`` (their trust store)."""

    # --- start and stop --------------------------------------------------------------------

    def start(self) -> None:
        env = self._environment()
        for _attempt in range(3):  # the free port may be taken between the check and the bind
            self.port = free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "jupyter", self.app, *self._options()],
                    cwd=self.root,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, stopped as one at the end
                )
            if self._wait_until_it_answers():
                return
            self.stop()
        raise RuntimeError(f"JupyterLab did not start; its log:\n{self.log_tail()}")

    def _options(self) -> list[str]:
        return [
            "--no-browser",
            "--allow-root",  # CI runs as root
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",  # another port would not be the one we open
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: see tests/support/browser_pages.py
        ]

    def _environment(self) -> dict[str, str]:
        settings = self.work / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(values))
        env = dict(os.environ)
        # A person at a browser: the approval policy must not come from the tester's shell.
        env.pop("MEOWGENT_APPROVE", None)
        # The rules files trusted in its kernels: a store of this server's own, not the test process's.
        env["MEOWGENT_CONFIG_DIR"] = str(self.config_dir)
        for variable, folder in [
            ("JUPYTERLAB_SETTINGS_DIR", settings),
            ("JUPYTERLAB_WORKSPACES_DIR", self.work / "workspaces"),
            ("JUPYTER_CONFIG_DIR", self.work / "config"),
            ("JUPYTER_DATA_DIR", self.work / "data"),
            ("JUPYTER_RUNTIME_DIR", self.work / "runtime"),
            ("IPYTHONDIR", self.work / "ipython"),
        ]:
            folder.mkdir(parents=True, exist_ok=True)
            env[variable] = str(folder)
        return env

    def _wait_until_it_answers(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + self.START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                self.api("GET", "/api/status", timeout=2)
                return True
            except (OSError, urllib.error.URLError):
                time.sleep(0.25)
        return False

    def stop(self) -> None:
        """Shut the kernels down, then end the server's process group; leave nothing behind."""
        process, self.process = self.process, None
        if process is None:
            return
        children = _descendants(process.pid)
        if process.poll() is None:
            try:
                self.shutdown_kernels()
            except (OSError, urllib.error.URLError):
                pass
        children += _descendants(process.pid)  # kernels run in process groups of their own
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while children and time.monotonic() < deadline:
            children = [pid for pid in children if _alive(pid)]
            time.sleep(0.1)
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    # --- the REST API ------------------------------------------------------------------------

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def api(self, method: str, path: str, timeout: float = 10) -> Any:
        request = urllib.request.Request(
            self.url(path), method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, read from /proc (empty where /proc is missing)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                todo.append(child)
    return found


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


class NotebookPage:
    """One notebook open in JupyterLab, in a Chromium page of its own.

    Every ``wait_*`` method takes a description of what it waits for; when the wait fails, the
    AssertionError says that, what the notebook panel showed, the end of the server's log, and
    where the screenshot of the page is.
    """

    def __init__(self, page: Any, lab: JupyterLab, failure_dir: Path):
        self.page, self.lab, self.failure_dir = page, lab, failure_dir

    def open(self, notebook: str, workspace: str, timeout: float = 90) -> None:
        """Open the notebook (in JupyterLab, in a workspace of its own, so no other tab is
        restored) and wait until its kernel is idle."""
        if self.lab.app == "notebook":
            path = f"/notebooks/{notebook}"
        else:
            path = f"/lab/workspaces/{workspace}/tree/{notebook}"
        self.page.goto(self.lab.url(f"{path}?token={self.lab.token}"))
        self.wait_ready(notebook, timeout)

    def wait_ready(self, notebook: str, timeout: float = 90) -> None:
        """Wait until the notebook's cells show and its kernel is idle."""
        self.wait_visible(
            self.page.locator(".jp-NotebookPanel .jp-Cell").first, "the notebook's cells", timeout
        )
        # The toolbar says "idle" for a moment before the kernel even starts; a Run All then
        # finds no kernel and JupyterLab asks "Select Kernel". So first wait until the server
        # has this notebook's kernel, idle and connected to the page, then for the toolbar.
        deadline = time.monotonic() + timeout
        while not self._kernel_ready(notebook):
            if time.monotonic() > deadline:
                sessions = self.lab.api("GET", "/api/sessions")
                self.fail(
                    f"waited {timeout:g} s for a kernel of {notebook}; the server's sessions: {sessions}"
                )
            time.sleep(0.2)
        self.wait_visible(
            self.page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status=idle]"),
            "the notebook's kernel to be idle",
            timeout,
        )

    def _kernel_ready(self, notebook: str) -> bool:
        for session in self.lab.api("GET", "/api/sessions"):
            kernel = session.get("kernel") or {}
            if session.get("path") == notebook and kernel.get("execution_state") == "idle":
                return kernel.get("connections", 0) > 0
        return False

    def run_all(self) -> None:
        """Run > Run All Cells, from the menu bar, as a person does."""
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.locator('li[data-command="runmenu:run-all"]').click()

    def cell(self, index: int) -> Any:
        return self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(index)

    def prompt(self, index: int) -> str:
        return self.cell(index).locator(".jp-InputPrompt").inner_text().strip()

    # --- waits -------------------------------------------------------------------------------

    def wait_visible(self, locator: Any, what: str, timeout: float = 60) -> Any:
        __tracebackhide__ = True
        try:
            locator.first.wait_for(state="visible", timeout=timeout * 1000)
            return locator
        except PlaywrightError as error:  # a timeout, or the page closed under us
            problem = f"{type(error).__name__}: {_first_line(error)}"
        self.fail(f"waited {timeout:g} s for {what}: {problem}")

    def wait_hidden(self, locator: Any, what: str, timeout: float = 60) -> None:
        """Wait until the locator is hidden or gone."""
        __tracebackhide__ = True
        try:
            locator.first.wait_for(state="hidden", timeout=timeout * 1000)
            return
        except PlaywrightError as error:
            problem = f"{type(error).__name__}: {_first_line(error)}"
        self.fail(f"waited {timeout:g} s for {what} to be hidden: {problem}")

    def wait_text(self, locator: Any, pattern: str | re.Pattern[str], what: str, timeout: float = 60) -> str:
        """Wait until the locator's text matches ``pattern`` (a substring, or a regex); return the text."""
        __tracebackhide__ = True
        deadline = time.monotonic() + timeout
        text = None
        while True:
            try:
                text = locator.inner_text(timeout=1000)
            except PlaywrightError:  # not there yet
                text = None
            if text is not None and _matches(pattern, text):
                return text
            if time.monotonic() > deadline:
                self.fail(f"waited {timeout:g} s for {what} (wanted {pattern!r}); its text was: {text!r}")
            time.sleep(0.1)

    def wait_finished(self, index: int, what: str, timeout: float = 60) -> str:
        """Wait until the cell shows an execution count (it ran and ended); return the prompt."""
        __tracebackhide__ = True
        return self.wait_text(
            self.cell(index).locator(".jp-InputPrompt"), EXECUTION_COUNT, f"{what} to finish", timeout
        )

    def check(self, condition: bool, message: str) -> None:
        __tracebackhide__ = True
        if not condition:
            self.fail(message)

    # --- failures ----------------------------------------------------------------------------

    def screen_text(self) -> str:
        """The notebook panel's text, and that of any dialog over it."""
        try:
            text = self.page.locator(".jp-NotebookPanel .jp-Notebook").first.inner_text(timeout=5000)
            for dialog in self.page.locator(".jp-Dialog").all():
                text += "\n--- a dialog is open ---\n" + dialog.inner_text(timeout=5000)
            return text
        except PlaywrightError as error:
            try:
                return self.page.locator("body").inner_text(timeout=5000)
            except PlaywrightError:
                return f"(could not read the page: {_first_line(error)})"

    def fail(self, message: str) -> NoReturn:
        __tracebackhide__ = True
        self.failure_dir.mkdir(parents=True, exist_ok=True)
        shot = self.failure_dir / f"failure-{time.strftime('%H%M%S')}-{secrets.token_hex(2)}.png"
        try:
            self.page.screenshot(path=str(shot), full_page=True)
            where = f"screenshot: {shot}"
        except PlaywrightError as error:
            where = f"(no screenshot: {_first_line(error)})"
        raise AssertionError(
            f"{message}\n\n--- the notebook panel showed ---\n{self.screen_text()}\n"
            f"--- end of the notebook panel ---\n{where}\n"
            f"--- the end of JupyterLab's log ---\n{self.lab.log_tail(20)}"
        )


def _matches(pattern: str | re.Pattern[str], text: str) -> bool:
    if isinstance(pattern, re.Pattern):
        return pattern.search(text.strip()) is not None
    return pattern in text


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def require_chromium() -> None:
    """Skip the calling test without Chromium or playwright; with ``CI`` set, fail it instead."""
    import pytest

    missing = []
    if not os.path.exists(CHROMIUM):
        missing.append(f"{CHROMIUM} is missing (Debian: apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package is missing (pip install -e '.[test]')")
    if not missing:
        return
    reason = "the browser test needs Chromium and playwright: " + "; ".join(missing)
    if os.environ.get("CI"):
        pytest.fail(reason + " (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)
