"""A tool's log reaches Python's `logging` (and so, where nothing configured it, stderr) bounded:
each message's first 2,000 characters, then how many more there were; any level, a message that
is text or not, through `ToolContext.log` or `log_to_python` (the agent's context logs through it)."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent_nb import ToolContext
from meowgent_nb.tools.context import LEVELS, MAX_LOG_CHARS, log_to_python


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.said: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append((record.name, record.levelno, record.getMessage()))


@contextlib.contextmanager
def kept() -> Iterator[Kept]:
    """What reaches the tools' loggers, every level."""
    logger, handler = logging.getLogger("meowgent_nb.tool"), Kept()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


LISTED = str(list(range(1_000_000)))
NUMBERS = dict(zip(LEVELS, (10, 20, 25, 30, 40, 50, 50, 50)))


def bounded(text: str) -> str:
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text) - 2000:,} more characters)"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("message", "said"),
    [
        pytest.param("x" * 10_000_000, "x" * 2000 + "... (9,998,000 more characters)", id="10 MB of text"),
        pytest.param("y" * 2001, "y" * 2000 + "... (1 more characters)", id="one character over"),
        pytest.param("z" * 2000, "z" * 2000, id="as long as the bound"),
        pytest.param(
            list(range(1_000_000)), LISTED[:2000] + "... (7,886,890 more characters)", id="a long list"
        ),
        pytest.param(b"\x00" * 1000, str(b"\x00" * 1000)[:2000] + "... (2,003 more characters)", id="bytes"),
        pytest.param(3, "3", id="a number"),
    ],
)
def test_a_tool_s_log_message_reaches_logging_bounded(level, message, said):
    with kept() as handler:
        ToolContext(tool="loud").log(level, message)
        log_to_python("loud", level, message)
    assert handler.said == [("meowgent_nb.tool.loud", NUMBERS[level], said)] * 2


# Texts around the bound and far past it (a plain st.text seldom passes 2,000 characters).
TEXTS = st.builds(
    lambda piece, times: piece * times, st.text(min_size=1, max_size=8), st.integers(0, 2 * MAX_LOG_CHARS)
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LEVELS), TEXTS)
def test_any_message_is_its_first_2000_characters_then_how_many_more(level, text):
    with kept() as handler:
        ToolContext(tool="t").log(level, text)
    ((_, _, said),) = handler.said
    assert said == bounded(text)
    assert len(said) <= 2000 + len("... (30,000 more characters)")


def test_where_nothing_configured_logging_stderr_gets_the_bounded_warnings_and_above():
    # Python's last resort, in a process of its own: pytest's logging would catch the messages first.
    script = textwrap.dedent(
        """
        from meowgent_nb import ToolContext
        from meowgent_nb.tools.context import LEVELS, log_to_python

        ctx = ToolContext(tool="loud")
        for level in LEVELS:
            ctx.log(level, level + ":" + "x" * 10_000_000)
        ctx.log("error", list(range(1_000_000)))
        log_to_python("loud", "critical", "y" * 10_000_000)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    expected = [
        f"{level}:" + "x" * (1999 - len(level)) + f"... ({10_000_001 + len(level) - 2000:,} more characters)"
        for level in LEVELS[3:]
    ]
    expected += [LISTED[:2000] + "... (7,886,890 more characters)"]
    expected += ["y" * 2000 + "... (9,998,000 more characters)"]
    assert done.stderr.splitlines() == expected
