"""Shared test settings: no test reaches a real model server by accident."""

from __future__ import annotations

import pytest

import meowgent_nb.models


@pytest.fixture(autouse=True)
def _no_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch `ALLOW_MODEL_REQUESTS` off; a test talking to a local test server turns it back on."""
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", False)
