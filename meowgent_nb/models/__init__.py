"""Model backends: `OllamaModel` (a real server), `OpenAIModel` (OpenAI-compatible servers),
`LlamaCppModel` (embedded), `SharedLocalModel` (the embedded model in one process the kernels of a
machine share), `ScriptedModel` and `FunctionModel` (offline, deterministic, for
teaching notebooks and tests). Recording and replaying any of them is the `recording` wing's.

`ALLOW_MODEL_REQUESTS` guards against reaching a real model server by accident: the test suite
sets it to False, and backends that talk to a server refuse while it is False.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Model, ModelChunk, ModelError, ModelRequest, RetryCause, ToolSupport, Usage
from .scripted import FunctionModel, ScriptedModel

if TYPE_CHECKING:  # imported on first use (`__getattr__`): their clients are heavy
    from .llamacpp import LlamaCppModel
    from .ollama import OllamaModel
    from .openai import OpenAIModel
    from .shared_local import SharedLocalModel

ALLOW_MODEL_REQUESTS = True
"""Whether backends may contact a model server. Offline models ignore it."""

__all__ = [  # noqa: RUF022 - grouped by comment, sorted within each group
    # The guard against reaching a real model by accident
    "ALLOW_MODEL_REQUESTS",
    # The interface a backend implements
    "Model",
    "ModelChunk",
    "ModelError",
    "ModelRequest",
    "RetryCause",
    "ToolSupport",
    "Usage",
    # Backends
    "FunctionModel",
    "LlamaCppModel",
    "OllamaModel",
    "OpenAIModel",
    "ScriptedModel",
    "SharedLocalModel",
]

# Backends whose modules import a client (ollama, httpx, llama_cpp's loader): loaded when first named.
_LAZY = {
    "LlamaCppModel": "llamacpp",
    "OllamaModel": "ollama",
    "OpenAIModel": "openai",
    "SharedLocalModel": "shared_local",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_model_requests_allowed(what: str) -> None:
    """Raise `ModelError` when `ALLOW_MODEL_REQUESTS` is False (as in the test suite)."""
    if not ALLOW_MODEL_REQUESTS:
        raise ModelError(
            f"Refusing to contact {what}: meowgent_nb.models.ALLOW_MODEL_REQUESTS is False"
            " (the test suite sets it so that no test reaches a real model by accident)."
            " Use a ScriptedModel or FunctionModel, or set it to True for this test."
        )
