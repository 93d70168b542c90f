"""Record a model's answers once, replay them later: real-model notebooks checked in CI, no model.

`RecordingModel` wraps any `Model` and writes each request it serves, with the chunks that came
back, to a cassette; `ReplayModel` streams them back for the same requests with no backend at
all (given an ``inner`` model it records what is missing), and a request with no recording is a
`CassetteError` showing how it differs from the nearest one. `cassette_model` picks one for a
file and one of `MODES` (``once``, ``record``, ``replay``, ``auto``, ``off``; the older names in
`MODE_NAMES` warn). A request is recognised by what the model was sent (name, messages, tools,
``think``, answer-changing options, ``format``), never by timings, headers or host. The modes a
person reads are in docs/guides/recording-and-testing.md; the file format is `_file`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from ..models.base import (
    Model,
    ModelChunk,
    ModelError,
    ModelRequest,
    RetryCause,
    StreamCut,
    ToolSupport,
    describe_model,
)
from ._decision_tape import DecisionTape
from ._diff import describe_carried_over, describe_difference, nearest
from ._file import Cassette, CassetteError, Mask, chunk_json, host_credentials, request_fields
from .tool_tape import RecordedToolError, ToolTape

__all__ = [
    "MODES",
    "MODE_NAMES",
    "Cassette",
    "CassetteError",
    "RecordedToolError",
    "RecordingModel",
    "ReplayModel",
    "ToolTape",
    "cassette_model",
    "mode_of",
    "open_cassette",
]

MODES = ("once", "record", "replay", "auto", "off")
"""The cassette modes, the default first; see the module's docstring."""

MODE_NAMES = {"all": "record", "none": "replay", "new": "auto"}
"""The old (VCR-style) names of the modes, and the mode each is now; deprecated."""


def mode_of(mode: str) -> str:
    """The mode ``mode`` names, case and spaces aside; an old name (`MODE_NAMES`) gives its mode
    with a DeprecationWarning naming it.

    Raises:
        CassetteError: It names no mode.
    """
    name = mode.strip().lower() if isinstance(mode, str) else mode
    if name in MODE_NAMES:
        warnings.warn(
            f"cassette mode {name!r} is deprecated; write {MODE_NAMES[name]!r}",
            DeprecationWarning,
            stacklevel=3,
        )
        return MODE_NAMES[name]
    if name not in MODES:
        raise CassetteError(f"Unknown cassette mode {mode!r}; use one of: {', '.join(MODES)}.")
    return name


CUT = "cut"
"""The finish reason of an answer recorded only up to where its reader stopped reading."""

RERECORD = (
    "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
    " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
)

ModelSource = Model | Callable[[], Model]
"""A model, or a function that makes one when it is first needed (so replay never makes one)."""


class _CassetteModel:
    """The model behind `RecordingModel` and `ReplayModel`."""

    def __init__(
        self,
        cassette: Cassette,
        inner: ModelSource | None,
        *,
        record_all: bool,
        name: str | None,
        options: Mapping[str, Any] | None,
        origin: str | None,
    ):
        self.cassette = cassette
        self._inner = inner
        self._record_all = record_all
        if name is None and inner is not None and hasattr(inner, "stream"):
            name = cast(Model, inner).name  # a model, not a function that makes one
        self._key_name = name
        self.name = name or f"cassette:{cassette.path.name}"
        self.options = dict(options or {})
        """Settings of the model that change its answers; part of every request's key."""
        self.origin = origin
        """Where the requests come from, named in errors ("the %%agent cell beginning 'Hi'")."""
        self.requests = 0
        """How many requests this model was asked."""
        mode = "record" if record_all else "replay" if inner is None else "auto"
        self.tool_tape = ToolTape(cassette, mode, origin)
        """Where the calls of tools marked ``record=True`` are recorded or replayed (same file, same mode)."""
        self.decision_tape = DecisionTape(cassette, mode, origin)
        """Where the decisions on calls that needed approval are recorded, or checked in replay."""

    def __getattr__(self, name: str) -> Any:
        # The inner model's tokenizer counts for it (the eval's tool block, in the model's own
        # tokens). Only a model already made: a replay never makes one just to count.
        if name == "count_tokens":
            inner = self.__dict__.get("_inner")
            count = getattr(inner, "count_tokens", None)
            if hasattr(inner, "stream") and callable(count):
                return count
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the recorded answer to ``request``, or the inner model's (recording it).

        Raises:
            CassetteError: There is no recording of it and no inner model to record one with.
            ModelError: The inner model failed.
        """
        self.requests += 1
        with_model = self._key_name is not None
        mask = self.cassette.mask
        fields = mask.fields(
            request_fields(self._key_name, request, self.options, host_credentials(self._inner))
        )
        if not self._record_all:
            entry = self.cassette.take(fields, with_model=with_model, again=self._inner is None)
            if entry is not None:
                for chunk in entry.chunks:
                    if chunk.done and chunk.finish_reason == CUT:
                        raise self._cut(entry)
                    if chunk.done and entry.retry is not None:
                        raise _replayed(entry.retry)
                    yield chunk
                    if chunk.done:
                        return
                    await asyncio.sleep(0)  # let displays redraw between chunks, as with a live model
                yield ModelChunk(done=True)  # a hand-edited entry may have lost its last chunk
                return
            if self._inner is None:
                raise self.missing(fields)
        model = self._model(fields)
        secrets = list(host_credentials(model))  # now the model's own host is known too
        fields = mask.fields(request_fields(self._key_name, request, self.options, secrets))
        streamed: list[ModelChunk] = []
        stream = model.stream(request)
        closing = cast("AsyncGenerator[Any, None]", stream)  # where it has aclose, as checked
        with self._failures(fields, streamed, secrets, with_model):
            async with (
                contextlib.aclosing(closing) if hasattr(stream, "aclose") else contextlib.nullcontext()
            ):
                async for chunk in stream:
                    if chunk.status is None or chunk.text or chunk.thinking or chunk.tool_calls or chunk.done:
                        streamed.append(chunk)  # a status ("loading the model") is news of that moment only
                    if chunk.done:  # recorded before the reader sees the end, which it may not read past
                        self.cassette.add(
                            fields,
                            mask.chunks([chunk_json(c, secrets) for c in streamed]),
                            with_model=with_model,
                        )
                    try:
                        yield chunk
                    except GeneratorExit:
                        # The reader stopped reading (``%tools eval`` past its text limit): recorded up to
                        # here and marked cut, so the same reader replays it and one reading on is told.
                        if not chunk.done:
                            cut = [*streamed, ModelChunk(done=True, finish_reason=CUT)]
                            self.cassette.add(
                                fields,
                                mask.chunks([chunk_json(c, secrets) for c in cut]),
                                with_model=with_model,
                            )
                        raise
                    if chunk.done:
                        return
        # An answer that ended without done (the server went away) or was cancelled is not recorded.

    async def tool_support(self) -> ToolSupport | None:
        """What the model said of its template (the protocol it gets, `Agent.choose_protocol`):
        as recorded; else the inner model's, recorded. None where it says nothing, and for a
        cassette that holds answers recorded without it (they were recorded with ``xml``)."""
        recorded = self.cassette.support(self._key_name)
        if recorded is not None or self._inner is None:
            return recorded
        if not self._record_all and self.cassette.entries:
            return None  # recorded before models were asked: replayed as recorded
        if not hasattr(self._inner, "stream"):  # a function that makes the model: call it once
            self._inner = self._inner()  # type: ignore[misc]
        ask: Callable[[], Awaitable[ToolSupport | None]] | None = getattr(self._inner, "tool_support", None)
        support = await ask() if callable(ask) else None
        if support is not None:
            self.cassette.add_support(self._key_name, support)
        return support

    @contextlib.contextmanager
    def _failures(
        self, fields: Mapping[str, Any], streamed: list[ModelChunk], secrets: list[str], with_model: bool
    ) -> Iterator[None]:
        """Record a failure the agent asks again after (`RetryCause`): what was streamed, then the
        failure with the draw that set the wait's jitter, so a replay shows the same wait."""
        try:
            yield
        except ModelError as error:
            cause = error.retry
            if cause is None:
                raise
            cause = dataclasses.replace(cause, draw=random.random() if cause.draw is None else cause.draw)
            last = chunk_json(ModelChunk(done=True, finish_reason="retry"), secrets)
            last["retry"] = {
                "error": "StreamCut" if isinstance(error, StreamCut) else "ModelError",
                "message": str(error),
                **{k: v for k, v in dataclasses.asdict(cause).items() if k != "replayed"},
            }
            chunks = self.cassette.mask.chunks([*(chunk_json(c, secrets) for c in streamed), last])
            self.cassette.add(fields, chunks, with_model=with_model)
            raise type(error)(str(error), retry=cause) from error

    def _cut(self, entry: Any) -> CassetteError:
        """The error for reading past the end of an answer recorded cut short."""
        return CassetteError(
            f"The cassette {self.cassette.path} recorded the answer at line {entry.line} only up to where"
            " its reader stopped reading (e.g. %tools eval's text limit), and this reader reads further."
            f" {RERECORD}"
        )

    def missing(self, fields: Mapping[str, Any]) -> CassetteError:
        """The error for a request the cassette has no recording of."""
        where = f"request {self.requests}" + (f" of {self.origin}" if self.origin else "")
        lines = [
            f"The cassette {self.cassette.path} has no recording of {where}; nothing was sent to a model."
        ]
        near = nearest(fields, self.cassette.entries)
        carried = describe_carried_over(fields, self.cassette.entries)
        if carried is not None:
            lines.append(carried)
        elif near is None:
            lines.append("The cassette has no recordings at all.")
        else:
            sent = {**fields, "model": fields["model"] if self._key_name else near.request["model"]}
            lines.append(
                f"Against the nearest recording (line {near.line}), {describe_difference(near.request, sent)}"
            )
        lines.append(RERECORD)
        return CassetteError(self.cassette.mask.text("\n".join(lines)))  # the cell's text may hold a secret

    def _model(self, fields: Mapping[str, Any]) -> Model:
        if not hasattr(self._inner, "stream"):  # a function that makes the model: call it once
            try:
                self._inner = self._inner()  # type: ignore[misc]
            except Exception as error:
                if self._record_all:
                    raise
                raise CassetteError(
                    f"{self.missing(fields)}\nRecording it needs the model, which failed: {error}"
                ) from error
        return self._inner  # type: ignore[return-value]

    @property
    def description(self) -> str:
        """Which recordings answer, and from which model: ``"cassette replay of local (run.cassette.json)"``.

        The file is named relative to the working directory when it is under it.
        """
        path = self.cassette.path
        with contextlib.suppress(ValueError):
            path = path.relative_to(Path.cwd())
        if self._record_all:
            made = hasattr(self._inner, "stream")  # else a function that makes the model when needed
            inner = describe_model(self._inner) if made else self._key_name or "the model"
            return f"{inner}, recorded to {path}"
        replay = f"cassette replay of {self._key_name}" if self._key_name else "cassette replay"
        replay += f" ({path})"
        return replay if self._inner is None else f"{replay}, recording what is missing"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {str(self.cassette.path)!r})"


class RecordingModel(_CassetteModel):
    """Wraps ``inner`` and records every request it answers to a cassette.

    Args:
        inner: The model that answers, or a function that makes it when first needed.
        path: The cassette file: replaced at the first request. A `Cassette` is added to instead,
            so that several models (one per ``%%agent`` cell) record into one file.
        name: The model's name as recorded; None: ``inner.name``.
        options: Settings ``inner`` was made with that change its answers and are not in its
            requests (``{"temperature": 0.1, "num_ctx": 16384}``), recorded as part of the key.
        origin: Where the requests come from, for error messages (``context``: its old name,
            deprecated).
        mask: Regular expressions of secrets never written to the file (each match becomes
            ``***``); for a `Cassette` given as ``path``, set its ``mask`` instead.
    """

    def __init__(
        self,
        inner: ModelSource,
        path: str | os.PathLike[str] | Cassette,
        *,
        name: str | None = None,
        options: Mapping[str, Any] | None = None,
        origin: str | None = None,
        mask: Iterable[str] = (),
        context: str | None = None,
    ):
        cassette = path if isinstance(path, Cassette) else Cassette(path, fresh=True, mask=mask)
        origin = _origin(origin, context)
        super().__init__(cassette, inner, record_all=True, name=name, options=options, origin=origin)


class ReplayModel(_CassetteModel):
    """Streams recorded answers from a cassette; with ``inner``, records what is missing.

    Replay needs no model backend and contacts nothing. The n-th time a request is asked, its
    n-th recording is replayed; asked more often than recorded, its recordings replay again from
    the first (re-running a cell). With ``inner`` (the ``auto`` mode), such a request is recorded.

    Args:
        path: The cassette file, or a `Cassette` shared with other models.
        inner: The model that answers requests without a recording, which are then added to the
            cassette; a model or a function that makes one when first needed. None: such a request
            is a `CassetteError` and nothing is sent anywhere.
        name: The model's name as recorded. None: ``inner.name`` if ``inner`` is a model, else a
            recording of any model matches.
        options: As for `RecordingModel`: must equal what was recorded.
        origin: Where the requests come from, named in errors ("the %%agent cell beginning 'Hi'");
            ``context``: its old name, deprecated.
        mask: As for `RecordingModel`: the same patterns the cassette was recorded with.

    Raises:
        CassetteError: The file is malformed, or without ``inner`` it does not exist.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Cassette,
        inner: ModelSource | None = None,
        *,
        name: str | None = None,
        options: Mapping[str, Any] | None = None,
        origin: str | None = None,
        mask: Iterable[str] = (),
        context: str | None = None,
    ):
        if not isinstance(path, Cassette):
            if inner is None and not Path(path).expanduser().exists():
                raise CassetteError(_no_file(path))
            path = Cassette(path, mask=mask)
        super().__init__(
            path, inner, record_all=False, name=name, options=options, origin=_origin(origin, context)
        )


def cassette_model(
    path: str,
    mode: str,
    make_model: Callable[[], Model],
    *,
    name: str,
    options: Mapping[str, Any] | None = None,
    origin: str | None = None,
    shelf: dict[tuple[Path, str], tuple[Cassette, str]] | None = None,
    mask: Iterable[str] = (),
    context: str | None = None,
) -> Model:
    """A model that records to, or replays from, the cassette ``path`` in ``mode`` (what ``%%agent`` uses).

    ``cassette_model("run.cassette.json", "once", LlamaCppModel, name="local")`` replays if the file
    exists, else records with a `LlamaCppModel` made at the first request.

    Args:
        path: The cassette file; relative to the current directory.
        mode: One of `MODES` (an old name in `MODE_NAMES` still works, with a DeprecationWarning).
        make_model: Makes the real model; called only when a request must be recorded.
        name: The model as the person chose it (``"local"``, ``"qwen2.5:0.5b"``): part of the key.
        options: Settings that change the answers (temperature, context size).
        origin: The cell, for error messages (``context``: its old name, deprecated).
        shelf: The cassettes opened so far in this session, by file and mode: one `Cassette` per
            file and mode, so cells record into one file and replay continues where it was. The
            ``once`` mode is decided when its file is first opened. None: a new one.
        mask: Regular expressions of secrets never written to the file (see `Mask`).

    Raises:
        CassetteError: An unknown mode or mask, a missing file in mode replay, or a malformed file.
        Exception: In mode ``off``, whatever ``make_model`` raises.
    """
    mode = mode_of(mode)
    if mode == "off":
        return make_model()
    cassette, decided = open_cassette(path, mode, shelf, mask)
    settings = {"name": name, "options": options, "origin": _origin(origin, context)}
    if decided == "record":
        return RecordingModel(make_model, cassette, **settings)
    return ReplayModel(cassette, make_model if decided == "auto" else None, **settings)


def _replayed(retry: Any) -> ModelError:
    """The failure a cassette recorded (`_schema.RetryFields`), raised again: the agent shows
    the recorded wait and does not wait."""
    cause = RetryCause(retry.kind, retry.words, retry.retry_after, retry.draw, replayed=True)
    return (StreamCut if retry.error == "StreamCut" else ModelError)(retry.message, retry=cause)


def _origin(origin: str | None, context: str | None) -> str | None:
    """``origin``, or what the old keyword ``context`` gave, with a DeprecationWarning naming ``origin``."""
    if context is None:
        return origin
    warnings.warn(
        "the cassette models' context= is now origin= (where the requests come from);"
        " the old name goes in the next release.",
        DeprecationWarning,
        stacklevel=3,
    )
    return origin if origin is not None else context


def open_cassette(
    path: str | os.PathLike[str],
    mode: str,
    shelf: dict[tuple[Path, str], tuple[Cassette, str]] | None = None,
    mask: Iterable[str] = (),
) -> tuple[Cassette, str]:
    """The `Cassette` at ``path`` for ``mode`` (not ``off``) from ``shelf``, and the mode decided for it.

    Args:
        path, mode, shelf, mask: As for `cassette_model`; the latest ``mask`` given is the one used.

    Raises:
        CassetteError: As for `cassette_model`.
    """
    mode = mode_of(mode)
    masking = Mask(mask)
    full = Path(path).expanduser().absolute()
    shelf = {} if shelf is None else shelf
    if (full, mode) not in shelf:
        decided = ("replay" if full.exists() else "record") if mode == "once" else mode
        if decided == "replay" and not full.exists():
            raise CassetteError(_no_file(path))
        shelf[(full, mode)] = (Cassette(full, fresh=decided == "record", mask=masking), decided)
    cassette, decided = shelf[(full, mode)]
    cassette.mask = masking
    return cassette, decided


def _no_file(path: str | os.PathLike[str]) -> str:
    return (
        f"No cassette at {Path(path).expanduser().absolute()} to replay. Record it first (mode record or"
        f" once, e.g. `%%agent --record {os.fspath(path)}`), or check the path: a relative one is"
        " resolved against the notebook's folder."
    )
