"""A ``%%agent`` cell's cassette: which file and mode (the cell's options, else the traits), the
model that records or replays, and the session's tool tape that recorded toolboxes share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...models.resolve import requested_name
from ...tools.toolbox import Toolbox
from ._model_choice import cell_model as named_model

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["cassette_choice", "cell_model", "session_tape", "use_tape"]


def cell_model(session: NotebookSession, args: Any) -> Any:
    """The cell's model; with a cassette, one that records or replays (and resolves it only to record)."""
    session.model_note = None  # a replay resolves no model: nothing stands in for another
    path, mode = cassette_choice(session, args)
    if not path:
        return named_model(session, args)
    from ...recording.cassette import CassetteError, cassette_model

    name = args.model_object and getattr(
        session.shell.user_ns.get(args.model_object), "name", args.model_object
    )
    try:
        return cassette_model(
            path,
            mode,
            lambda: named_model(session, args),
            name=name or requested_name(args.model or session.settings.model),
            options=session.model_options(),
            origin=getattr(args, "origin", None),
            shelf=session.cassettes,
            mask=session.settings.cassette_mask,
        )
    except CassetteError as error:
        raise UsageError(f"%%agent: {error}") from None


def session_tape(session: NotebookSession) -> Any:
    """The `ToolTape` of the session's cassette (the traits), or None without one (or in mode off)."""
    from ...recording.cassette import ToolTape, mode_of, open_cassette

    settings = session.settings
    if not settings.cassette or mode_of(settings.cassette_mode) == "off":
        return None
    cassette, decided = open_cassette(
        settings.cassette, settings.cassette_mode, session.cassettes, settings.cassette_mask
    )
    return ToolTape(cassette, decided)


def use_tape(session: NotebookSession, tape: Any) -> None:
    """Give the cell's cassette (its model's `ToolTape`) to the recorded toolboxes (``record=True``)."""
    if tape is None:
        return
    from ...recording.cassette import CassetteError

    namespace = [v for k, v in session.shell.user_ns.items() if not k.startswith("_")]
    for box in [*session.toolboxes, *(v for v in namespace if isinstance(v, Toolbox))]:
        if getattr(box, "record", False) and callable(getattr(box, "use_tape", None)):
            try:
                box.use_tape(tape)
            except CassetteError as error:
                raise UsageError(f"%%agent: {error}") from None


def cassette_choice(session: NotebookSession, args: Any) -> tuple[str, str]:
    """The cassette file and mode for a cell: its options, else the traits ("" for none)."""
    if getattr(args, "record", None):
        return args.record, "record"
    if getattr(args, "replay", None):
        return args.replay, "replay"
    return getattr(args, "cassette", None) or session.settings.cassette, session.settings.cassette_mode
