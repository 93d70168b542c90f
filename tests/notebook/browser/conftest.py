"""One Chromium and its pages for the browser test modules a worker runs one after another.

tests/notebook/conftest.py's ``browser`` and ``pages`` live for a module; here they live for this
package: loading JupyterLab or Notebook 7 into a page is most of a short browser test, and the next
module's notebooks open in the pages the last one left. Playwright's sync API keeps an event loop
running on the thread while it is open, which a later ``asyncio.run`` on the worker cannot meet:
a package-scoped fixture is closed as soon as the worker's next test is outside this package
(pytest-xdist keeps a test back until it knows the next one), so no other test ever runs under it.
"""

from __future__ import annotations

import pytest

from tests.support.browser_pages import Pages, chromium_browser


@pytest.fixture(scope="package")
def browser():
    """Debian's Chromium, driven by playwright, for this package's consecutive tests on a worker."""
    yield from chromium_browser()


@pytest.fixture(scope="package")
def pages(browser):
    """A page per app and theme, reused by this package's modules."""
    shared = Pages(browser)
    yield shared
    shared.close_all()
