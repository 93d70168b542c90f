"""The browser tests' servers and browser: one of each per test module that asks for them."""

from __future__ import annotations

import pytest

from tests.browser_notebook import chromium_browser, serve


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab (``jupyter lab``), for the whole module."""
    yield from serve(tmp_path_factory, "lab")


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """Notebook 7 (``jupyter notebook``), for the whole module."""
    yield from serve(tmp_path_factory, "notebook")


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, driven by playwright (skipped without them; a failure when CI is set)."""
    yield from chromium_browser()
