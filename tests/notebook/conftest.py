"""The browser tests' servers, browser and pages.

A server per app for the whole run of a worker (it only serves files and kernels); the browser
and its pages per test module (playwright's sync API holds an event loop on the thread, which
other modules' tests must not meet). `open_page` opens a test's notebook in the page of its app
and theme, and closes it after the test (tests/support/browser_pages.py).
"""

from __future__ import annotations

import pytest

from tests.support.browser_pages import Pages, chromium_browser, serve


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """JupyterLab (``jupyter lab``), for the whole run."""
    yield from serve(tmp_path_factory, "lab")


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory):
    """Notebook 7 (``jupyter notebook``), for the whole run."""
    yield from serve(tmp_path_factory, "notebook")


@pytest.fixture
def jupyter(request):
    """The Jupyter server a browser test's notebook runs in: ``lab`` or ``notebook7``, named by the
    test's (indirect) parameter."""
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, driven by playwright (skipped without them; a failure when CI is set)."""
    yield from chromium_browser()


@pytest.fixture(scope="module")
def pages(browser):
    """A page per app and theme, reused by the module's tests."""
    shared = Pages(browser)
    yield shared
    shared.close_all()


@pytest.fixture
def open_page(pages, tmp_path, request):
    """open_page(server, notebook, theme="JupyterLab Light"): the notebook open in its app's page."""
    opened = []
    failures = request.session.testsfailed

    def open_(server, notebook: str, theme: str = "JupyterLab Light"):
        opened.append(pages.open(server, notebook, tmp_path, theme))
        return opened[-1]

    yield open_
    for notebook in opened:
        pages.close(notebook, failed=request.session.testsfailed > failures)
