"""The code blocks of Markdown pages (README.md, docs/), read with markdown-it (MyST's own parser), and
run as a reader runs them: in order, in a real kernel.

`tests/test_readme.py` runs the front page's tour with it, `tests/test_docs_pages.py` every page of
the site. A block is a fence of any indentation (a list item's too) or a tilde fence: whatever
Markdown renders as code, so no block escapes the tests by its form.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.support.kernel_driver import Kernel, Run

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def site_pages() -> list[Path]:
    """The Markdown pages of the docs site, sorted (not the build)."""
    return sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.relative_to(DOCS).parts)


PYTHON = {"python", "py", "python3", "ipython", "ipython3"}
"""Fence languages that are code a reader types into a notebook cell: the blocks that are run."""

ILLUSTRATIVE = "*Illustrative"
"""How a page says, where a reader sees it, that the next block is not run: the paragraph right
before the block begins with this (rendered in italics, e.g. "*Illustrative, not run by the docs
tests: needs the embedded model.*")."""


@dataclass(frozen=True)
class Block:
    """A fenced code block of a Markdown page."""

    language: str
    code: str
    line: int
    """The line of its opening fence, counted from 1."""
    illustrative: bool = False
    """The paragraph before it says it is not run (`ILLUSTRATIVE`)."""
    closed: bool = True
    """Its closing fence is there (an unclosed fence runs to the end of the page)."""
    info: str = ""
    """The whole info string after the fence (a MyST directive's argument follows its name)."""
    end: int = 0
    """The line after its closing fence, counted from 1 (the page's lines[line - 1:end - 1] are the block)."""

    @property
    def cell(self) -> bool:
        """A block a reader types into a notebook cell: Python that runs, or a magic (``%tools``, ``%%agent``)."""
        return self.runs or (self.language == "" and self.code.startswith("%"))

    @property
    def runs(self) -> bool:
        """A block of Python the docs tests run."""
        return self.language in PYTHON and not self.illustrative


def page_blocks(text: str) -> list[Block]:
    """Every fenced block of ``text``, in order."""
    tokens = MarkdownIt("commonmark").parse(text)
    lines = text.splitlines()
    blocks = []
    for index, token in enumerate(tokens):
        if token.type != "fence" or token.map is None:
            continue
        before = tokens[index - 2] if index >= 2 and tokens[index - 1].type == "paragraph_close" else None
        illustrative = (
            before is not None and before.type == "inline" and before.content.startswith(ILLUSTRATIVE)
        )
        start, end = token.map
        last = lines[end - 1].strip() if end - 1 < len(lines) else ""
        closed = end - start >= 2 and last.startswith(token.markup) and set(last) <= set(token.markup[0])
        language = token.info.strip().split(" ", 1)[0].lower() if token.info.strip() else ""
        blocks.append(
            Block(
                language,
                token.content.rstrip("\n"),
                start + 1,
                illustrative,
                closed,
                token.info.strip(),
                end + 1,
            )
        )
    return blocks


def section_blocks(text: str, heading: str, source: str = "README.md") -> list[Block]:
    """The fenced blocks between ``heading`` (a line such as ``"## A 60-second tour"``) and the next
    heading of the same or a higher level."""
    level, title = len(heading) - len(heading.lstrip("#")), heading.lstrip("#").strip()
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [  # (level, title, first line) of every heading, outside code blocks
        (int(token.tag[1]), tokens[index + 1].content, token.map[0])
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.map is not None
    ]
    starts = [line for found, name, line in headings if (found, name) == (level, title)]
    if not starts:
        raise AssertionError(f"{source} has no heading {heading!r}; a test reads that section")
    start = starts[0]
    end = min(
        [line for found, _, line in headings if found <= level and line > start],
        default=len(text.splitlines()),
    )
    blocks = []
    for block in page_blocks(text):
        if start < block.line - 1 < end:
            if not block.closed:
                raise AssertionError(
                    f"{source} line {block.line}: a code block of {heading!r} is never closed"
                )
            blocks.append(block)
    return blocks


def start_kernel(cwd: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Kernel:
    """A kernel started as a user starts one, with these environment variables and no others of ours."""
    for name in list(os.environ):
        if name.startswith("MEOWGENT_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Kernel(str(cwd))


def run_cells(kernel: Kernel, cells: tuple[str, ...]) -> list[Run]:
    """Run each cell as nbval does (headless); every one must succeed."""
    runs = []
    for number, cell in enumerate(cells, 1):
        run = kernel.execute(cell, allow_stdin=False)
        # A cassette mismatch after a change to the prompts: record it again, `python -m tests.test_readme`.
        assert run.reply["status"] == "ok", (number, cell, run.reply.get("evalue"))
        runs.append(run)
    return runs


GETTING_STARTED = DOCS / "getting-started.md"
NOTEBOOK = DOCS / "getting-started.ipynb"
"""The getting-started page as a notebook, for Binder (``binder/README.md``): its cells are the
page's, its text the page's text; the notebook is made from the page, never edited by hand."""


def page_notebook(text: str) -> dict:
    """A notebook of a page: each block a reader types into a cell (`Block.cell`) is a code cell,
    and the text between them, with its other blocks, a Markdown cell. No outputs."""
    import nbformat

    lines = text.splitlines()
    cells, at = [], 0
    for block in page_blocks(text):
        if not block.cell:
            continue
        prose = "\n".join(lines[at : block.line - 1]).strip("\n")
        if prose:
            cells.append(nbformat.v4.new_markdown_cell(prose))
        cells.append(nbformat.v4.new_code_cell(block.code))
        at = block.end - 1
    rest = "\n".join(lines[at:]).strip("\n")
    if rest:
        cells.append(nbformat.v4.new_markdown_cell(rest))
    notebook = nbformat.v4.new_notebook(cells=cells)
    # A kernel named in the file: JupyterLab opens it without asking which kernel to start.
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for number, cell in enumerate(notebook.cells, 1):
        cell["id"] = f"cell-{number}"  # stable ids: the file changes only when the page does
    return notebook


def notebook_text(text: str) -> str:
    import nbformat

    return nbformat.writes(nbformat.from_dict(page_notebook(text))) + "\n"


if __name__ == "__main__":
    # python -m tests.support.doc_blocks: write docs/getting-started.ipynb from docs/getting-started.md.
    NOTEBOOK.write_text(notebook_text(GETTING_STARTED.read_text()))
    print(f"wrote {NOTEBOOK}")
