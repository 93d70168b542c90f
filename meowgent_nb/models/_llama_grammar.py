"""llama.cpp grammars for the embedded model: a whole answer's JSON schema, or each tool's arguments.

Compiling a grammar from a JSON schema takes llama.cpp a while, so each schema is compiled once
and kept, by its JSON text. Used under the model's lock, from its generation thread.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from .base import ModelError

__all__ = ["GrammarCache"]


class GrammarCache(dict):
    """Compiled grammars by the JSON text of their schema."""

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

        A tool whose schema llama.cpp cannot express is left out: its calls are written freely,
        and the agent validates them as always.
        """
        grammars = {}
        for shape in json.loads(call_schema).get("anyOf", []):
            properties = shape.get("properties", {})
            name = properties.get("name", {}).get("const")
            if isinstance(name, str) and "arguments" in properties:
                with contextlib.suppress(ModelError):
                    grammars[name] = self.of(json.dumps(properties["arguments"]), model_name)
        return grammars
