"""What JupyterLab's status bar says while a ``%%agent`` cell runs: a real JupyterLab, Debian's Chromium.

    python benchmarks/status_bar.py              # a cell that streams for about 8 s
    python benchmarks/status_bar.py --seconds 15

It opens a notebook whose second cell is a ``%%agent`` cell with a slow scripted model, runs all,
and reads the status bar's kernel state (and the notebook toolbar's indicator) every 0.3 s until
the cell ends. It prints how many readings during the cell said Busy and Idle, and the kernel's
status messages on the page's websocket, in order (which request each answers). Issue 30: the
status bar said Idle while the cell ran, after JupyterLab's ``create_subshell_request``.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.browser_notebook import JupyterLab, NotebookPage, launch_chromium, write_notebook

SETUP = """\
%load_ext meowgent_nb
import asyncio
from meowgent_nb.models.base import ModelChunk

class Slow:
    name = "slow"
    def __init__(self, words, delay):
        self.words, self.delay = words, delay
    async def stream(self, request):
        for word in self.words:
            await asyncio.sleep(self.delay)
            yield ModelChunk(text=word)
        yield ModelChunk(done=True, finish_reason="stop")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="How long the cell streams.")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    root, work = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    words = max(1, int(args.seconds / 0.5))
    write_notebook(
        root / "status.ipynb",
        [SETUP + f"slow = Slow(['word '] * {words}, 0.5)", "%%agent --model-object slow --no-tools\nHi"],
    )
    lab = JupyterLab(root, work)
    lab.start()
    statuses: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()

            def frame(payload: str | bytes) -> None:
                text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
                state = re.search(r'"execution_state":\s*"(\w+)"', text)
                parent = re.findall(r'"msg_type":\s*"(\w+)"', text)
                if state and len(parent) > 1:
                    statuses.append(f"{state.group(1)}({parent[1]})")

            page.on("websocket", lambda ws: ws.on("framereceived", frame))
            notebook = NotebookPage(page, lab, work)
            notebook.open("status.ipynb", workspace="status")
            statuses.clear()
            notebook.run_all()
            indicator = page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator").first
            readings: list[str] = []
            started = time.monotonic()
            while time.monotonic() - started < args.seconds + 60:
                bar = page.locator("#jp-main-statusbar").inner_text()
                running = indicator.get_attribute("data-status") == "busy"
                if running:
                    readings.append(
                        "Busy"
                        if re.search(r"\bBusy\b", bar)
                        else "Idle"
                        if re.search(r"\bIdle\b", bar)
                        else repr(bar[:80])
                    )
                elif readings:
                    break
                time.sleep(0.3)
            browser.close()
    finally:
        lab.stop()
    print(
        f"while Run All ran ({len(readings)} readings every 0.3 s): Busy {readings.count('Busy')},"
        f" Idle {readings.count('Idle')}"
    )
    print("kernel statuses after Run All:", " ".join(statuses))


if __name__ == "__main__":
    main()
