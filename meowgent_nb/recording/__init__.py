"""Recording and replaying: cassettes that record any model's answers and the ``record=True``
tools' results once, and replay them without the model.

`RecordingModel` and `ReplayModel` (in ``cassette``) wrap any `Model`, and `cassette_model` picks
one for a file and a mode; the file they read and write is `_file` (its entries `_entries`,
checked against `_schema`), secrets are masked by `_mask`, a missing recording is described
against the nearest one by `_diff`; the recorded tools are on the `tool_tape` (the media their
values carried in `recorded_media`), the decisions on calls on the `_decision_tape`. `reader` reads a cassette back as the model
turns it recorded (`read_turns`), for what looks at a recording rather than replays it.
"""

from __future__ import annotations

from ._mask import Mask
from .cassette import Cassette, CassetteError, RecordingModel, ReplayModel, ToolTape, cassette_model
from .reader import RecordedTurn, read_turns

__all__ = [
    "Cassette",
    "CassetteError",
    "Mask",
    "RecordedTurn",
    "RecordingModel",
    "ReplayModel",
    "ToolTape",
    "cassette_model",
    "read_turns",
]
