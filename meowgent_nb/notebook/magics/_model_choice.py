"""The model of a ``%%agent`` cell (or ``%tools eval``): a notebook object, or a name resolved once.

A name goes through `choose_model`, the one place names become models. When the embedded model
answers instead of the model named (only for "auto", the default), the first cell says so in
words, with how to choose a model explicitly; later cells say it in their model line ("...,
Ollama not running"), and every cell asks again: Ollama may have been started (or the model
pulled) since. A new reason is said in full again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["EXPLICIT", "cell_model"]

EXPLICIT = (
    "To choose the model yourself (and not be told this again): `%%agent -m local`,"
    ' `%config AgentMagics.model = "local"` or MEOWGENT_MODEL=local; later cells say'
    ' "{short}" in their model line.'
)
"""The second line of the full notice: how to make the choice explicit."""


def cell_model(session: NotebookSession, args: Any) -> Any:
    """The model for the cell's options (``--model-object``, ``-m``), else ``AgentMagics.model``.

    Resolved models are kept in ``session.models``, so a local model is loaded once per session.
    Sets ``session.model_note`` to the few words the cell's model line adds (None for none).

    Raises:
        UsageError: ``--model-object`` names no model, or the name resolves to none (the
            message says why and how to fix it).
    """
    session.model_note = None
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
            kept = session.models[key] = type(choice)(kept.model, choice.instead, choice.short)
    if kept.instead:
        session.model_note = kept.short
        if kept.instead not in session.told:
            session.told.add(kept.instead)
            print(kept.instead)
            print(EXPLICIT.format(short=kept.short))
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
