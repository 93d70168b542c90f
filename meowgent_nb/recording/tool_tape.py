"""Tools that reach outside, recorded in the cell's cassette beside the model's answers.

`ToolTape` answers the calls of a tool marked ``record=True`` from the cassette in replay, so the
tool does not run. A call is keyed by the tool's name and its *validated* arguments as canonical,
masked JSON; the n-th call with the same arguments replays the n-th recording. A result keeps its
kind (a value, an error replayed as `RecordedToolError`, a timeout), so the model reads exactly
the text it read when recording. A recorded MCP toolbox's listing is replayed too, so the server
is not started; its recorded approval and time limit can only add to the live ones, never take
from them (see `mcp.client._replayed`).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import enum
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..errors import MeowgentError
from ..tools.calls import ToolCall, ToolResult
from ..tools.core import Tool
from ._diff import describe_value_difference
from ._file import Cassette, CassetteError, recordable
from ._mask import VALUE_DEPTH, Mask, depth_over
from .recorded_media import media_value, replayed_media

__all__ = ["RecordedToolError", "ToolTape", "call_arguments", "listed_tool"]

_T = TypeVar("_T", bound=Tool)

RERECORD_TOOLS = (
    "To record it, run in mode record (`%%agent --record PATH`, or MEOWGENT_CASSETTE_MODE=record;"
    " restart the kernel first), or in mode auto to add only what is missing, and commit the cassette."
)


class RecordedToolError(MeowgentError):
    """The error a recorded tool raised, replayed: its message is the text the model read.

    Attributes:
        type_name: The name of the exception's type when it was recorded (``"McpToolError"``).
    """

    def __init__(self, message: str, type_name: str | None):
        super().__init__(message)
        self.type_name = type_name or "Exception"


class ToolTape:
    """The recorded tool calls of one cassette, in one mode: ``record``, ``replay`` or ``auto``.

    Args:
        cassette: The cassette the model's answers are recorded in too.
        mode: ``record`` (every call runs and is recorded), ``replay`` (no call runs; a call
            without a recording is a `CassetteError`), or ``auto`` (replay what is recorded, run
            and record what is not).
        origin: The cell, for error messages.
    """

    def __init__(self, cassette: Cassette, mode: str, origin: str | None = None):
        self.cassette, self.mode, self.origin = cassette, mode, origin

    @property
    def records(self) -> bool:
        """Whether a call without a recording runs and is recorded (modes record and auto)."""
        return self.mode != "replay"

    def replay(self, call: ToolCall, values: Mapping[str, Any], codec: Any = None) -> ToolResult | None:
        """The recorded result of ``call`` (validated ``values``), or None to run it live.

        ``codec`` is the tool's ``value_codec`` (see `_encode`), which reads the values it wrote.

        Raises:
            CassetteError: In mode replay, the cassette has no recording of this call (or its
                recorded value cannot be read).
        """
        if self.mode == "record":
            return None
        arguments = call_arguments(values, self.cassette.mask, self.cassette.path)
        entry = self.cassette.take_tool(call.name, arguments, again=self.mode == "replay")
        if entry is None:
            if self.mode == "replay":
                raise self.missing(call.name, arguments)
            return None
        return _replayed(call, entry.result, codec, self.cassette.path, entry.line)

    def record(self, values: Mapping[str, Any], result: ToolResult, codec: Any = None) -> None:
        """Store ``result`` of a call that ran live (not one that was stopped before it ended)."""
        if not self.records or result.kind not in ("ok", "error", "timeout"):
            return
        mask = self.cassette.mask
        arguments = call_arguments(values, mask, self.cassette.path)
        # What the tool said is masked; what kind of result it was, and how long it took, is not.
        stored: dict[str, Any] = {"kind": result.kind, "output": mask.string(result.output)}
        if result.kind == "ok":
            encoded = _encode(result.value, codec, result.output)
            if encoded is not None:
                stored["value"] = _masked_value(encoded, mask)
        elif result.kind == "error" and result.exception is not None:
            stored["exception"] = mask.string(
                getattr(result.exception, "type_name", type(result.exception).__name__)
            )
        elif result.kind == "timeout" and result.duration is not None:
            stored["seconds"] = result.duration
        entry = {"tool": mask.string(result.call.name), "arguments": arguments, "result": stored}
        self.cassette.append(_dump(entry))
        self.cassette.played_tool(result.call.name, arguments)

    def listing(self, toolbox: str) -> Any | None:
        """The recorded listing of ``toolbox`` (`ListingEntry`) when it is to be replayed, else None.

        Raises:
            CassetteError: In mode replay, the cassette has no listing of it; or a tool it lists
                cannot be made from what is recorded (a hand-edited schema).
        """
        if self.mode == "record":
            return None
        found = self.cassette.listing(toolbox)
        if found is not None:
            _check_listing(found, self.cassette.path)
        if found is None and self.mode == "replay":
            where = f" (for {self.origin})" if self.origin else ""
            recorded = sorted({entry.toolbox for entry in self.cassette.listings})
            has = f"it has those of: {', '.join(recorded)}" if recorded else "it has none"
            raise CassetteError(
                f"The cassette {self.cassette.path} has no recording of the tools of the toolbox {toolbox!r}"
                f"{where}, so they cannot be offered without starting its server; {has}.\n{RERECORD_TOOLS}"
            )
        return found

    def record_listing(
        self,
        toolbox: str,
        tools: Iterable[Any],
        instructions: str | None,
        skipped: Mapping[str, str] | None = None,
        left_out: Iterable[str] = (),
    ) -> None:
        """Store what ``toolbox`` offers the model (in modes record and auto), and what it does not."""
        if not self.records:
            return
        mask = self.cassette.mask
        # A tool's approval and time limit are settings, not content: kept as they are.
        listing = [
            {k: v if k in ("approval", "timeout") else mask(v) for k, v in _listed(t).items()} for t in tools
        ]
        entry: dict[str, Any] = {
            "toolbox": mask.string(toolbox),
            "instructions": mask(instructions),
            "listing": listing,
        }
        if skipped:
            entry["skipped"] = mask(dict(skipped))
        if left_out:
            entry["left_out"] = mask(list(left_out))
        self.cassette.append(_dump(entry))

    def missing(self, tool: str, arguments: Mapping[str, Any]) -> CassetteError:
        """The error for a call the cassette has no recording of."""
        where = f" in {self.origin}" if self.origin else ""
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        lines = [
            f"The cassette {self.cassette.path} has no recording of the call {tool}({shown}){where};"
            " the tool was not run."
        ]
        same = [entry for entry in self.cassette.tool_entries if entry.tool == tool]
        if same:
            near = max(same, key=lambda e: _likeness(e.arguments, arguments))
            lines.append(
                f"Against the nearest recording of {tool} (line {near.line}),"
                f" {describe_value_difference(near.arguments, dict(arguments), 'arguments')}"
            )
        else:
            recorded = sorted({entry.tool for entry in self.cassette.tool_entries})
            lines.append(
                f"It has no recording of {tool} at all"
                + (f"; it has calls of: {', '.join(recorded)}." if recorded else "; it has no tool calls.")
            )
        lines.append(RERECORD_TOOLS)
        return CassetteError(self.cassette.mask.text("\n".join(lines)))

    def __repr__(self) -> str:
        return f"ToolTape({str(self.cassette.path)!r}, mode={self.mode!r})"


def call_arguments(
    values: Mapping[str, Any], mask: Mask | None = None, path: Path | None = None
) -> dict[str, Any]:
    """Validated argument values as canonical JSON values (what a call is recognised by), masked
    with ``mask`` (bytes: as base64 of the masked bytes); what JSON cannot hold as a string saying
    what it was (see `_file.recordable`).

    Raises:
        CassetteError: An object in them cannot be written as JSON (``path``: the cassette named).
    """
    mask = mask or Mask()
    plain = lambda value: mask.bytes(bytes(value)) if isinstance(value, (bytes, bytearray)) else _plain(value)  # noqa: E731
    try:
        text = json.dumps(recordable(dict(values)), default=plain, sort_keys=True, ensure_ascii=False)
        return mask(recordable(json.loads(text)))  # again: a pydantic model's dump may nest deep too
    except (RecursionError, ValueError, TypeError) as error:
        raise CassetteError(f"Cassette {path}: a call's arguments cannot be recorded ({error}).") from None


def listed_tool(fields: Any, handler: Any, kind: type[_T] = Tool) -> _T:
    """The tool a recorded listing entry (`ListedToolFields`) describes; ``handler`` runs it live.

    Args:
        fields: The entry.
        handler: Runs a call live (None where the tool is only checked).
        kind: The `Tool` class to make (the MCP client's `McpTool`, which sets what MCP adds).
    """
    made = kind.from_schema(
        fields.name,
        fields.description,
        fields.parameters,
        handler,
        approval=fields.approval,
        timeout=fields.timeout,
        examples=fields.examples or None,
    )
    made.record = True
    return made


def _check_listing(listing: Any, path: Path) -> None:
    """Raise a `CassetteError` naming the entry if a tool of ``listing`` cannot be made."""
    from ..errors import ToolDefinitionError

    for index, fields in enumerate(listing.listing):
        try:
            listed_tool(fields, None)
        except (ToolDefinitionError, ValueError, TypeError) as error:
            raise CassetteError(
                f"Cassette {path}, the entry on line {listing.line}: listing[{index}] ({fields.name!r}) cannot be"
                f" offered: {str(error).rstrip('.')}. Fix the entry, or delete the file and record again."
            ) from None


def _listed(tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "remote_name": getattr(tool, "remote_name", None),
        "title": getattr(tool, "title", None),
        "description": tool.description,
        "parameters": tool.parameters,
        "approval": tool.approval,
        "timeout": tool.timeout,
        "examples": list(tool.examples),
        "output_schema": getattr(tool, "output_schema", None),
    }


def _dump(entry: Mapping[str, Any]) -> str:
    """A tool or toolbox entry as text: a field a line, a listed tool a line."""
    text = lambda value: json.dumps(value, ensure_ascii=False, sort_keys=True)  # noqa: E731
    parts = []
    for index, (key, value) in enumerate(entry.items()):
        lead = "{" if index == 0 else " "
        if key == "listing" and value:
            items = ",\n".join("  " + text(item) for item in value)
            parts.append(f"{lead}{text(key)}: [\n{items}\n ]")
        elif key == "result":  # in the order written, so a value's keys replay in the tool's order
            parts.append(f"{lead}{text(key)}: {json.dumps(value, ensure_ascii=False)}")
        else:
            parts.append(f"{lead}{text(key)}: {text(value)}")
    return ",\n".join(parts) + "}\n"


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Path):
        return str(value)
    return repr(value)


def _likeness(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> int:
    return sum(recorded.get(key) == value for key, value in sent.items()) - abs(len(recorded) - len(sent))


# --- values ----------------------------------------------------------------------------------------


def _encode(value: Any, codec: Any, text: str) -> dict[str, Any] | None:
    """A tool's value as a `ValueFields` dict, or None when it has no JSON form (its text replays).

    ``codec`` (a tool's ``value_codec``, e.g. an MCP tool's) writes the values it knows (an MCP text
    with images, a structured result) as ``text`` / ``structured`` / ``media`` / ``links``. Bytes
    (a ``bytes`` value, a medium's ``image`` or ``audio``) stay bytes here: the cassette's `Mask`
    masks them and writes them as base64. A notebook tool's value that holds images or audio is
    ``text`` (the model's, ``text``) and ``media`` (`recorded_media`). A value nested deeper than
    a cassette holds has no JSON form here: its text (already shaped for the model) replays.
    """
    if codec is not None:
        encoded = codec.encode(value)
        if encoded is not None:
            return None if depth_over(encoded, VALUE_DEPTH) else encoded
    with_media = media_value(value, text)
    if with_media is not None:
        return with_media
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value)}
    if depth_over(value, VALUE_DEPTH):
        return None
    if value is None or type(value) in (str, int, float, bool, dict, list, tuple):
        plain = _json(value)
        return None if plain is None and value is not None else {"json": plain}
    return None


def _masked_value(encoded: Mapping[str, Any], mask: Mask) -> dict[str, Any]:
    """Value fields masked: what they hold, not their names (nor a medium's or link's)."""
    return {
        key: [{k: mask(v) for k, v in part.items()} for part in item]
        if key in ("media", "links")
        else mask(item)
        for key, item in encoded.items()
    }


def _json(value: Any) -> Any:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return json.loads(text)


def _replayed(call: ToolCall, result: Any, codec: Any, path: Path, line: int) -> ToolResult:
    """The `ToolResult` a recorded result (`ResultFields`) gives ``call``."""
    if result.kind == "error":
        return ToolResult(
            call, result.output, kind="error", exception=RecordedToolError(result.output, result.exception)
        )
    if result.kind == "timeout":
        return ToolResult(call, result.output, kind="timeout", duration=result.seconds)
    value: Any = result.output
    if result.value is not None:
        try:
            value = _decode(result.value, codec)
        except (binascii.Error, ValueError) as error:
            raise CassetteError(
                f"Cassette {path}, line {line}: the recorded value of {call.name} cannot be read ({error})."
                " Fix the entry, or delete the file and record again."
            ) from None
    return ToolResult(call, result.output, value=value, duration=0.0)


def _decode(fields: Any, codec: Any) -> Any:
    if fields.bytes is not None:
        return base64.b64decode(fields.bytes, validate=True)
    if fields.structured is None and fields.text is None:
        return fields.json_value
    if codec is not None:
        return codec.decode(fields)
    if fields.media and fields.structured is None:
        return replayed_media(fields)
    return fields.structured if fields.structured is not None else fields.text
