"""`available_models`: what ``%agent models`` says, the models this machine can use right now.

Two sources: the Ollama server (its models, or that it does not run at its address, and how to
start it) and the embedded model (installed or not, and whether its file is ready). Nothing is
loaded; the only contact is Ollama's ``/api/version`` and ``/api/tags``.
"""

from __future__ import annotations

from . import gguf
from ._hosts import shown_address
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
        cached = gguf.cache_dir() / gguf.GGUF_NAME
        ready = cached.is_file() and cached.stat().st_size == gguf.GGUF_SIZE
        status = (
            f"installed, ready ({cached})"
            if ready
            else f"installed; its file ({gguf.size_mb(None)} MB) is put together in {cached.parent} on first use"
        )
    return ["Embedded (-m local):", f"  {title} (llama.cpp): {status}"]
