"""llama.cpp grammars for the embedded model: a whole answer's JSON schema, or each tool's arguments.

A tool's arguments schema is first `bounded` (strings to `STRING_MAX_LENGTH`, arrays to
`ARRAY_MAX_ITEMS`, where the schema sets no bound), because at temperature 0 a small model can
repeat itself inside one until the token limit. What llama.cpp's converter cannot express (a
property with no type, an unanchored pattern) is loosened and left to validation rather than
costing the tool its grammar. Each schema is compiled once and kept, by its JSON text; used under
the model's lock.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from .base import ModelError

__all__ = ["ARRAY_MAX_ITEMS", "STRING_MAX_LENGTH", "GrammarCache", "bounded"]

STRING_MAX_LENGTH = 200
"""Characters in a constrained string argument whose schema sets no ``maxLength``: room for a
sentence, a path or a query, not for a loop."""
ARRAY_MAX_ITEMS = 16
"""Items in a constrained array argument whose schema sets no ``maxItems``."""

# Keys that give a schema a shape llama.cpp's converter knows; a schema with none is untyped.
_SHAPING = {
    "type", "$ref", "anyOf", "oneOf", "allOf", "const", "enum", "properties", "items",
    "prefixItems", "pattern", "additionalProperties",
}  # fmt: skip
_SCALARS = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}]


def _any_value() -> dict[str, Any]:
    """Any JSON value, its strings and arrays bounded (objects stay llama.cpp's free object)."""
    return {"anyOf": [*_SCALARS, {"type": "array", "items": {"anyOf": _SCALARS}}, {"type": "object"}]}


def bounded(schema: Any) -> Any:
    """``schema`` (a JSON schema) with default bounds on strings and arrays and untyped parts
    made "any JSON value", ready for llama.cpp's converter. The schema itself is not changed.

    Validation still uses the tool's own schema: these bounds only keep generation finite.
    """
    if not isinstance(schema, dict):
        return schema
    schema = dict(schema)
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not (pattern.startswith("^") and pattern.endswith("$")):
        # llama.cpp takes only anchored patterns; an unanchored one ("contains") stays a bounded
        # string here, and validation still checks it.
        del schema["pattern"]
        schema.setdefault("type", "string")
    if not _SHAPING & schema.keys():
        schema = _any_value()
    if isinstance(schema.get("type"), list):  # llama.cpp would drop the bounds: one shape per type
        rest = {key: value for key, value in schema.items() if key != "type"}
        return bounded({"anyOf": [{**rest, "type": kind} for kind in schema["type"]]})
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(schema.get(key), list):
            schema[key] = [bounded(part) for part in schema[key]]
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            schema[key] = {name: bounded(part) for name, part in schema[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            schema[key] = bounded(schema[key])
    if schema.get("type") == "string" and "maxLength" not in schema:
        schema["maxLength"] = max(STRING_MAX_LENGTH, schema.get("minLength", 0))
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict) and "maxItems" not in schema:
        schema["maxItems"] = max(ARRAY_MAX_ITEMS, schema.get("minItems", 0))
    return schema


class GrammarCache(dict):
    """Compiled grammars by the JSON text of their schema (None: it could not be compiled)."""

    def of(self, schema: str, model_name: str) -> Any:
        """The grammar of a JSON schema, compiled the first time it is asked for.

        Raises:
            ModelError: llama.cpp cannot express the schema; the message says what to simplify.
        """
        import llama_cpp

        if schema not in self:
            try:
                self[schema] = llama_cpp.LlamaGrammar.from_json_schema(schema, verbose=False)
            except Exception as exc:  # the converter raises plain exceptions for what it cannot do
                raise ModelError(
                    f"{model_name} cannot constrain its answer to this JSON schema: {type(exc).__name__}:"
                    f" {exc}. Simplify the tools' parameter types, or use the xml protocol."
                ) from exc
        return self[schema]

    def for_arguments(self, call_schema: str, model_name: str) -> dict[str, Any]:
        """Each offered tool's arguments grammar, by tool name, from `call_schema`'s shapes.

        A tool whose schema llama.cpp cannot express even `bounded` is left out, with a warning
        the first time: its calls are written freely, and the agent validates them as always.
        """
        grammars = {}
        for shape in json.loads(call_schema).get("anyOf", []):
            properties = shape.get("properties", {})
            name = properties.get("name", {}).get("const")
            if not (isinstance(name, str) and "arguments" in properties):
                continue
            schema = json.dumps(bounded(properties["arguments"]))
            if self.get(schema, False) is None:  # failed before, and said so then
                continue
            try:
                grammars[name] = self.of(schema, model_name)
            except ModelError as error:
                self[schema] = None
                cause = error.__cause__
                warnings.warn(
                    f"The arguments of the tool {name!r} are not constrained: llama.cpp cannot convert"
                    f" their schema ({type(cause).__name__}: {str(cause)[:200]}). Its calls are"
                    " written freely and validated as usual; plain JSON Schema types (string,"
                    " number, integer, boolean, array, object) can be constrained.",
                    stacklevel=2,
                )
        return grammars
