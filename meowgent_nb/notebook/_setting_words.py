"""The words a person writes for the approval setting and the cassette mode, and their old spellings.

`APPROVALS` are ``ask``, ``every``, ``allow`` and ``deny`` (`OLD_APPROVALS` maps the old ones);
cassette modes are `recording.cassette.MODES`. `approval_word` and `cassette_mode_word` turn an old
spelling into its new word and say so once per kernel on stderr (`say_old_word`).
"""

from __future__ import annotations

import sys

from ..recording.cassette import MODE_NAMES
from ._kernel import is_headless

__all__ = ["APPROVALS", "OLD_APPROVALS", "approval_word", "cassette_mode_word", "say_old_word"]

APPROVALS = ("ask", "every", "allow", "deny")
"""The approval settings, the default first."""

OLD_APPROVALS = {"all": "allow", "none": "deny"}
"""The old spellings of approval settings, and the word each is now."""

_SAID: set[str] = set()


def say_old_word(old: str, new: str) -> None:
    """Say on stderr, once per process for each ``old``, that ``new`` replaces it.

    In a headless run it writes to the process's own stderr, so saved outputs stay as they were.

    Args:
        old: The setting as the person wrote it (``MEOWGENT_APPROVE=all``, ``--approve all``).
        new: The same setting in the new word (``MEOWGENT_APPROVE=allow``).
    """
    if old in _SAID:
        return
    _SAID.add(old)
    stream = sys.__stderr__ if is_headless() and sys.__stderr__ is not None else sys.stderr
    print(f"meowgent_nb: {old} is an old spelling of {new}; it still works, but write {new}.", file=stream)


def approval_word(word: str, written: str) -> str:
    """``word``, an approval setting, in the new vocabulary (an old spelling says so on stderr).

    Args:
        word: What the person wrote; a word that is neither new nor old comes back as it is,
            for the caller to refuse.
        written: How the setting is written, with ``{}`` for the word (``"MEOWGENT_APPROVE={}"``,
            ``"--approve {}"``), for the notice.
    """
    new = OLD_APPROVALS.get(word)
    if new is not None:
        say_old_word(written.format(word), written.format(new))
    return new or word


def cassette_mode_word(word: str, written: str) -> str:
    """``word``, a cassette mode, in the new vocabulary (a VCR-style name says so on stderr).

    Args:
        word: What the person wrote, in lower case; another word comes back as it is.
        written: How the setting is written, with ``{}`` for the word
            (``"MEOWGENT_CASSETTE_MODE={}"``), for the notice.
    """
    new = MODE_NAMES.get(word)
    if new is not None:
        say_old_word(written.format(word), written.format(new))
    return new or word
