"""Servers, a browser and pages shared by the browser tests: one page per app and theme.

Loading JupyterLab into a fresh page took 4.9-5.9 s on this machine (its scripts fetched and
parsed, its plugins started), opening a notebook in a JupyterLab already loaded 0.9-1.2 s. So
`Pages` keeps a page per server and theme: the first notebook loads the page at its address, the
next ones open in it as the file browser opens them (the ``docmanager:open`` command) and are
closed after their test without saving (their kernels shut down). Notebook 7 shows one notebook
per page: its page goes to the next notebook's address (from the browser's cache: 2.8-4.2 s
against 4.6-5.9 s in a fresh page), leaving the last one as a person does ("Leave").
A test that failed takes its page with it: the next test gets a fresh one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.browser_notebook import (
    JupyterLab,
    NotebookPage,
    PlaywrightError,
    launch_chromium,
    require_chromium,
)

VIEWPORT = {"width": 1280, "height": 1000}
# WCAG's contrast ratio of an element's text colour against its own background (both opaque here).
CONTRAST = """e => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  const lum = c => { const [r, g, b] = rgb(c); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const style = getComputedStyle(e);
  const [a, b] = [lum(style.color), lum(style.backgroundColor)].sort((x, y) => y - x);
  return Math.round((a + 0.05) / (b + 0.05) * 100) / 100;
}"""
# How an element's text is laid out: its lines' height over its font size, and whether it fits its box.
LAYOUT = """e => {
  const range = document.createRange();
  range.selectNodeContents(e);
  const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
  const size = parseFloat(getComputedStyle(e).fontSize);
  const box = e.getBoundingClientRect(), area = e.closest('.jp-OutputArea').getBoundingClientRect();
  return {lines: tops.size, spacing: Math.round(box.height / tops.size / size * 100) / 100,
          fits: e.scrollWidth <= e.clientWidth + 1 && box.right <= area.right + 1};
}"""
NARROW = {"width": 640, "height": 1000}
THEMES = "@jupyterlab/apputils-extension/themes.jupyterlab-settings"
LIGHT = "JupyterLab Light"

OPEN = "async path => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }"
# Close every document without saving, as "Discard" in JupyterLab's dialog does.
CLOSE = """() => {
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
    if (widget.context) { widget.context.model.dirty = false; }
    widget.close();
  }
}"""


class Pages:
    """A Chromium page per (server, theme), reused by the tests of a module."""

    def __init__(self, browser: Any):
        self.browser = browser
        self._pages: dict[tuple[int, str], Any] = {}

    def open(self, server: JupyterLab, notebook: str, failure_dir: Path, theme: str = LIGHT) -> NotebookPage:
        """Open ``notebook`` (a path in the server's root) in the page of ``server`` and ``theme``."""
        key = (server.port, theme)
        page = self._pages.get(key)
        if page is not None and not page.is_closed():
            shown = NotebookPage(page, server, failure_dir)
            if server.app == "lab":
                page.evaluate(OPEN, notebook)
                shown.wait_ready(notebook)
            else:  # Notebook 7 loads the page again, and reads the theme again: this page's
                _set_theme(server, theme)
                shown.open(notebook, workspace="")
            return shown
        _set_theme(server, theme)
        page = self.browser.new_context(viewport=VIEWPORT).new_page()
        page.on("dialog", _leave)
        self._pages[key] = page
        shown = NotebookPage(page, server, failure_dir)
        shown.open(notebook, workspace=Path(notebook).stem)  # a new workspace: no tab restored
        return shown

    def close(self, notebook: NotebookPage, *, failed: bool) -> None:
        """Close the notebook (its kernel too); after a failure, close its page as well."""
        page, reusable = notebook.page, not failed
        if reusable and notebook.lab.app == "lab":
            try:
                page.evaluate(CLOSE)
            except PlaywrightError:
                reusable = False
        if not reusable:  # a page in an unknown state is not reused
            self._pages = {key: kept for key, kept in self._pages.items() if kept is not page}
            page.context.close()
        notebook.lab.shutdown_kernels()

    def close_all(self) -> None:
        for page in self._pages.values():
            page.context.close()
        self._pages.clear()


def _set_theme(server: JupyterLab, theme: str) -> None:
    """The theme the next page ``server`` loads shows: JupyterLab and Notebook 7 read the user's
    settings when a page loads, so it is set as a person sets it. One file per server: a page of
    the other theme loaded since has written its own."""
    themes = server.work / "lab-settings" / THEMES
    themes.parent.mkdir(parents=True, exist_ok=True)
    themes.write_text(json.dumps({"theme": theme}))


def _leave(dialog: Any) -> None:
    """ "Leave page?" when Notebook 7 goes to the next notebook: leave, as a person does; any other dialog is dismissed."""
    if dialog.type == "beforeunload":
        dialog.accept()
    else:
        dialog.dismiss()


def serve(tmp_path_factory: Any, app: str) -> Any:
    """A started `JupyterLab` server (``app`` "lab" or "notebook"), stopped when the generator ends."""
    require_chromium()
    server = JupyterLab(
        tmp_path_factory.mktemp(f"{app}-root"), tmp_path_factory.mktemp(f"{app}-work"), app=app
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


def chromium_browser() -> Any:
    """Debian's Chromium through playwright, closed when the generator ends."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()
