"""`available_models`: what ``%agent models`` says, the models this machine can use right now.

Two sources: the Ollama server (its models, or that it does not run at its address, and how to
start it) and the embedded models, the default and the optional bigger one (installed or not,
with the pip command, and whether the file is ready). Nothing is
loaded; the only contact is Ollama's ``/api/version`` and ``/api/tags``.
"""

from __future__ import annotations

from .._redact import shown_address
from . import gguf
from .base import ModelError
from .resolve import DEFAULT_MODEL, _base_url, local_model_problem, ollama_answers, ollama_host

__all__ = ["available_models"]


async def available_models() -> str:
    """The Ollama server's models and the embedded model(s), a few lines for a person."""
    return "\n".join([*(await _ollama_lines()), *_embedded_lines()])


async def _ollama_lines() -> list[str]:
    host = ollama_host()
    where = f"Ollama at {shown_address(_base_url(host))}"
    if not ollama_answers(host):
        return [f"{where}: not running (start it with `ollama serve`, then `ollama pull {DEFAULT_MODEL}`)."]
    from .ollama import OllamaModel

    try:
        names = await OllamaModel(DEFAULT_MODEL, host=host).list_models()
    except ModelError as error:
        return [f"{where}: {error}"]
    if not names:
        return [f"{where}: no models yet (`ollama pull {DEFAULT_MODEL}`)."]
    return [f"{where} (-m NAME):", *(f"  {name}" for name in names)]


def _embedded_lines() -> list[str]:
    chosen = gguf.configured_path()
    title = chosen.name if chosen is not None else gguf.DEFAULT_MODEL_TITLE
    problem = local_model_problem()
    if problem is not None:
        status = f"not installed. {problem}" if chosen is None else problem
    elif chosen is not None:
        status = f"ready ({chosen}, from ${gguf.ENV_VAR})"
    else:
        status = _file_status(gguf.DEFAULT_EMBEDDED)
    lines = ["Embedded (-m local):", f"  {title} (llama.cpp): {status}"]
    for model in gguf.EMBEDDED_MODELS:
        if model is not gguf.DEFAULT_EMBEDDED:  # the bigger ones: optional, each its own extra
            problem = local_model_problem(model=model)
            status = f"not installed ({model.install})" if problem else _file_status(model)
            lines += [f"Embedded, bigger (-m local:{model.short}):", f"  {model.title} (llama.cpp): {status}"]
            lines += [f"  {model.choose}"] if model.choose else []
    return lines


def _file_status(model: gguf.EmbeddedModel) -> str:
    """An installed embedded model: its file ready in the cache, or put together on first use."""
    cached = gguf.cache_dir() / model.file_name
    if cached.is_file() and cached.stat().st_size == model.size:
        return f"installed, ready ({cached})"
    size = round(model.size / 1e6)
    return f"installed; its file ({size:,} MB) is put together in {cached.parent} on first use"
