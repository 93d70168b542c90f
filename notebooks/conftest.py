"""The course's own test configuration: the course trusts its rules file, explicitly, for its kernels.

``approvals.toml`` here allows the one deletion notebook 3 teaches (``delete_file name=*.log``). A
rules file from a folder asks and denies at once, but its allow rules decide only once the file is
trusted (docs/guides/approvals.md, "Trust"): a person clicks **Trust these rules**; a run with no
one to click, like this one, names the file in ``MEOWGENT_TRUST_RULES``. Without this setting the
rule is ignored and the deletion denied (tests/notebook/test_course_trust.py checks that). No
notebook trusts its own folder's file: that is the test configuration's word, here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

RULES_FILE = Path(__file__).resolve().with_name("approvals.toml")
"""The rules file the course's runs trust."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    """nbval starts a notebook's kernel while the notebook's first cell is set up, and the kernel
    keeps the environment it started with: the trust holds for the course's kernels, and nowhere
    else in the test run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEOWGENT_TRUST_RULES", str(RULES_FILE))
        return (yield)
