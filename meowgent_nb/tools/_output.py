"""A tool's return value -> the text the model reads, cut to a limit."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["output_text"]

_DATAFRAME_ROWS = 5


def output_text(value: Any, limit: int | None) -> str:
    """The text of a tool's return value, at most ``limit`` characters (None: no limit).

    ``str`` is used as it is; dicts, lists, numbers, dataclasses and pydantic models become JSON;
    an object with ``_repr_llm_()`` says itself how a model should see it; a pandas DataFrame
    gives its shape, columns and first rows; anything else its ``repr``. Cut text ends with a
    note of how much was cut.
    """
    text = _text(value)
    if limit is None or len(text) <= limit:
        return text
    note = f"\n[... cut {len(text) - limit:,} of {len(text):,} characters]"
    return text[:limit] + note


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    llm_repr = getattr(type(value), "_repr_llm_", None)
    if callable(llm_repr):
        return str(llm_repr(value))
    if _is_dataframe(value):
        return _dataframe_text(value)
    if hasattr(value, "model_dump_json") and callable(value.model_dump_json):  # pydantic
        return value.model_dump_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if value is None or isinstance(value, (dict, list, tuple, int, float, bool)):
        try:
            return json.dumps(value, ensure_ascii=False, default=_fallback)
        except ValueError:  # a circular structure
            return repr(value)
    return repr(value)


def _fallback(value: Any) -> Any:
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def _is_dataframe(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pandas")


def _dataframe_text(frame: Any) -> str:
    rows, columns = frame.shape
    head = frame.head(_DATAFRAME_ROWS).to_string()
    return (
        f"DataFrame with {rows:,} rows and {columns:,} columns\n"
        f"columns: {', '.join(map(str, frame.columns))}\n"
        f"first {min(rows, _DATAFRAME_ROWS)} rows:\n{head}"
    )
