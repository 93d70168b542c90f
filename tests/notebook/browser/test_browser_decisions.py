"""The approval choices of issue 35 in a real browser: "Allow this exact call", "Allow calls like
this…" (a one-line rule, prefilled from the call) and "Deny with a reason", clicked and typed as a
person does (the reason with the keyboard only), and the card that says who decided.

JupyterLab in its light theme runs the whole scenario (in tests/notebook/browser/test_browser.py, sharing
its page); Notebook 7 in its dark theme the rule box and the reason. The screenshots decisions_rule[_dark].png (the rule box open, prefilled) and
decisions_done[_dark].png (the finished cells) go to $MEOWGENT_SCREENSHOTS when it is set, else to
the test's tmp dir. Chromium and playwright are required as for tests/notebook/browser/test_browser.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.notebook.browser.test_browser import SETUP, card
from tests.support.browser_notebook import write_notebook

RULES = """
added = []
def add_rule(text):
    if "->" not in text:
        raise ValueError(f"{text!r} is no rule: it needs '-> allow', '-> ask' or '-> deny'")
    added.append(text)

from meowgent_nb.notebook.approvals import WidgetApprover
magics = get_ipython().magics_manager.registry["AgentMagics"]
magics._approver = WidgetApprover(add_rule=add_rule)
"""
EXACT = 'exact = scripted("exact.txt", "one", "Written.")\nagain = scripted("exact.txt", "one", "Again.")\n'
LIKE = 'like = scripted("rule.txt", "two", "Written by rule.")\n'
DENY = 'deny = scripted("old.txt", "three", "I left it.")\n'
ARCHIVE = "use the archive instead"


def _cells(full: bool) -> list[str]:
    setup = SETUP + RULES + (EXACT if full else "") + LIKE + DENY
    exact = ["%%agent --model-object exact --new\nWrite.", "%%agent --model-object again --new\nAgain."]
    return [
        setup,
        *(exact if full else []),
        "%%agent --model-object like --new\nRule.",
        "%%agent --model-object deny --new\nNo.",
    ]


def test_the_rule_box_and_the_reason_in_notebook_7_dark(open_page, notebook7, tmp_path):
    decisions_scenario(open_page, notebook7, tmp_path, "JupyterLab Dark", full=False)


def decisions_scenario(open_page, server, tmp_path, theme: str, full: bool) -> None:
    """The scenario; JupyterLab's light run is in test_browser.py, whose page it shares."""
    app = server.app
    suffix = "_dark" if "Dark" in theme else ""
    name = f"decisions_{app}{suffix}"
    write_notebook(server.root / f"{name}.ipynb", _cells(full))
    notebook = open_page(server, f"{name}.ipynb", theme)
    folder = Path(os.environ.get("MEOWGENT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shown = notebook.page.locator("body").get_attribute("data-jp-theme-name")
    notebook.check(shown == theme, f"the page shows the theme {shown!r}, not {theme!r}")
    notebook.run_all()
    index = 1
    if full:
        first = notebook.cell(1)
        notebook.wait_visible(
            first.get_by_role("button", name="Allow this exact call"), "Allow this exact call"
        )
        first.get_by_role("button", name="Allow this exact call").click()
        notebook.wait_finished(1, "the first agent cell (after Allow this exact call)")
        notebook.wait_text(
            card(first).locator(".meowgent-approval"),
            "approved by you (this exact call, for this session)",
            "cell 1's card",
        )
        notebook.wait_finished(2, "the same call again (no click)")
        second = notebook.cell(2)
        notebook.wait_text(
            card(second).locator(".meowgent-approval"),
            "allowed by this exact call (approved earlier in this session)",
            "cell 2's card",
        )
        notebook.check(
            second.locator(".jp-OutputArea button").count() == 0, "the same exact call showed buttons"
        )
        index = 3

    rule_cell = notebook.cell(index)
    like = rule_cell.get_by_role("button", name="Allow calls like this\u2026")
    notebook.wait_visible(like, "Allow calls like this…")
    like.click()
    box = rule_cell.get_by_role("textbox", name="Rule:")
    notebook.wait_visible(box, "the rule box")
    prefill = box.input_value()
    notebook.check(
        prefill == 'write_file path="rule.txt" text="two" -> allow', f"the rule box opened with {prefill!r}"
    )
    rule_cell.screenshot(path=str(folder / f"decisions_rule{suffix}.png"))
    box.fill("write_file path=rule.*")  # no "-> allow": refused, and said why
    box.evaluate("e => { e.dataset.old = '1'; }")  # the refusal draws a fresh box
    rule_cell.get_by_role("button", name="Add rule and approve").click()
    notebook.wait_text(
        rule_cell.locator(".meowgent-edit-problem"), "is no rule: it needs", "the rule's problem"
    )
    fresh = rule_cell.locator(".meowgent-approval-row input[type=text]:not([data-old])").first
    notebook.wait_visible(fresh, "the fresh rule box")
    fresh.fill("write_file path=rule.* -> allow")
    rule_cell.get_by_role("button", name="Add rule and approve").click()
    notebook.wait_finished(index, "the rule cell (after Add rule and approve)")
    notebook.wait_text(
        card(rule_cell).locator(".meowgent-approval"),
        "approved by you (rule added: write_file path=rule.* -> allow)",
        "the rule cell's card",
    )
    written = (server.root / "rule.txt").read_text() if (server.root / "rule.txt").exists() else None
    notebook.check(written == "two", f"the approved call wrote {written!r}")

    deny_cell = notebook.cell(index + 1)
    opener = deny_cell.get_by_role("button", name="Deny with a reason")
    notebook.wait_visible(opener, "Deny with a reason")
    opener.focus()
    notebook.page.keyboard.press("Enter")  # the keyboard alone: open, type, Tab to the button, Enter
    reason = deny_cell.get_by_role("textbox", name="Reason:")
    notebook.wait_visible(reason, "the reason box")
    reason.focus()
    notebook.page.keyboard.type(ARCHIVE)
    notebook.page.keyboard.press("Tab")
    focused = notebook.page.evaluate("() => document.activeElement.textContent.trim()")
    notebook.check(focused == "Deny with this reason", f"Tab from the reason went to {focused!r}")
    notebook.page.keyboard.press("Enter")
    notebook.wait_finished(index + 1, "the denied cell")
    notebook.wait_text(
        card(deny_cell).locator(".meowgent-approval"), f'denied by you: "{ARCHIVE}"', "the denied card"
    )
    notebook.wait_text(
        card(deny_cell).locator(".meowgent-output"), f"Denied: {ARCHIVE}", "what the model read"
    )
    notebook.check(not (server.root / "old.txt").exists(), "the denied call ran")
    notebook.page.locator(".jp-Notebook").first.screenshot(path=str(folder / f"decisions_done{suffix}.png"))
