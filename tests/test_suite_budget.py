"""The suite's per-test budget (tests/conftest.py): 60 s on a machine no busier than the suite
makes it (unless MEOWGENT_TEST_BUDGET says otherwise), more in proportion when other work loads it."""

from __future__ import annotations

import os

import pytest

from tests.conftest import BUDGET, budget


@pytest.mark.parametrize(
    ("load", "cores", "times"),
    [(0.3, 2, 1.0), (2.0, 2, 1.0), (4.0, 2, 2.0), (7.5, 2, 3.75), (3.0, 1, 3.0), (8.0, 8, 1.0)],
)
def test_the_budget_grows_with_the_load_beyond_one_process_per_core(monkeypatch, load, cores, times):
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 0.0, 0.0))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert budget() == BUDGET * times  # 60 s, unless MEOWGENT_TEST_BUDGET says otherwise


def test_without_a_load_average_the_budget_is_the_budget(monkeypatch):
    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert budget() == BUDGET
