"""Sphinx configuration of meowgent_nb's documentation site.

Build it (the `docs` extra installs what it needs; nothing is fetched but the packages):

    pip install -e ".[docs]" && sphinx-build -W -b html docs docs/_build/html

Pages are MyST Markdown; the course notebooks are rendered by myst-nb from their stored outputs
(``nb_execution_mode = "off"``): nbval re-executes them in the test suite from their cassettes and
checks that they give exactly these outputs, so the pages show what a run gives without running a
model here. The API reference is generated from the docstrings of the public modules' ``__all__``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the package of this checkout, whatever is installed
sys.path.insert(0, str(DOCS / "_ext"))

project = "meowgent_nb"
author = "meowgent_nb maintainers"
copyright = "meowgent_nb maintainers"

extensions = [
    "myst_nb",  # MyST Markdown pages and .ipynb pages (it brings myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",  # Google-style Args: / Returns: / Raises:, the package's convention
    "meowgent_docs",  # the course notebooks copied in, and the public-API directive
]

# _build is the output; the getting-started notebook is made from its page (tests/support/doc_blocks.py).
# getting-started.ipynb is getting-started.md as a notebook, for Binder: the page is the .md.
exclude_patterns = ["_build", "**/.ipynb_checkpoints", "getting-started.ipynb"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # "#how-a-case-is-scored" links to a heading, checked by the build

# Rendered from what the notebooks saved; never a live model at build time.
nb_execution_mode = "off"
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # a class's Attributes: as fields, not a second entry beside autodoc's own
default_role = "py:obj"  # `Tool` in a docstring links to it when it is documented

html_theme = "pydata_sphinx_theme"
html_title = "meowgent_nb"
html_static_path = ["_static"]
html_css_files = ["meowgent.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
}
html_show_sourcelink = False
# Pages with no section of pages to navigate: no left sidebar (the course keeps its list of notebooks).
html_sidebars = {
    "guides/*": [],
    **{
        page: []
        for page in (
            "index",
            "getting-started",
            "api",
            "troubleshooting",
            "benchmarks",
            "architecture",
            "changelog",
        )
    },
}
