"""What a cassette entry may hold, checked once where a file is read.

`EntryFields` and the models inside it type every field an entry can carry, strictly and with
unknown fields refused (a typo would otherwise drop a field silently); layout, key order and
missing optional fields are free. `problems` turns what pydantic found into sentences naming the
field's path (``chunks[2].tool_calls[0].name``) and line. Counts and durations are bounded so
their sums cannot overflow, and `huge_number` finds a number too large for a float anywhere.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..models.base import ModelChunk, Usage
from ..tools.core import ToolCall

__all__ = [
    "ChunkFields",
    "DecisionFields",
    "EntryFields",
    "ListingFields",
    "ToolEntryFields",
    "field_lines",
    "field_path",
    "huge_number",
    "problems",
]

# Bounds a backend's counts never reach, so arithmetic on them (a rate, a sum) cannot overflow.
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]
Seconds = Annotated[float, Field(ge=0, le=10**9)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class CallFields(_Strict):
    name: str  # may be "": what a backend streamed must read back as it was written
    arguments: dict[str, Any] = {}
    id: str = ""


class UsageFields(_Strict):
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    total_seconds: Seconds | None = None
    load_seconds: Seconds | None = None
    prompt_seconds: Seconds | None = None
    completion_seconds: Seconds | None = None
    waited_seconds: Seconds | None = None


class RetryFields(_Strict):
    """A failure asking again may mend (`RetryCause`), recorded where its answer ended."""

    error: Literal["ModelError", "StreamCut"]
    message: str
    kind: Literal["cut", "refused", "busy", "unavailable"]
    words: str
    retry_after: Seconds | None = None
    draw: Annotated[float, Field(ge=0, le=1)]


class ChunkFields(_Strict):
    text: str = ""
    thinking: str = ""
    tool_calls: list[CallFields] = []
    done: bool = False
    usage: UsageFields | None = None
    finish_reason: str | None = None
    retry: RetryFields | None = None
    """On the last chunk of an answer that failed so that it was asked again."""

    def chunk(self) -> ModelChunk:
        """The `ModelChunk` these fields describe."""
        return ModelChunk(
            text=self.text,
            thinking=self.thinking,
            tool_calls=tuple(ToolCall(c.name, dict(c.arguments), id=c.id) for c in self.tool_calls),
            done=self.done,
            usage=None if self.usage is None else Usage(**self.usage.model_dump()),
            finish_reason=self.finish_reason,
        )


class EntryFields(_Strict):
    model: str | None
    think: bool | None = None
    options: dict[str, Any] = {}
    format: dict[str, Any] | None = None
    offered: list[str] = []
    tools: list[dict[str, Any]] = []
    messages: list[dict[str, Any]]
    chunks: list[ChunkFields]


class MediaFields(_Strict):
    """An image or audio a result carried, its bytes base64-encoded."""

    image: str | None = None
    audio: str | None = None
    mime_type: str
    uri: str = ""


class LinkFields(_Strict):
    name: str
    uri: str


class ValueFields(_Strict):
    """A tool's return value, by its kind: one of json, bytes, text (an MCP text with media or
    links), structured (an MCP structured result, an object or a list, with ``text``)."""

    json_value: Any = Field(None, alias="json")
    bytes: str | None = None
    text: str | None = None
    structured: dict[str, Any] | list[Any] | None = None
    media: list[MediaFields] = []
    links: list[LinkFields] = []

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True)


class ResultFields(_Strict):
    kind: Literal["ok", "error", "timeout"]
    output: str
    value: ValueFields | None = None
    exception: str | None = None
    seconds: Seconds | None = None


class ToolEntryFields(_Strict):
    """A recorded tool call: the tool, its validated arguments, what came of it."""

    tool: str
    arguments: dict[str, Any]
    result: ResultFields


class DecisionFields(_Strict):
    """A recorded decision on a call that needed approval (see `_decision_tape`)."""

    decision: Literal["approved", "edited", "denied"]
    tool: str
    arguments: dict[str, Any]
    by: str = ""
    ran_with: dict[str, Any] | None = None
    reason: str = ""


class SupportFields(_Strict):
    """What a model said of its template (`models.base.ToolSupport`): the protocol it got, and why."""

    support: Literal["native", "xml", "decide"]
    model: str | None
    why: str
    thinking_first: bool = False


class ListedToolFields(_Strict):
    name: str
    remote_name: str | None = None
    title: str | None = None
    description: str
    parameters: dict[str, Any]
    approval: bool
    timeout: Seconds | None = None
    examples: list[dict[str, Any]] = []
    output_schema: dict[str, Any] | None = None


class ListingFields(_Strict):
    """What a recorded toolbox offered the model: its tools and the server's instructions."""

    toolbox: str
    instructions: str | None = None
    listing: list[ListedToolFields]
    skipped: dict[str, str] = {}
    left_out: list[str] = []


_KINDS = {0: ("an entry", EntryFields), 2: ("a chunk", ChunkFields)}
_NAMES = {
    ToolEntryFields: "a recorded tool call",
    DecisionFields: "a recorded decision",
    ResultFields: "a result",
    ValueFields: "a value",
    MediaFields: "a media item",
    LinkFields: "a link",
    ListingFields: "a recorded toolbox",
    SupportFields: "a recorded protocol choice",
    ListedToolFields: "a listed tool",
}
_WHAT = {
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "greater_than_equal": "must not be negative",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "list_type": "must be a list",
}


def problems(
    error: ValidationError, lines: dict[tuple[Any, ...], int], line: int, root: type[BaseModel] = EntryFields
) -> list[tuple[int, str]]:
    """Each mistake pydantic found, as (line, sentence); ``lines`` is `field_lines`' answer, ``root``
    the kind of entry checked."""
    found = []
    for item in error.errors():
        loc = tuple(item["loc"])
        path = _path(loc)
        if item["type"] == "missing":
            text = f'{_path(loc[:-1]) or "the entry"} has no "{loc[-1]}"'
        elif item["type"] == "extra_forbidden":
            kind, fields = _kind(loc[:-1]) if root is EntryFields else _kind_in(root, loc[:-1])
            text = (
                f'{_path(loc[:-1]) or "the entry"} has an unknown field "{loc[-1]}";'
                f" {kind} has {', '.join(fields)}"
            )
        else:
            what = _WHAT.get(item["type"], item["msg"][:1].lower() + item["msg"][1:])
            if item["type"] == "less_than_equal":
                bound = cast("dict[str, Any]", item.get("ctx"))["le"]  # pydantic gives a bound's error one
                what = f"must be at most {int(bound) if float(bound).is_integer() else bound}"
            text = f"{path} {what}, found {_shown(item['input'])}"
        where = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), line)
        found.append((where, text))
    return found


def field_lines(text: str, start: int, first_line: int) -> dict[tuple[Any, ...], int]:
    """The line each field of the JSON object at ``start`` begins on, and each item of a list
    field, by their pydantic location (``("chunks", 2)``). The object must be valid JSON."""
    decoder = json.JSONDecoder()
    lines: dict[tuple[Any, ...], int] = {}

    def skip(position: int, *marks: str) -> int:
        while position < len(text) and (text[position].isspace() or text[position] in marks):
            position += 1
        return position

    position = skip(start + 1)
    while text[position] != "}":
        key, position = decoder.raw_decode(text, position)
        position = skip(position, ":")
        lines[(key,)] = text.count("\n", 0, position) + first_line
        if text[position] == "[":
            position, index = skip(position + 1), 0
            while text[position] != "]":
                lines[(key, index)] = text.count("\n", 0, position) + first_line
                _, position = decoder.raw_decode(text, position)
                position, index = skip(position, ","), index + 1
            position += 1
        else:
            _, position = decoder.raw_decode(text, position)
        position = skip(position, ",")
    return lines


def _kind(loc: tuple[Any, ...]) -> tuple[str, list[str]]:
    if len(loc) in _KINDS:
        kind, model = _KINDS[len(loc)]
    elif loc[-1] == "usage":
        kind, model = "a usage", UsageFields
    else:
        kind, model = "a tool call", CallFields
    return kind, list(model.model_fields)


def _kind_in(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, list[str]]:
    """The model at ``loc`` inside ``root`` (for a tool or toolbox entry), by the fields' types."""
    model = root
    for part in loc:
        if isinstance(part, int) or part not in model.model_fields:
            continue
        inner = _model_in(model.model_fields[part].annotation)
        if inner is None:
            break
        model = inner
    return _NAMES.get(model, "an entry"), [f.alias or k for k, f in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_model_in, get_args(annotation)) if m is not None), None)


def huge_number(value: Any) -> tuple[tuple[Any, ...], float] | None:
    """Where in ``value`` (an entry as read) the first number too large for a float is (read as
    infinity: ``1e400``), and that number; None if there is none. Typed fields refuse it
    themselves; this finds it anywhere, also in a message or a tool's arguments."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if isinstance(item, float) and math.isinf(item):
            return loc, item
        if isinstance(item, dict):
            stack.extend((inner, (*loc, key)) for key, inner in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((inner, (*loc, index)) for index, inner in reversed(list(enumerate(item))))
    return None


def field_path(loc: tuple[Any, ...]) -> str:
    """A pydantic location as a field's path: ``chunks[2].tool_calls[0].name``."""
    return _path(loc)


def _path(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, int) and len(text) > 60:
        return f"a number of {len(text.lstrip('-'))} digits"
    return text if len(text) <= 60 else text[:57] + "..."
