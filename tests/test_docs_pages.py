"""Every page of the docs site, run as a reader runs it: its Python blocks in order, in one fresh
kernel per page (headless, as nbval runs a notebook), unless the paragraph before a block says
where a reader sees it that the block is illustrative (`tests.support.doc_blocks.ILLUSTRATIVE`).

A page with Python in a form these tests do not run (a ``{code-block} python`` directive, an
unclosed fence) fails, naming the line, so no example is left unrun by the way it is written. The
recording-and-testing guide's example test file is also run by pytest beside a user's notebook.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.doc_blocks import (
    DOCS,
    GETTING_STARTED,
    NOTEBOOK,
    PYTHON,
    ROOT,
    notebook_text,
    page_blocks,
    section_blocks,
    site_pages,
    start_kernel,
)

PAGES = site_pages()
NAMES = [str(page.relative_to(DOCS)) for page in PAGES]


def unrun_python(text: str) -> list[str]:
    """Lines of ``text`` with Python the docs tests would not run, and why."""
    problems = []
    for block in page_blocks(text):
        argument = block.info.split()[1].lower() if len(block.info.split()) > 1 else ""
        if block.language == "{code-cell}" or (block.language.startswith("{") and argument in PYTHON):
            problems.append(f"line {block.line}: a {block.language} directive; write a ```python fence")
        elif block.language in PYTHON and not block.closed:
            problems.append(f"line {block.line}: the block is never closed")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=NAMES)
def test_every_python_block_of_the_page_runs_in_order(page, tmp_path, monkeypatch):
    text = page.read_text()
    assert unrun_python(text) == []
    blocks = [block for block in page_blocks(text) if block.runs]
    if not blocks:
        return
    kernel = start_kernel(tmp_path, monkeypatch)
    try:
        for block in blocks:
            run = kernel.execute(block.code, allow_stdin=False)
            reply = run.reply
            assert reply["status"] == "ok", (
                f"docs/{page.relative_to(DOCS)} line {block.line}: the block failed with"
                f" {reply.get('ename')}: {reply.get('evalue')}\n{block.code}"
            )
    finally:
        kernel.shutdown()


def test_the_guides_are_one_per_concern():
    guides = sorted(path.stem for path in (DOCS / "guides").glob("*.md"))
    assert guides == [
        "agent-cells",
        "approvals",
        "context",
        "evals",
        "mcp",
        "models",
        "notebook-workspace",
        "recording-and-testing",
        "teaching-a-class",
        "tools",
        "tracing",
    ]


def test_the_front_page_is_short_and_says_what_and_for_whom_first():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 200
    first_screen = " ".join(lines[:15])
    assert "inside Jupyter notebooks" in first_screen and "It is for teachers" in first_screen


def test_the_front_pages_python_is_all_in_its_tested_tour():
    # tests/test_readme.py runs the tour's blocks; a Python block elsewhere in README.md would run nowhere.
    readme = (ROOT / "README.md").read_text()
    tour = {block.line for block in section_blocks(readme, "## A 60-second tour")}
    elsewhere = [
        block.line for block in page_blocks(readme) if block.language in PYTHON and block.line not in tour
    ]
    assert elsewhere == []


def test_a_block_is_skipped_only_after_the_visible_marker():
    text = (
        "*Illustrative, not run: needs Ollama.*\n\n```python\nA\n```\n\n"
        "<!-- illustrative -->\n```python\nB\n```\n\n"
        "- a list item\n\n  ```py\n  C\n  ```\n\n"
        "~~~ipython\n%%agent\nD\n~~~\n\n"
        "Text *Illustrative* in the middle.\n\n```python\nE\n```\n"
    )
    assert [(b.code, b.runs) for b in page_blocks(text)] == [
        ("A", False),
        ("B", True),
        ("C", True),
        ("%%agent\nD", True),
        ("E", True),
    ]


def test_python_in_a_form_that_is_not_run_is_named():
    text = "# T\n\n```{code-block} python\nx = 1\n```\n\n```{code-cell} ipython3\ny = 2\n```\n\n```python\nz = 3\n"
    assert unrun_python(text) == [
        "line 3: a {code-block} directive; write a ```python fence",
        "line 7: a {code-cell} directive; write a ```python fence",
        "line 11: the block is never closed",
    ]


def test_the_getting_started_notebook_is_the_page():
    # Binder opens it (binder/README.md); it is made from the page, so the two cannot differ.
    assert NOTEBOOK.read_text() == notebook_text(GETTING_STARTED.read_text()), (
        "docs/getting-started.ipynb is not what docs/getting-started.md makes: python -m tests.support.doc_blocks"
    )


def test_a_pages_notebook_has_its_cells_and_its_text():
    import json

    page = "# T\n\nSet up:\n\n```python\nx = 1\n```\n\n```bash\npip install it\n```\n\n```\n%%agent\nHi\n```\n\nEnd.\n"
    cells = [(c["cell_type"], "".join(c["source"])) for c in json.loads(notebook_text(page))["cells"]]
    assert cells == [
        ("markdown", "# T\n\nSet up:"),
        ("code", "x = 1"),
        ("markdown", "```bash\npip install it\n```"),
        ("code", "%%agent\nHi"),
        ("markdown", "End."),
    ]


# --- the recording-and-testing guide's example test file, run by pytest ------------------------

TESTING = "## Testing your own notebooks"


def test_the_example_test_file_passes_beside_a_users_notebook(tmp_path):
    # The section's one Python block is a test file; it runs where a user keeps it, beside their
    # notebook (tests/user_project's), with no conftest.py: the fixtures come from the plugin.
    guide = DOCS / "guides" / "recording-and-testing.md"
    blocks = [
        b for b in section_blocks(guide.read_text(), TESTING, source=str(guide)) if b.language == "python"
    ]
    assert [b.code.splitlines()[0] for b in blocks] == ["# test_my_agent.py"]
    (tmp_path / "test_my_agent.py").write_text(blocks[0].code + "\n")
    notebook = ROOT / "tests" / "user_project" / "scripted_agent.ipynb"
    (tmp_path / notebook.name).write_text(notebook.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEOWGENT_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_agent.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("2 passed in "), done.stdout
