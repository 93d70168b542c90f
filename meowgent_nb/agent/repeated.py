"""Repeated failures: how a call failed before, and the notice the model reads after the same failure.

`CallRunner` counts a call that fails the same way on consecutive turns; from the second time the
result carries `repeat_notice`, and at the limit the run stops. The views split the notice off the
output (`split_repeat_notice`) to show it as a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Failure", "repeat_notice", "split_repeat_notice"]


@dataclass
class Failure:
    """How a call failed the last time it was made, and on how many turns in a row."""

    kind: str
    output: str
    times: int
    turn: int


def repeat_notice(times: int, stop: bool = False) -> str:
    """What the model reads after a result when the call failed the same way ``times`` times.

    With ``stop`` the run ends here; the notice stays in the history for the next request.
    """
    count = "twice" if times == 2 else f"{times} times"
    if stop:
        return f"This call failed the same way {count} in a row, so the run was stopped."
    return (
        f"This call failed the same way {count} in a row; do not repeat it."
        " Answer the person, or try something different."
    )


_NOTICE = re.compile(
    r"\n\n(This call failed the same way (?:twice|\d+ times) in a row(?:; do not repeat it\."
    r" Answer the person, or try something different\.|, so the run was stopped\.))\Z"
)


def split_repeat_notice(output: str) -> tuple[str, str | None]:
    """A result's output without the `repeat_notice` the agent added to it, and that notice."""
    found = _NOTICE.search(output)
    return (output, None) if found is None else (output[: found.start()], found.group(1))
