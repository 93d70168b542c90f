"""`resolve_model`: from what a person types (``"qwen2.5:0.5b"``, ``"local"``...) to a `Model`.

- ``"ollama:NAME"``: `OllamaModel` ``NAME``, whether or not the server runs now.
- ``"openai:NAME"``: `OpenAIModel` ``NAME`` on the OpenAI-compatible server at
  ``$OPENAI_BASE_URL`` (key: ``$OPENAI_API_KEY``), whether or not it runs now.
- ``"local"``: `LlamaCppModel` with the default GGUF (or ``$MEOWGENT_GGUF``).
- ``"local:PATH"``: `LlamaCppModel` with that file.
- A bare name: Ollama's model of that name if an Ollama server answers now, else the local
  model if it is installed, else one error naming both ways to get a model. The local model is
  always the same file whatever the name, and says so in its name (``local:<file>``).
- A `Model` object is returned as it is; None means `DEFAULT_MODEL`.

Only the bare-name case contacts anything: one ``GET /api/version`` with a one-second limit.
That probe is not a model request, so `ALLOW_MODEL_REQUESTS` does not stop it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import gguf
from .base import Model, ModelError

__all__ = ["DEFAULT_MODEL", "local_model_problem", "ollama_answers", "resolve_model"]

DEFAULT_MODEL = "qwen2.5:0.5b"
"""The model used when none is named: small enough for a laptop CPU, and it calls tools."""

_PROBE_TIMEOUT = 1.0  # seconds: a local server answers in milliseconds; a dead port must not stall a cell
_DEFAULT_HOST = "http://127.0.0.1:11434"

# Ollama option names that mean a LlamaCppModel setting. Others have no local equivalent.
_LOCAL_SETTINGS = {
    "temperature": "temperature",
    "seed": "seed",
    "num_ctx": "n_ctx",
    "num_predict": "max_tokens",
    "num_thread": "n_threads",
}


def resolve_model(
    spec: str | Model | None, *, options: Mapping[str, Any] | None = None, openai_base_url: str | None = None
) -> Model:
    """The model ``spec`` names.

    Args:
        spec: ``"ollama:NAME"``, ``"openai:NAME"``, ``"local"``, ``"local:PATH"``, a bare Ollama
            model name, a `Model` (returned as is), or None for `DEFAULT_MODEL`.
        options: Ollama-style options (``temperature``, ``seed``, ``num_ctx``...). An Ollama
            model takes them all; the local model reads ``temperature``, ``seed``, ``num_ctx``,
            ``num_predict`` and ``num_thread``; an OpenAI-compatible one ``temperature``,
            ``seed``, ``num_predict``, ``top_p`` and ``stop`` (``num_ctx`` is left out: a
            server's context is set when it starts).
        openai_base_url: Where an ``"openai:NAME"`` model's server is; None: ``$OPENAI_BASE_URL``.

    Returns:
        A model; nothing is loaded or generated yet.

    Raises:
        ModelError: The local model is asked for but cannot run, a bare name finds neither an
            Ollama server nor the local model, or an option has no local (or OpenAI API) equivalent.
    """
    if spec is None:
        spec = DEFAULT_MODEL
    if not isinstance(spec, str):
        return spec
    kind, colon, rest = spec.partition(":")
    if kind == "ollama" and colon:
        return _ollama(rest, options)
    if kind == "openai" and colon:
        return _openai(rest, options, openai_base_url)
    if kind == "local":
        if colon and not rest:
            raise ModelError(
                '"local:" needs a GGUF file after the colon, or use "local" for the default model.'
            )
        path = rest if colon else None
        problem = local_model_problem(path)
        if problem:
            raise ModelError(problem)
        return _local(path, options)
    from .ollama import OllamaModel  # the ollama client is only imported when needed

    host = os.environ.get("OLLAMA_HOST") or _DEFAULT_HOST
    if ollama_answers(host):
        return OllamaModel(spec, options=options)
    problem = _local_problem()
    if problem is None:
        return _local(None, options)
    raise ModelError(
        f"No model for {spec!r}: the Ollama server at {host} does not answer, and the local model"
        f" cannot run ({problem[0]}). Either start Ollama (`ollama serve`) and pull the model"
        f" (`ollama pull {spec}`), or install the local model: {gguf.INSTALL_LOCAL}"
    )


def ollama_answers(host: str) -> bool:
    """Whether an Ollama server answers ``GET /api/version`` at ``host`` within a second.

    Args:
        host: As in ``OLLAMA_HOST``: ``"127.0.0.1:11434"``, ``"http://box:8080"``...
    """
    import httpx

    try:
        response = httpx.get(_base_url(host) + "/api/version", timeout=_PROBE_TIMEOUT)
        # Another program on the port answers something else; only Ollama says its version.
        return response.status_code == 200 and "version" in response.json()
    except (httpx.HTTPError, ValueError, TypeError):
        return False


def local_model_problem(path: str | Path | None = None) -> str | None:
    """Why the local model could not run, as an error message; None when it can.

    Looks without loading anything: the GGUF (``path``, else ``$MEOWGENT_GGUF``, else the
    default model's part packages) must be there, and llama-cpp-python importable.

    Args:
        path: An explicit GGUF file.
    """
    problem = _local_problem(path)
    return None if problem is None else problem[1]


def _local_problem(path: str | Path | None = None) -> tuple[str, str] | None:
    """The reason in a few words, and the full message; None when the local model can run."""
    # A chosen file is checked first, so its error does not depend on what else is installed.
    chosen = gguf.configured_path(path)
    if chosen is not None and not chosen.is_file():
        from_env = path is None
        return (
            gguf.missing_file_reason(chosen, from_env=from_env),
            gguf.missing_file_message(chosen, from_env=from_env),
        )
    # find_spec looks for llama-cpp-python without importing it (a second or more).
    if importlib.util.find_spec("llama_cpp") is None:
        from .llamacpp import NEEDS_LLAMA_CPP

        return "llama-cpp-python is not installed", NEEDS_LLAMA_CPP
    missing = gguf.missing_packages() if chosen is None else []
    if missing:
        verb = "are" if len(missing) > 1 else "is"
        return f"{', '.join(missing)} {verb} not installed", gguf.missing_parts_message(missing)
    return None


def _ollama(name: str, options: Mapping[str, Any] | None) -> Model:
    from .ollama import OllamaModel

    if not name:
        raise ModelError('"ollama:" needs a model name after the colon, e.g. "ollama:qwen2.5:0.5b".')
    return OllamaModel(name, options=options)


def _openai(name: str, options: Mapping[str, Any] | None, base_url: str | None = None) -> Model:
    from .openai import OpenAIModel  # the openai client itself is imported by the first request

    if not name:
        raise ModelError(
            '"openai:" needs the model\'s name on the server after the colon, e.g.'
            ' "openai:Qwen/Qwen2.5-7B-Instruct"; the server is $OPENAI_BASE_URL.'
        )
    # %%agent always sends num_ctx; on these servers the context is fixed when the server starts.
    options = {key: value for key, value in (options or {}).items() if key != "num_ctx"}
    return OpenAIModel(name, base_url=base_url, options=options)


def _local(path: str | None, options: Mapping[str, Any] | None) -> Model:
    from .llamacpp import LlamaCppModel

    options = {key: value for key, value in (options or {}).items() if value is not None}
    unknown = sorted(key for key in options if key not in _LOCAL_SETTINGS)
    if unknown:
        raise ModelError(
            f"The local model has no option {', '.join(unknown)}; it reads {', '.join(_LOCAL_SETTINGS)}."
        )
    return LlamaCppModel(path or None, **{_LOCAL_SETTINGS[key]: value for key, value in options.items()})


def _base_url(host: str) -> str:
    """``OLLAMA_HOST`` as a URL: http unless said otherwise, port 11434 unless given."""
    scheme, sep, rest = host.partition("://")
    if not sep:
        scheme, rest = "http", host
    parts = urlsplit(f"{scheme}://{rest}")
    default_port = {"http": 80, "https": 443}.get(scheme, 11434) if sep else 11434
    hostname = parts.hostname or "127.0.0.1"
    if ":" in hostname:  # IPv6 needs its brackets back
        hostname = f"[{hostname}]"
    path = parts.path.rstrip("/")
    return f"{scheme}://{hostname}:{parts.port or default_port}{path}"
