"""Function signature, `Annotated` metadata and docstring -> one pydantic arguments model.

The model is the single source of truth for a tool's arguments: validation uses it, and the JSON
Schema (from which the XML is rendered) is generated from it. Descriptions come, in order, from a
plain string in `Annotated[T, "text"]`, from `Annotated[T, Field(description=...)]`, and from the
docstring's Args / Parameters section (Google, NumPy or Sphinx style).
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, TypeAdapter, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticUndefined, to_jsonable_python

from .context import is_context_type

__all__ = ["ArgumentsModel", "Param", "describe_function", "inline_refs", "type_name"]

_REF_PREFIX = "#/$defs/"


class _UntitledJsonSchema(GenerateJsonSchema):
    """Pydantic's generator without the `title` keys it invents from names.

    Titles cost tokens and tell a model nothing the names do not. Field titles are never made;
    class titles (models, TypedDicts, dataclasses, enums) live at the top level of each
    definition, where they are dropped as the schema is generated, never by walking the finished
    dict: a parameter may itself be called ``title``.
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def encode_default(self, dft: Any) -> Any:
        return super().encode_default(_ordered(dft))

    def generate(self, schema: Any, mode: Any = "validation") -> dict[str, Any]:
        json_schema = super().generate(schema, mode=mode)
        for definition in (json_schema, *json_schema.get("$defs", {}).values()):
            definition.pop("title", None)
        return json_schema


def _ordered(value: Any) -> Any:
    """``value`` with every set made a sorted list: a set's order differs between processes."""
    if isinstance(value, (set, frozenset)):
        items = [_ordered(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(to_jsonable_python(item), sort_keys=True))
    if isinstance(value, dict):
        return {key: _ordered(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_ordered(item) for item in value]
    if isinstance(value, BaseModel):
        return _ordered(value.model_dump(by_alias=True))
    return value


@dataclass(frozen=True)
class Param:
    """One argument of a tool, before it becomes a pydantic field."""

    name: str
    """The argument name the model uses."""
    annotation: Any
    """The type, possibly `Annotated` (its string metadata is read as the description)."""
    default: Any = PydanticUndefined
    """The default value; `PydanticUndefined` when the argument is required."""
    doc: str | None = None
    """The description from the docstring, used when the annotation carries none."""
    positional_only: bool = False
    """Whether the function takes it only by position (``def f(x, /)``)."""


@dataclass(frozen=True)
class ArgumentsModel:
    """A tool's arguments as a pydantic model, with its JSON Schema."""

    model: type[BaseModel]
    """Validates a call's arguments; fields are named ``p0, p1, ...`` with the real names as aliases."""
    params: tuple[Param, ...]
    """The arguments, in signature order."""
    schema: dict[str, Any]
    """The JSON Schema of the arguments: no titles, `$ref`s inlined, ``additionalProperties: false``."""

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validate ``arguments``; raises `pydantic.ValidationError`.

        Returns:
            The validated values by argument name, defaults filled in.
        """
        instance = self.model.model_validate(arguments)
        return {param.name: getattr(instance, f"p{i}") for i, param in enumerate(self.params)}

    @classmethod
    def build(cls, params: Sequence[Param]) -> ArgumentsModel:
        """Build the model for ``params``; raises `ToolDefinitionError`-ready problems as `ValueError`.

        Raises:
            ValueError: One line per parameter whose type pydantic cannot express, as ``args``.
        """
        params = tuple(params)
        fields: dict[str, Any] = {f"p{i}": _field(param) for i, param in enumerate(params)}
        try:
            model = create_model(
                "Arguments", __config__=ConfigDict(extra="forbid", validate_by_name=False), **fields
            )
            schema = model.model_json_schema(schema_generator=_UntitledJsonSchema)
        except (PydanticUserError, TypeError, ValueError):
            raise ValueError(*_type_problems(params)) from None
        return cls(model=model, params=params, schema=inline_refs(schema))


def _field(param: Param) -> tuple[Any, Any]:
    """(annotation, default) for `create_model`, with the description resolved."""
    base, metadata = param.annotation, ()
    if get_origin(base) is Annotated:
        base, metadata = base.__origin__, tuple(base.__metadata__)
    texts = [m.strip() for m in metadata if isinstance(m, str) and m.strip()]
    kept = [m for m in metadata if not isinstance(m, str)]
    default = param.default
    if isinstance(default, FieldInfo):  # def f(x: int = Field(3, description=...))
        kept.append(default)
        default = default.default
    field_docs = [m.description for m in kept if isinstance(m, FieldInfo) and m.description]
    description = (texts or field_docs or [param.doc or None])[0]
    final = Field(alias=param.name, description=description)
    annotated = Annotated[(base, *kept, final)] if kept else Annotated[base, final]
    return (annotated, ... if default is PydanticUndefined else default)


def _type_problems(params: Sequence[Param]) -> list[str]:
    """Name each parameter whose type pydantic cannot turn into a JSON Schema."""
    problems = []
    for param in params:
        try:
            TypeAdapter(param.annotation).json_schema(schema_generator=_UntitledJsonSchema)
        except (PydanticUserError, TypeError, ValueError) as exc:
            reason = str(exc).splitlines()[0].split(". ")[0].rstrip(".")
            problems.append(
                f"parameter '{param.name}': type {type_name(param.annotation)} cannot be described"
                f" as JSON Schema ({reason}); use a basic type, Literal, Enum, list, dict,"
                " a TypedDict, a dataclass or a pydantic model"
            )
    return problems or ["the arguments cannot be described as one JSON Schema object"]


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace each `$ref` to `$defs` by the definition itself, so a model reads it in place.

    Sibling keys of a `$ref` (a field's own description or default) win over the definition's.
    Definitions that refer to themselves (recursive models) cannot be inlined; they stay in
    `$defs` and are referred to by `$ref`.
    """
    defs = schema.get("$defs", {})
    graph = {key: _refs(value) for key, value in defs.items()}
    recursive = {key for key in defs if key in _reachable(graph[key], graph)}

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        siblings = {k: walk(v) for k, v in node.items() if k not in ("$ref", "$defs")}
        key = _ref_key(node)
        if key in defs and key not in recursive:
            return {**walk(defs[key]), **siblings}
        return {"$ref": node["$ref"], **siblings} if "$ref" in node else siblings

    result = walk(schema)
    kept = sorted(_reachable(_refs(result), graph) & recursive)
    if kept:
        result["$defs"] = {key: walk(defs[key]) for key in kept}
    return result


def _ref_key(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    return ref[len(_REF_PREFIX) :] if isinstance(ref, str) and ref.startswith(_REF_PREFIX) else None


def _refs(node: Any) -> set[str]:
    """The `$defs` keys that ``node`` refers to directly."""
    if isinstance(node, list):
        return set().union(*map(_refs, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = {key} if (key := _ref_key(node)) else set()
    return found.union(*(_refs(v) for k, v in node.items() if k != "$defs"))


def _reachable(start: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        key = todo.pop()
        if key not in seen:
            seen.add(key)
            todo.extend(graph.get(key, ()))
    return seen


@dataclass(frozen=True)
class FunctionDescription:
    """Everything `@tool` reads from a function."""

    arguments: ArgumentsModel | None
    """None when there were problems."""
    description: str
    returns: str | None
    output_type: str | None
    problems: tuple[str, ...]
    context: str | None = None
    """The parameter that takes the call's `ToolContext` (not an argument), if any."""


def describe_function(fn: Callable[..., Any]) -> FunctionDescription:
    """Read a function's signature, type hints and docstring.

    Problems (``*args``, a parameter with neither annotation nor default, unresolvable hints,
    types pydantic cannot express) are collected, not raised, so that one error can name them all.
    """
    problems: list[str] = []
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    description = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        return FunctionDescription(None, description, None, None, (f"no signature: {exc}",))
    hints, unresolved = _type_hints(fn, signature)
    problems.extend(unresolved.values())

    doc_params = {p.arg_name: p.description for p in doc.params if p.description}
    params, contexts = [], []
    for name, parameter in signature.parameters.items():
        if name in unresolved:
            continue
        if is_context_type(hints.get(name)):  # the call's context, filled in when it runs
            contexts.append(name)
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                problems.append(
                    f"the context parameter {name!r} cannot be positional-only (it is passed by name)"
                )
            continue
        problem = _parameter_problem(name, parameter, hints)
        if problem:
            problems.append(problem)
            continue
        annotation = hints.get(name, parameter.annotation)
        default = parameter.default
        if annotation is inspect.Parameter.empty:  # the default tells the type
            annotation = Any if default is None else type(default)
        params.append(
            Param(
                name=name,
                annotation=annotation,
                default=PydanticUndefined if default is inspect.Parameter.empty else default,
                doc=_clean(doc_params.get(name)),
                positional_only=parameter.kind is inspect.Parameter.POSITIONAL_ONLY,
            )
        )

    arguments = None
    try:  # also when other problems were found: the error names them all at once
        arguments = ArgumentsModel.build(params)
    except ValueError as exc:
        problems.extend(exc.args)
    if len(contexts) > 1:
        problems.append(f"one ToolContext parameter is enough, it has {len(contexts)}: {', '.join(contexts)}")
    output_type, returns = _returns(hints, doc.returns)
    context = contexts[0] if contexts else None
    return FunctionDescription(arguments, description, returns, output_type, tuple(problems), context)


def _type_hints(
    fn: Callable[..., Any], signature: inspect.Signature
) -> tuple[dict[str, Any], dict[str, str]]:
    """Resolved type hints, and a problem per annotation that cannot be resolved.

    When resolving all at once fails (a name defined inside a function, under
    ``from __future__ import annotations``), each annotation is resolved alone to name the culprits.
    """
    try:
        return typing.get_type_hints(fn, include_extras=True), {}
    except Exception:  # a NameError, TypeError or SyntaxError from evaluating the annotations
        pass
    hints, unresolved = {}, {}
    annotations = {name: p.annotation for name, p in signature.parameters.items()}
    annotations["return"] = signature.return_annotation
    for name, annotation in annotations.items():
        if annotation is inspect.Parameter.empty:
            continue
        probe = types.FunctionType(_probe.__code__, getattr(fn, "__globals__", {}))
        probe.__annotations__ = {name: annotation}
        try:
            hints.update(typing.get_type_hints(probe, include_extras=True))
        except Exception as exc:
            what = "the return type" if name == "return" else f"parameter '{name}'"
            unresolved[name] = (
                f"{what}: the type hint {annotation!r} cannot be resolved ({type(exc).__name__}: {exc});"
                " define the types it names at module level, or import them"
            )
    return hints, unresolved


def _probe() -> None:
    """A code object to build annotation probes from (see `_type_hints`)."""


def _parameter_problem(name: str, parameter: inspect.Parameter, hints: dict[str, Any]) -> str | None:
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"*{name} is not supported: a model passes named arguments; declare each one"
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
        return f"**{name} is not supported: a model passes named arguments; declare each one"
    no_annotation = name not in hints and parameter.annotation is inspect.Parameter.empty
    if no_annotation and parameter.default is inspect.Parameter.empty:
        hint = f"annotate it, e.g. {name}: str"
        if name in ("self", "cls"):
            hint = "decorate the bound method instead, e.g. tool(instance.method)"
        return f"parameter '{name}' has neither a type annotation nor a default; {hint}"
    return None


def _returns(hints: dict[str, Any], doc_returns: Any) -> tuple[str | None, str | None]:
    """(output type name, "type: description") from the return annotation and docstring."""
    annotation = hints.get("return", inspect.Parameter.empty)
    described = None
    if get_origin(annotation) is Annotated:
        described = next((m for m in annotation.__metadata__ if isinstance(m, str)), None)
        annotation = annotation.__origin__
    output_type = None if annotation is inspect.Parameter.empty else type_name(annotation)
    if doc_returns is not None:
        output_type = output_type or doc_returns.type_name
        described = described or doc_returns.description
    described = _clean(described)
    if output_type == "None" and not described:
        return output_type, None  # nothing worth a model's attention
    parts = [p for p in (output_type, described) if p]
    return output_type, ": ".join(parts) or None


def _clean(text: str | None) -> str | None:
    """Strip a description and give it plain newlines; None when empty."""
    if not text:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n").strip() or None


def type_name(annotation: Any) -> str:
    """A short, readable name for a type: ``int``, ``list[str]``, ``Weather``, ``None``."""
    if annotation is None or annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not get_args(annotation):
        return annotation.__name__
    return repr(annotation).replace("typing.", "").replace("typing_extensions.", "")
