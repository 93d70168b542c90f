"""What `ToolServer` publishes about a notebook tool besides its arguments, and its structured results.

`annotations_of` gives ``readOnlyHint`` / ``destructiveHint`` from the tool's ``read_only`` and
``approval`` (so a client trusting the hints asks exactly when the notebook would);
`output_schema_of` gives a schema where the return type is an object; `structured_content`
checks a returned value against it. The rules a person reads are in docs/guides/mcp.md.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from ...tools.core import Tool

__all__ = ["annotations_of", "output_schema_of", "structured_content"]


def annotations_of(tool: Tool) -> dict[str, bool]:
    """The MCP annotations published for ``tool``."""
    read_only = tool.read_only if tool.read_only is not None else not tool.approval
    return {"readOnlyHint": read_only, "destructiveHint": bool(tool.approval) and not read_only}


def output_schema_of(tool: Tool) -> dict[str, Any] | None:
    """The JSON Schema of ``tool``'s results where its return type is an object, else None."""
    function = getattr(tool, "function", None)
    if function is None:
        return None
    try:
        returned = typing.get_type_hints(function).get("return")
    except Exception:  # noqa: BLE001 - an annotation that does not resolve publishes nothing
        return None
    if returned is None or not _is_object_type(returned):
        return None
    from pydantic import TypeAdapter

    try:
        schema = TypeAdapter(returned).json_schema(mode="serialization")
    except Exception:  # noqa: BLE001 - pydantic cannot describe it: nothing is promised
        return None
    return schema if schema.get("type") == "object" else None


def structured_content(value: Any, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """``value`` as the JSON object ``schema`` describes, or None and what is wrong with it."""
    import jsonschema
    from pydantic import TypeAdapter

    try:
        data = TypeAdapter(Any).dump_python(value, mode="json")
    except Exception as error:  # noqa: BLE001
        return None, f"the result cannot be written as JSON ({type(error).__name__}: {error})"
    problem = next(iter(jsonschema.Draft202012Validator(schema).iter_errors(data)), None)
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the result"
        return None, f"the result does not match the tool's return type: {where}: {problem.message}"
    return data, None


def _is_object_type(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_object_type(typing.get_args(annotation)[0])
    if origin is dict:
        args = typing.get_args(annotation)
        return not args or args[0] is str
    if not isinstance(annotation, type):
        return False
    from pydantic import BaseModel

    return (
        issubclass(annotation, BaseModel)
        or typing.is_typeddict(annotation)
        or (dataclasses.is_dataclass(annotation))
        or annotation is dict
    )
