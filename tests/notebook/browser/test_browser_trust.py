"""A folder's rules file that waits for trust, seen and trusted in a real browser: JupyterLab's light
theme and Notebook 7's dark one.

Each test writes a notebook into a folder of its server's root, beside an ``approvals.toml`` whose
one rule, ``delete_file path=** -> allow``, would allow every ``delete_file`` call. The first
``%%agent`` cell (its `ScriptedModel` calls ``delete_file``) shows the trust panel (the file's one
line, its rules, **Trust these rules**) and the call's card with its note and the approval
buttons; the person clicks Deny (the rule decides nothing yet), then **Trust these rules** in the
finished cell, and runs the next cell with Shift+Enter: its call runs without a card's buttons,
allowed by the rule. The trust is written to the server's own ``$MEOWGENT_CONFIG_DIR`` (a tmp
folder: `JupyterLab.config_dir`), neither to the person's config nor to the tests' store.

It saves trust-rules-{light,dark}.png (the panel, the card and its buttons),
trust-rules-trusted-{light,dark}.png (the panel after the click) and trust-rules-allowed-{light,dark}.png
(the second cell) into $MEOWGENT_SCREENSHOTS when set, else a tmp dir;
docs/screenshots/trust-rules-{light,dark}.png are the first two.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from tests.notebook.browser.test_browser import card
from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import CONTRAST, LAYOUT, NARROW, VIEWPORT

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
RULES = 'rules = ["delete_file path=** -> allow"]\n'
SETUP = '''\
%load_ext meowgent_nb
import json, pathlib
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    pathlib.Path(path).unlink()
    return f"deleted {path}"

def deleting(path):
    call = json.dumps({"name": "delete_file", "arguments": {"path": path}})
    return ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."])

for name in ("first.txt", "second.txt"):
    pathlib.Path(name).write_text("old")
first, second = deleting("first.txt"), deleting("second.txt")
'''
FIRST = "%%agent --model-object first --new\nDelete first.txt."
SECOND = "%%agent --model-object second --new\nDelete second.txt."
NOTE = "a rule in approvals.toml would allow this; the file is not trusted (%agent trust)"


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_a_rules_file_waits_for_the_person_s_trust_then_its_allow_rule_decides(
    jupyter, open_page, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    where = f"trust_{suffix}/course-from-a-colleague/week-3-files"  # a long path, to wrap in a narrow window
    folder = server.root / where
    folder.mkdir(parents=True)
    (folder / "approvals.toml").write_text(RULES)
    rules_file = folder.resolve() / "approvals.toml"
    sha256 = hashlib.sha256(RULES.encode()).hexdigest()
    write_notebook(folder / "trust.ipynb", [SETUP, FIRST, SECOND])
    nb = open_page(server, f"{where}/trust.ipynb", theme)
    shown = nb.page.locator("body").get_attribute("data-jp-theme-name")
    nb.check(shown == theme, f"the page shows the theme {shown!r}, not {theme!r}")

    nb.cell(0).locator(".jp-InputArea-editor").click()
    nb.page.keyboard.press("Shift+Enter")  # the setup; the first agent cell is selected
    nb.page.keyboard.press("Shift+Enter")  # the first agent cell runs; the second is selected
    first = nb.cell(1)
    trust = first.get_by_role("button", name="Trust these rules")
    nb.wait_visible(trust, "the Trust these rules button in the first agent cell")
    nb.wait_visible(first.get_by_role("button", name="Approve"), "the Approve button of the delete_file call")
    trust_panel = first.locator(".meowgent-trust-panel")
    line = trust_panel.locator(".meowgent-trust-line").inner_text()
    nb.check(
        line == f"The rules file {rules_file} has 1 allow rule, ignored until you trust it (its ask and deny"
        " rules apply).",
        f"the trust panel's line reads {line!r}",
    )
    rules = trust_panel.locator(".meowgent-trust-rules").inner_text()
    nb.check(rules == "  1. delete_file path=** -> allow", f"the trust panel's rules read {rules!r}")
    content = trust_panel.locator(".meowgent-trust-sha256").inner_text()
    nb.check(
        content == f"Trusting applies to this content only (sha256 {sha256[:16]}...): an edit to the file"
        " asks again.",
        f"the trust panel's content line reads {content!r}",
    )
    contrast = trust.evaluate(CONTRAST)
    nb.check(contrast >= 4.5, f"Trust these rules: its text's contrast is {contrast}:1 (< 4.5)")
    nb.page.set_viewport_size(NARROW)  # a narrow window: the long path wraps inside the panel
    try:
        for part in (".meowgent-trust-line", ".meowgent-trust-rules", ".meowgent-trust-sha256"):
            shown = trust_panel.locator(part).evaluate(LAYOUT)
            nb.check(shown["fits"], f"{part} runs past the output area in a narrow window: {shown}")
            nb.check(shown["spacing"] <= 1.6, f"{part}'s lines are {shown['spacing']} fonts apart")
    finally:
        nb.page.set_viewport_size(VIEWPORT)
    note = card(first).locator(".meowgent-server-asked").all_inner_texts()
    nb.check(note == [NOTE], f"the waiting card's notes: {note!r}")
    nb.check(nb.prompt(1) == "[*]:", "the first agent cell should still run while its call waits")
    first.screenshot(path=str(screenshots / f"trust-rules-{suffix}.png"))

    first.get_by_role("button", name="Deny", exact=True).click()
    nb.wait_finished(1, "the first agent cell (after Deny)")
    nb.wait_text(card(first).locator(".meowgent-approval"), exactly("denied by you"), "the denied card")
    nb.check((folder / "first.txt").exists(), "Deny was clicked, but first.txt was deleted")

    trust.click()
    confirmation = (
        f"Trusted: the allow rules of {rules_file} apply from the next call on, until the file changes"
        " (%agent trust --remove to undo)."
    )
    done = trust_panel.locator(".meowgent-trust-done")
    nb.wait_text(done, exactly(confirmation), "the trust panel's confirmation")
    nb.wait_hidden(trust, "Trust these rules, once it trusted the file")
    shown = done.evaluate(LAYOUT)
    nb.check(shown["fits"] and shown["spacing"] <= 1.6, f"the confirmation's layout: {shown}")
    store = json.loads((server.config_dir / "trusted_rules.json").read_text())
    trusted = [(e["path"], e["sha256"]) for e in store["trusted"]]
    nb.check(trusted == [(str(rules_file), sha256)], f"the server's trust store holds: {store!r}")

    nb.cell(2).locator(".jp-InputArea-editor").click()
    nb.page.keyboard.press("Shift+Enter")
    nb.wait_finished(2, "the second agent cell (the rule trusted)")
    second = nb.cell(2)
    nb.wait_text(
        card(second).locator(".meowgent-approval"),
        exactly("allowed by rule 1 (delete_file path=**)"),
        "the second card's decision",
    )
    nb.check(second.locator(".jp-OutputArea button").count() == 0, "the trusted rule's call showed buttons")
    nb.check(card(second).locator(".meowgent-server-asked").count() == 0, "the allowed card has a note")
    nb.check(not (folder / "second.txt").exists(), "the call the rule allowed did not delete second.txt")
    trust_panel.screenshot(path=str(screenshots / f"trust-rules-trusted-{suffix}.png"))
    second.screenshot(path=str(screenshots / f"trust-rules-allowed-{suffix}.png"))


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")
