"""A served notebook's call approved in the browser, in the serving cell after it finished: in
JupyterLab's light theme and Notebook 7's dark one.

The notebook defines ``t_remove`` (``approval=True``), serves with ``%tools serve --notebook
--include-approval-tools`` and runs one more cell; every cell has finished. An MCP client in
another process (`outside_client`) calls ``t_remove``; the card with who asked and the buttons
appears in the serving cell's output, the person clicks Approve there, the client gets the
result, and the card then says what was decided. ``%tools serve --stop`` leaves nothing listening.

It saves served-notebook-{light,dark}.png (the card waiting) into $MEOWGENT_SCREENSHOTS when set,
else a tmp dir; docs/screenshots/served-notebook-{light,dark}.png are those.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

from tests.notebook.outside_client import answer, outside
from tests.support.browser_notebook import write_notebook

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
TOOL = '''\
%load_ext meowgent_nb
from meowgent_nb import tool

@tool(approval=True)
def t_remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"
'''


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("notebook7", "JupyterLab Dark", "dark"), ("lab", "JupyterLab Light", "light")],
    indirect=["jupyter"],
)
def test_a_served_call_is_approved_in_the_finished_serving_cell(jupyter, open_page, tmp_path, theme, suffix):
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    name = f"serving_{suffix}.ipynb"
    write_notebook(
        jupyter.root / name, [TOOL, "%tools serve --notebook --include-approval-tools", "n = 41 + 1"]
    )
    nb = open_page(jupyter, name, theme)
    nb.run_all()
    said = nb.wait_text(
        nb.cell(1).locator(".jp-OutputArea"), "Stop with %tools serve --stop.", "the serving output"
    )
    nb.wait_finished(2, "the cell after the serving one")
    url, token = re.search(r"at (http://127\.0\.0\.1:(\d+)/mcp)", said), re.search(r"Token: (\S+)", said)
    nb.check(url is not None and token is not None, f"the output has no address or token: {said!r}")
    assert url is not None and token is not None
    serving = nb.cell(1)
    nb.wait_text(
        serving, "Calls from MCP clients that need approval will ask here.", "the serving cell's box"
    )

    client = outside(url.group(1), token.group(1), {"name": "t_remove", "arguments": {"path": "a.txt"}})
    approve = serving.get_by_role("button", name="Approve", exact=True)
    nb.wait_visible(approve, "the Approve button of the served call, in the serving cell", 60)
    card = nb.wait_text(serving, "Asked by MCP client 'outside-agent'", "who asked, on the card")
    nb.check('"path": "a.txt"' in card, f"the card shows the call's arguments: {card!r}")
    nb.check(client.poll() is None, "the client should wait for the person")
    serving.screenshot(path=str(screenshots / f"served-notebook-{suffix}.png"))
    approve.click()
    assert answer(client) == [False, ["removed a.txt"]]
    nb.wait_text(serving, re.compile(r"\u2192 approved by you"), "the decision on the card")
    nb.wait_hidden(approve, "the Approve button, once decided")

    write_stop = nb.cell(2)
    write_stop.click()
    nb.page.keyboard.press("Escape")
    nb.page.keyboard.press("b")  # a new cell below, as a person does
    nb.page.keyboard.press("Enter")
    nb.page.keyboard.type("%tools serve --stop")
    nb.page.keyboard.press("Shift+Enter")
    nb.wait_text(nb.cell(3), f"Stopped serving at {url.group(1)}.", "the stop")
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(url.group(2)))) != 0
