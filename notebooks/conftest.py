"""nbval settings for the course notebooks, found wherever pytest is started from."""

from __future__ import annotations

from pathlib import Path


def pytest_configure(config) -> None:
    # The transcript's HTML holds measured times; this file replaces them (see its comments).
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(Path(__file__).with_name("nbval_sanitize.cfg"))
