"""Config dicts with declared arguments -> the same `Param`s a function signature gives.

A config tool (``{"name", "description", "arguments": [{"name", "type", "description"}]}``,
optionally with ``"examples": [{...}]``, example arguments dicts) goes through the same pydantic
model as a decorated function, so it renders, validates (with the same lax coercion) and reports
errors exactly like one; its examples are checked as ``@tool(examples=...)`` checks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticUndefined

from ._schema import Param

__all__ = ["config_params"]

_TYPES: dict[str, type] = {
    "string": str,
    "str": str,
    "integer": int,
    "int": int,
    "number": float,
    "float": float,
    "boolean": bool,
    "bool": bool,
    "array": list,
    "list": list,
    "object": dict,
    "dict": dict,
}


class _Argument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    type: str = "string"
    description: str = ""
    required: bool | None = None
    default: Any = None
    enum: list[Any] | None = Field(default=None, min_length=1)


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    arguments: list[_Argument] = []
    examples: Any = None  # checked by the tool once it can validate (see `tools.examples`)


def config_params(config: Mapping[str, Any]) -> tuple[str | None, str, list[Param], list[str]]:
    """Read a tool config.

    Returns:
        (name, description, params, problems); problems is empty when the config is usable.
    """
    try:
        parsed = _Config.model_validate(config)
    except ValidationError as exc:
        name = config.get("name") if isinstance(config, Mapping) else None
        problems = [
            f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg'][:1].lower()}{e['msg'][1:]}"
            for e in exc.errors(include_url=False)
        ]
        return name, "", [], problems
    params, problems, seen = [], [], set()
    for argument in parsed.arguments:
        if argument.name in seen:
            problems.append(f"argument '{argument.name}' is declared twice")
        seen.add(argument.name)
        base = _TYPES.get(argument.type.lower())
        if base is None:
            allowed = ", ".join(sorted(set(_TYPES)))
            problems.append(
                f"argument '{argument.name}': unknown type {argument.type!r}; use one of {allowed}"
            )
            continue
        has_default = "default" in argument.model_fields_set
        required = argument.required if argument.required is not None else not has_default
        if required and has_default:
            problems.append(f"argument '{argument.name}' is required but has a default; drop one")
            continue
        annotation: Any = Literal[tuple(argument.enum)] if argument.enum else base
        default = argument.default if has_default else PydanticUndefined
        if not required and not has_default:
            annotation, default = Optional[annotation], None  # noqa: UP045 - any typing form, a string too
        description = argument.description.strip()
        params.append(
            Param(
                name=argument.name,
                annotation=Annotated[annotation, description] if description else annotation,
                default=default,
            )
        )
    return parsed.name, parsed.description, params, problems
