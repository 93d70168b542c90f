"""``%agent context`` in a real browser (issue 19): the table, a bar per request, what compaction
did as sent, and the folded messages, in JupyterLab's light and dark themes.

Five ``%%agent`` cells on a `FunctionModel` with a 2,048-token window fetch long pages, so the
conversation is compacted (the ``"summarize"`` policy: the model's summary is among the messages
sent); the last cell is ``%agent context``. A tool result holds HTML, which must show as text. The
screenshots context_light.png and context_dark.png go to $MEOWGENT_SCREENSHOTS when it is set, else
to the test's tmp dir. Chromium and playwright are required as for tests/notebook/browser/test_browser.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.browser_notebook import write_notebook

SETUP = '''\
%load_ext meowgent_nb
from meowgent_nb import FunctionModel, tool
from meowgent_nb.agent.window._summary import SYSTEM

@tool
def fetch(page: int) -> str:
    """Fetch a page of the long report."""
    return f"page {page}: <b>not bold</b> " + "lorem ipsum dolor sit amet " * 60

def answer(messages, tools):
    if messages[0]["content"] == SYSTEM:
        return "The person had pages 0 and 1 read."
    last = messages[-1]["content"]
    if last.startswith("Read page"):
        return '<tool_call>{"name": "fetch", "arguments": {"page": %s}}</tool_call>' % last.split()[-1]
    return "Read."

model = FunctionModel(answer)
model.n_ctx = 2048
%config AgentMagics.context = "summarize"
'''
PROMPTS = [f"%%agent --model-object model --tools fetch\nRead page {i}" for i in range(5)]


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_context_shows_its_table_bars_and_messages(open_page, lab, tmp_path, theme):
    name = "context_" + theme.split()[-1].lower()
    write_notebook(lab.root / f"{name}.ipynb", [SETUP, *PROMPTS, "%agent context"])
    notebook = open_page(lab, f"{name}.ipynb", theme)
    shown = notebook.page.locator("body").get_attribute("data-jp-theme-name")
    notebook.check(shown == theme, f"JupyterLab shows the theme {shown!r}, not {theme!r}")
    notebook.run_all()
    last = len(PROMPTS) + 1
    notebook.wait_finished(last, "the %agent context cell")
    view = notebook.cell(last).locator(".meowgent-context")
    notebook.wait_visible(view, "the context view")
    table = view.locator(".meowgent-context-table").inner_text()
    notebook.check(table.startswith("request 10 of the conversation, to FunctionModel"), f"table: {table!r}")
    notebook.check(
        "left out, the model's summary of them in their place." in table,
        f"the table should say what compaction did as sent: {table!r}",
    )
    bars = view.locator(".meowgent-context-turn")
    notebook.check(bars.count() == 10, f"one bar a request: {bars.count()}")
    widths = (
        bars.nth(9).locator("span[title]").evaluate_all("s => s.map(e => e.getBoundingClientRect().width)")
    )
    notebook.check(len(widths) >= 4 and all(w > 0 for w in widths), f"the last bar's parts: {widths}")
    folder = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    notebook.cell(last).screenshot(path=str(folder / f"{name}.png"))  # before the messages unfold
    label = bars.nth(9).locator("span").first.evaluate("e => e.getBoundingClientRect().height")
    notebook.check(label < 30, f"the bar's label 'request 10' wraps: {label} px high")
    messages = view.locator("details")
    notebook.check(not messages.evaluate("d => d.open"), "the messages should start folded")
    messages.locator("summary").click()
    sent = messages.inner_text()
    notebook.check(
        "[My summary of the earlier part of this conversation" in sent, f"messages: {sent[:300]!r}"
    )
    notebook.check("<b>not bold</b>" in sent, "a tool result's HTML should show as text")
    notebook.check(messages.locator("b:text('not bold')").count() == 0, "a tool result's HTML was rendered")
    colour = view.locator(".meowgent-context-table").evaluate("e => getComputedStyle(e).color")
    background = notebook.page.locator(".jp-NotebookPanel .jp-Notebook").evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    notebook.check(colour != background, f"the text ({colour}) should differ from the page ({background})")
