"""The model of a ``%%agent`` cell (or ``%tools eval``): a notebook object, or a name resolved once.

A name goes through `choose_model`, the one place names become models. When the embedded model
answers instead of the model named (only for "auto", the default), the cell says so in words,
every time, and asks again: Ollama may have been started (or the model pulled) since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["cell_model"]


def cell_model(session: NotebookSession, args: Any) -> Any:
    """The model for the cell's options (``--model-object``, ``-m``), else ``AgentMagics.model``.

    Resolved models are kept in ``session.models``, so a local model is loaded once per session.

    Raises:
        UsageError: ``--model-object`` names no model, or the name resolves to none (the
            message says why and how to fix it).
    """
    if args.model_object:
        return _notebook_model(session.shell.user_ns, args.model_object)
    from ...models import ModelError
    from ...models.resolve import choose_model

    options = session.model_options()
    base_url = session.settings.openai_base_url or None
    key = (args.model or session.settings.model, tuple(sorted(options.items())), base_url)
    kept = session.models.get(key)
    if kept is None or kept.instead:
        try:
            choice = choose_model(key[0], options=options, openai_base_url=base_url)
        except ModelError as error:
            raise UsageError(f"%%agent: {error}") from None
        if kept is None or not choice.instead:
            kept = session.models[key] = choice
        elif choice.instead != kept.instead:  # still the embedded model (already loaded), for a new reason
            kept = session.models[key] = type(choice)(kept.model, choice.instead)
    if kept.instead:
        print(kept.instead)
    return kept.model


def _notebook_model(namespace: dict[str, Any], name: str) -> Any:
    if name not in namespace:
        raise UsageError(f"%%agent: --model-object {name}: no such variable in the notebook.")
    model = namespace[name]
    if not callable(getattr(model, "stream", None)):
        raise UsageError(
            f"%%agent: --model-object {name} is a {type(model).__name__}, not a model"
            " (it needs a stream(request) method, like ScriptedModel or OllamaModel)."
        )
    return model
