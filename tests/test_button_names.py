"""Every button the README and the course notebooks name is a button the code draws.

A lesson that says "click **Approve with these arguments**" under a cell whose button reads
"Approve these arguments" sends a student looking for nothing. The labels come from the code
(`meowgent_nb.notebook._labels`, the one place the buttons get their words); the names are read
from the README and every markdown cell of ``notebooks/*.ipynb``:

- a bold name (``**Approve**``) or a slash list (``Approve / Deny``) in a sentence that speaks
  of a button or a click, or in a row of a table whose first column is headed "button";
- any bold name that begins like a button does (``**Approve ...**``, ``**Stop ...**``): a
  near-miss of a real label is the likeliest slip.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from meowgent_nb.notebook._labels import BUTTONS
from tests.support.doc_blocks import site_pages

ROOT = Path(__file__).resolve().parents[1]
BOLD = re.compile(r"\*\*([A-Z][^*]*?)\*\*")
WORDS = r"[A-Z][a-z]+(?: [a-z]+)*"
SLASH_LIST = re.compile(rf"\b{WORDS}(?: / {WORDS})+")
BUTTON_TALK = re.compile(r"\bbuttons?\b|\bclick|\bpress", re.IGNORECASE)
FIRST_WORDS = {label.split()[0] for label in BUTTONS}


LEAD_IN = re.compile(r"^(\s*[-*]\s+)\*\*([^*]+)\*\*", re.MULTILINE)


def _label_at_start(item: str) -> str:
    """A slash list's item up to where its words stop naming a button: the longest label it begins
    with, else the words before "button"."""
    item = re.sub(r" buttons?\b.*$", "", item)
    starts = [label for label in BUTTONS if item == label or item.startswith(label + " ")]
    return max(starts, key=len) if starts else item


def _named(text: str) -> list[str]:
    names: list[str] = []
    for found in BOLD.findall(text):
        if not found.endswith((".", ":")):  # a bold lead-in ("**About the saved outputs.**"), not a label
            names.append(found.strip())
    for found in SLASH_LIST.findall(text):
        names += [_label_at_start(item) for item in found.split(" / ")]
    return names


def _begins_like_a_button(names: list[str]) -> list[str]:
    return [name for name in names if name.split()[0] in FIRST_WORDS and "/" not in name]


def button_names(text: str) -> list[str]:
    """The button names ``text`` (Markdown) mentions, in order, with repeats."""
    names: list[str] = []
    in_button_table = False
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith("```"):
            continue
        rows = [line for line in block.splitlines() if line.startswith("|")]
        for row in rows:
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            if cells[0].lower() in ("button", "buttons"):
                in_button_table = True
            elif in_button_table and not set(cells[0]) <= set("-: "):
                names += _named(row)
        if not rows:
            in_button_table = False
        # A list item's bold lead-in ("- **Sampling** (...)") is a topic, unless it begins like a button.
        names += _begins_like_a_button([lead for _, lead in LEAD_IN.findall(block)])
        lines = LEAD_IN.sub(r"\1\2", block).splitlines()
        prose = " ".join(line for line in lines if not line.startswith("|"))
        for sentence in re.split(r"(?<=[.;!?])\s+", prose):
            if BUTTON_TALK.search(sentence):
                names += _named(sentence)
            else:
                names += _begins_like_a_button(_named(sentence))
    return names


def documents() -> list[tuple[str, str]]:
    """(where, Markdown) of the README, of every page of the docs site and of every markdown cell
    of the course notebooks."""
    found = [("README.md", (ROOT / "README.md").read_text())]
    found += [(str(page.relative_to(ROOT)), page.read_text()) for page in site_pages()]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(notebook.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                found.append((f"notebooks/{notebook.name}, cell {index + 1}", "".join(cell["source"])))
    return found


def test_every_button_the_docs_name_is_a_label_of_the_code():
    wrong = [
        f"{where}: **{name}**"
        for where, text in documents()
        for name in button_names(text)
        if name not in BUTTONS
    ]
    assert wrong == [], (
        f"Buttons named in the docs that the code does not draw (labels: {sorted(BUTTONS)}):\n"
        + "\n".join(wrong)
    )


def test_the_docs_name_the_buttons_of_the_approval_and_stop():
    # The reading is not vacuous: the approval buttons and Stop are found where the course teaches them.
    named = {name for _, text in documents() for name in button_names(text)}
    assert {
        "Approve",
        "Edit arguments",
        "Check",
        "Approve these arguments",
        "Deny",
        "Always allow",
        "Stop",
        "Accept",
        "Decline",
        "Cancel",
    } <= named


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "| button | what happens |\n|---|---|\n"
            "| **Edit arguments** | then **Approve with these arguments** runs it |",
            ["Edit arguments", "Approve with these arguments"],
        ),
        (
            "Right under it are the buttons Approve / Edit arguments / Deny.",
            ["Approve", "Edit arguments", "Deny"],
        ),
        ("It shows Approve / Deny buttons in the cell.", ["Approve", "Deny"]),
        ("Then click **Send answer** to go on.", ["Send answer"]),
        ("The **Stop it** link.", ["Stop it"]),  # begins like a button: checked wherever it stands
        ("**About the saved outputs.** Nobody can click here.", []),
        (
            "- **Sampling** (`sampling/createMessage`): the person clicks **Let the model answer**.",
            ["Let the model answer"],
        ),
        ("- **Approve all**: a list item that begins like a button.", ["Approve all"]),
        ("The **Model Context Protocol** is a standard.", []),
        ("```\nclick **Nothing in code**\n```", []),
    ],
)
def test_button_names_read_from_markdown(text, names):
    assert button_names(text) == names
