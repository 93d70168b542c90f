"""Shared test settings: no test reaches a real model server by accident."""

from __future__ import annotations

import pytest

import meowgent_nb.models


@pytest.fixture(autouse=True)
def _no_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch `ALLOW_MODEL_REQUESTS` off; a test talking to a local test server turns it back on."""
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", False)


@pytest.fixture
def ip():
    """A real IPython shell with the extension loaded; names a test adds are removed after it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    start_ipython()  # once per process; later calls return None
    shell = get_ipython()
    before = set(shell.user_ns)
    shell.run_line_magic("load_ext", "meowgent_nb")
    yield shell
    shell.run_line_magic("unload_ext", "meowgent_nb")
    for name in set(shell.user_ns) - before:
        del shell.user_ns[name]
