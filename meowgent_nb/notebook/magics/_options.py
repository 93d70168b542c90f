"""A magic's options, read with IPython's `magic_arguments`, and a typo answered with its fix."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring

__all__ = ["parse_options", "readable_help", "value_attached"]

_UNRECOGNIZED = "unrecognized arguments: "


def parse_options(magic: Callable[..., Any], line: str, name: str) -> Any:
    """The options of ``line`` for ``magic``; an unknown option says which one was meant.

    Args:
        magic: The function decorated with ``@magic_arguments``.
        line: What follows the magic's name.
        name: The magic as a person types it (``%%agent``), for the message.

    Raises:
        UsageError: The line does not parse; for an unknown option the message names the closest
            known ones (``did you mean --model?``) and where the options are listed.
    """
    try:
        return parse_argstring(magic, line)
    except UsageError as error:
        message = str(error)
        if not message.startswith(_UNRECOGNIZED):
            raise
        known = list(magic.parser._option_string_actions)  # pyright: ignore[reportFunctionMemberAccess]  (IPython's @magic_arguments sets it, undeclared)
        unknown = [word for word in message[len(_UNRECOGNIZED) :].split() if word.startswith("-")]
        hints = []
        for word in unknown:
            option = word.split("=", 1)[0]
            close = difflib.get_close_matches(option, known, n=1, cutoff=0.6)
            if close:
                hints.append((close[0], option))
        if len(hints) == 1:
            fix = f" Did you mean {hints[0][0]}?"
        elif hints:
            fix = " Did you mean " + " and ".join(f"{meant} (for {typed})" for meant, typed in hints) + "?"
        else:
            fix = ""
        listing = name.split()[0]  # "%tools eval" is described by %tools?
        raise UsageError(f"{name}: {message}.{fix} `{listing}?` lists the options.") from None


def readable_help(usage: str) -> Callable[[Any], Any]:
    """Decorator making a ``@magic_arguments`` docstring read as plain text in ``%%agent?``.

    Put it above ``@magic_arguments()``: it writes ``usage`` (e.g. ``%%agent``) where IPython
    wrote the function's name, and single backquotes for reST's double ones.
    """

    def mend(function: Any) -> Any:
        doc = function.__doc__ or ""
        if doc.startswith("::\n\n  %"):
            name_end = doc.index(" ", len("::\n\n  "))
            doc = f"  {usage}{doc[name_end:]}"
        function.__doc__ = doc.replace("``", "`")
        return function

    return mend


def value_attached(words: list[str], option: str) -> list[str]:
    """``OPTION VALUE`` as ``OPTION=VALUE`` where VALUE begins with "-": argparse would read such a
    value (a token is any string; one in 64 that `%tools serve` prints begins so) as an option."""
    glued = list(words)
    for at in range(len(glued) - 2, -1, -1):
        if glued[at] == option and glued[at + 1].startswith("-") and glued[at + 1] != "--":
            glued[at : at + 2] = [f"{option}={glued[at + 1]}"]
    return glued
