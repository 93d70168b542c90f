"""nbval settings for the course notebooks, found wherever pytest is started from."""

from __future__ import annotations

from pathlib import Path


def pytest_configure(config) -> None:
    # The transcript's HTML holds measured times; this file replaces them (see its comments).
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(Path(__file__).with_name("nbval_sanitize.cfg"))


# Notebooks whose agent cells talk to a real model (Ollama, else the embedded one).
# 05_real_model.ipynb is not one: it replays a cassette recorded with the embedded model.
REAL_MODEL_NOTEBOOKS = {"06_testing_tool_descriptions.ipynb"}


def pytest_collection_modifyitems(config, items) -> None:
    # `pytest -m "not real_model"` leaves them out, as it does the real-model tests; without any
    # model (no local model installed, no Ollama server) they are skipped, as those tests are.
    import os

    import pytest

    from meowgent_nb.models.resolve import local_model_problem, ollama_answers

    real = [item for item in items if item.path.name in REAL_MODEL_NOTEBOOKS]
    if not real:
        return
    problem = local_model_problem()
    if problem is not None and ollama_answers(os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")):
        problem = None
    for item in real:
        item.add_marker(pytest.mark.real_model)
        if problem is not None:
            item.add_marker(pytest.mark.skip(reason=f"no model to run this notebook on: {problem}"))
