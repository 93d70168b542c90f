"""A notebook's cell metadata is untrusted input: an expectation of megabytes there makes an error of
one readable line, and the report the pytest plugin reads stays bounded."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError

from meowgent_nb.notebook.magics._cell_expectation import cell_expectation, cell_report

HUGE = "search(query='" + "x" * 10_000_000 + "')"


def test_two_expectations_one_of_megabytes_are_named_in_one_short_line():
    with pytest.raises(UsageError) as raised:
        cell_expectation("'search'", {"meowgent": {"expect": HUGE}})
    assert str(raised.value) == (
        "%%agent: two expectations for this cell: --expect 'search' and (the cell's metadata"
        " 'meowgent.expect') \"search(query='xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
        " (9,999,938 more characters); keep one."
    )


def test_metadata_of_the_wrong_shape_is_named_in_one_short_line():
    with pytest.raises(UsageError) as raised:
        cell_expectation(None, {"meowgent": ["x" * 1_000_000]})
    message = str(raised.value)
    assert message.startswith("%%agent: the cell's metadata 'meowgent' must be an object such as")
    assert message.endswith(
        'got ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (999,924 more characters)'
    )


def test_the_report_of_a_cell_whose_expectation_is_megabytes_long_holds_its_start():
    with pytest.raises(UsageError):
        cell_expectation(None, {"meowgent": {"expect": HUGE}})
    report = json.loads(cell_report())
    assert report["expected"] == HUGE[:80] + "... (9,999,936 more characters)"
    assert len(cell_report()) < 1000
