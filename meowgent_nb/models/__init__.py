"""Model backends: `OllamaModel` (a real server), `OpenAIModel` (OpenAI-compatible servers),
`LlamaCppModel` (embedded), `ScriptedModel` and `FunctionModel` (offline, deterministic, for
teaching notebooks and tests). Recording and replaying any of them is the `recording` wing's.

`ALLOW_MODEL_REQUESTS` guards against reaching a real model server by accident: the test suite
sets it to False, and backends that talk to a server refuse while it is False.
"""

from __future__ import annotations

from .base import Model, ModelChunk, ModelError, ModelRequest, Usage

ALLOW_MODEL_REQUESTS = True
"""Whether backends may contact a model server. Offline models ignore it."""

__all__ = ["ALLOW_MODEL_REQUESTS", "Model", "ModelChunk", "ModelError", "ModelRequest", "Usage"]


def check_model_requests_allowed(what: str) -> None:
    """Raise `ModelError` when `ALLOW_MODEL_REQUESTS` is False (as in the test suite)."""
    if not ALLOW_MODEL_REQUESTS:
        raise ModelError(
            f"Refusing to contact {what}: meowgent_nb.models.ALLOW_MODEL_REQUESTS is False"
            " (the test suite sets it so that no test reaches a real model by accident)."
            " Use a ScriptedModel or FunctionModel, or set it to True for this test."
        )
