"""A recorded `McpToolbox`'s tools: from the cell's cassette, or from the server and recorded.

`Taped` is a mixin of `McpToolbox`: `use_tape` takes the box's listing from a cassette that has
it (the server is not started) or records it there, and the ``_tools`` property starts a recorded
box's server the first time its tools are looked at without a cassette that replays it.
"""

from __future__ import annotations

from typing import Any

from ...tools.core import Tool
from ._replayed import replayed_tools

__all__ = ["Taped"]


class Taped:
    """`use_tape` and the lazily started server of a box made with ``record=True``."""

    name: str
    record: bool
    instructions: str | None
    skipped: dict[str, str]
    left_out: list[str]
    replayed_from: str | None
    tape_path: str | None
    _tape_key: tuple[Any, str] | None
    _connection: Any

    _start: Any  # McpToolbox's: start the server and list its tools
    close: Any  # McpToolbox's

    @property
    def _tools(self) -> dict[str, Tool]:
        # A recorded box (record=True) used before any cassette said what to do runs live: its
        # server starts here, the first time its tools are looked at.
        if self.__dict__.get("_waiting"):
            try:
                self._start()
            except BaseException:
                self._waiting = True
                raise
        return self.__dict__["_tool_map"]

    @_tools.setter
    def _tools(self, tools: dict[str, Tool]) -> None:
        self.__dict__["_tool_map"] = tools

    def use_tape(self, tape: Any) -> None:
        """Take the box's tools from a cassette, or record them in it (a box made with ``record=True``).

        ``tape`` is the `ToolTape` of the cell's cassette model (``model.tool_tape``; ``%%agent``
        passes it). Where the cassette replays and has the box's listing, the tools are made from
        it and the server is not started (a call without a recording, in mode auto, starts it);
        where it records, the server is started (if it was not) and what it offers is recorded.
        A box made without ``record=True``, or ``tape`` None, is left as it is.

        Raises:
            CassetteError: In replay only, the cassette has no listing of this box.
            McpServerError: The server had to be started and could not be.
        """
        if not self.record or tape is None:
            return
        key = (tape.cassette, tape.mode)
        if self._tape_key is not None and self._tape_key[0] is key[0] and self._tape_key[1] == key[1]:
            return
        listing = tape.listing(self.name)
        if listing is not None:
            if self._connection.alive:  # replayed now: the server is not needed
                self.close()
            self._waiting = False
            self.tape_path = str(tape.cassette.path)
            self._tools, self.instructions = replayed_tools(self, listing), listing.instructions
            self.skipped, self.left_out = dict(listing.skipped), list(listing.left_out)
            self.replayed_from = str(tape.cassette.path)
        else:
            if not self._connection.alive:
                self._start()
            tape.record_listing(
                self.name, self._tools.values(), self.instructions, self.skipped, self.left_out
            )
        self._tape_key, self.tape_path = key, str(tape.cassette.path)
