"""`resolve_model`: from what a person types (``"qwen2.5:0.5b"``, ``"local"``...) to a `Model`.

``ollama:NAME``, ``openai:NAME``, ``local``, ``local:1.5b`` and ``local:PATH`` name a backend
outright; a bare name is Ollama's model of that name, checked against the running server; ``auto``
(the default) is `DEFAULT_MODEL`, falling back to the embedded model when Ollama cannot serve it
(`choose_model` says why). A name is never silently replaced: only "auto" allows a fallback. The
forms a person reads are in docs/guides/models.md. Only bare names and "auto" contact anything
(a one-second probe of the Ollama server, not a model request). A site's policy
(`meowgent_nb.policy`) gives the default model, the servers and their key, and the backends allowed.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._redact import shown_address
from ..policy import Policy, current_policy
from . import gguf
from .base import Model, ModelError

__all__ = [
    "AUTO",
    "DEFAULT_MODEL",
    "ModelChoice",
    "choose_model",
    "local_model_problem",
    "ollama_answers",
    "ollama_host",
    "requested_name",
    "resolve_model",
]

DEFAULT_MODEL = "qwen2.5:0.5b"
"""The model used when none is named: small enough for a laptop CPU, and it calls tools."""
AUTO = "auto"
"""`DEFAULT_MODEL` on Ollama, or the embedded model instead (said in words) when Ollama cannot serve it."""

_PROBE_TIMEOUT = 1.0  # seconds: a local server answers in milliseconds; a dead port must not stall a cell
_SHOW_TIMEOUT = 5.0  # seconds: /api/show reads the model's metadata from disk
_DEFAULT_HOST = "http://127.0.0.1:11434"

# Ollama option names that mean a LlamaCppModel setting. Others have no local equivalent.
_LOCAL_SETTINGS = {
    "temperature": "temperature",
    "seed": "seed",
    "num_ctx": "n_ctx",
    "num_predict": "max_tokens",
    "num_thread": "n_threads",
}


@dataclass(frozen=True)
class ModelChoice:
    """The model a spec resolves to, and whether it answers instead of the one named."""

    model: Model
    instead: str | None = None
    """Why the embedded model answers instead of the model named, as a sentence for the person
    ("Ollama is not running at http://127.0.0.1:11434; the embedded model Qwen2.5-Coder-0.5B-Instruct
    answers instead of qwen2.5:0.5b."); None when the model is the one named."""
    short: str | None = None
    """The reason in a few words, for a line that already names the model ("Ollama not running",
    "Ollama has no qwen2.5:0.5b"); None when the model is the one named."""


def resolve_model(
    spec: str | Model | None, *, options: Mapping[str, Any] | None = None, openai_base_url: str | None = None
) -> Model:
    """The model ``spec`` names: `choose_model`'s, with its reason for the embedded model logged as a warning.

    Args:
        spec: ``"ollama:NAME"``, ``"openai:NAME"``, ``"local"``, ``"local:PATH"``, a bare Ollama
            model name, ``"auto"`` / ``"auto:NAME"``, a `Model` (returned as is), or None (the
            site policy's ``[defaults] model``, else ``"auto"``).
        options: Ollama-style options (``temperature``, ``seed``, ``num_ctx``...). An Ollama
            model takes them all; the local model reads ``temperature``, ``seed``, ``num_ctx``,
            ``num_predict`` and ``num_thread``; an OpenAI-compatible one ``temperature``,
            ``seed``, ``num_predict``, ``top_p`` and ``stop`` (``num_ctx`` is left out: a
            server's context is set when it starts).
        openai_base_url: Where an ``"openai:NAME"`` model's server is; None: ``$OPENAI_BASE_URL``,
            else the policy's ``[defaults] server_url`` (the only server sent the policy's key).

    Returns:
        A model; nothing is loaded or generated yet.

    Raises:
        ModelError: The local model is asked for but cannot run; a bare name's Ollama server does
            not run or lacks the model; "auto" finds neither Ollama's model nor the local one; or
            an option has no local (or OpenAI API) equivalent.
        PolicyError: The site's policy does not allow the model's backend, or cannot be used.
    """
    choice = choose_model(spec, options=options, openai_base_url=openai_base_url)
    if choice.instead:  # a script (Agent("auto")) is told too: on stderr, unless logging is set up otherwise
        logging.getLogger("meowgent_nb").warning(choice.instead)
    return choice.model


def choose_model(
    spec: str | Model | None, *, options: Mapping[str, Any] | None = None, openai_base_url: str | None = None
) -> ModelChoice:
    """The model ``spec`` names, and why the embedded model answers instead, when it does ("auto" only).

    Takes the same arguments, and raises the same errors, as `resolve_model`.
    """
    if not isinstance(spec, str) and spec is not None:
        return ModelChoice(spec)
    policy = current_policy()
    if spec is None:
        spec = policy.model.value if policy.model is not None else AUTO
    spec = spec.strip() or AUTO  # MEOWGENT_MODEL=" auto " from a careless export; "" names no model
    kind, colon, rest = spec.partition(":")
    kind = kind.lower()  # "Local", "AUTO": the prefixes, whatever the case; names keep theirs
    if kind == "ollama" and colon:
        policy.check(policy.backend_refusal("ollama", spec))
        return ModelChoice(_ollama(rest, options))
    if kind == "openai" and colon:
        policy.check(policy.backend_refusal("openai", spec))
        return ModelChoice(_openai(rest, options, openai_base_url, policy))
    titled = next((m for m in gguf.EMBEDDED_MODELS if spec.lower() == m.title.lower()), None)
    if kind == "local" or titled is not None:
        policy.check(policy.backend_refusal("local", spec))
        path = rest if kind == "local" and colon else None
        if path == "":
            raise ModelError(
                '"local:" needs a GGUF file after the colon, or use "local" for the default model.'
            )
        # An embedded model's name ("1.5b", its title or file name), unless a file of that name is there.
        named = titled or (gguf.named_model(path) if path and not Path(path).expanduser().is_file() else None)
        if named is not None and named is not gguf.DEFAULT_EMBEDDED:
            return ModelChoice(_embedded(named, options))
        if named is not None:
            path = None
        problem = local_model_problem(path)
        if problem:
            raise ModelError(problem)
        return ModelChoice(_local(path, options))
    if kind == AUTO and colon and not rest:
        raise ModelError(
            f'"auto:" needs a model name after the colon, e.g. "auto:{DEFAULT_MODEL}", or use "auto".'
        )
    policy.check(policy.backend_refusal("ollama", spec))
    # "auto" falls back to the embedded model only where the policy allows it.
    fallback = kind == AUTO and policy.backend_refusal("local", spec) is None
    name = requested_name(spec)
    host = ollama_host()
    state, shown = _ollama_state(host, name)
    if state in ("has", "unknown"):  # unknown: the first request will say what the server says
        from .ollama import OllamaModel  # the ollama client is only imported when needed

        # The model keeps the server's /api/show answer: it says which protocol suits it, and vision.
        return ModelChoice(OllamaModel(name, host=host, options=options, shown=shown))
    where = shown_address(_base_url(host))
    if state == "down":
        why = f"Ollama is not running at {where}"
        short = "Ollama not running"
        fix = f"start it (`ollama serve`, then `ollama pull {name}`)"
    else:
        why = f"the Ollama server at {where} has no model {name!r}"
        short = f"Ollama has no {name}"
        fix = f"pull it (`ollama pull {name}`; `%agent models` lists the models it has)"
    problem = _local_problem()
    if policy.backend_refusal("local", spec) is not None:
        raise ModelError(
            f"No model {name!r}: {why}. To use it, {fix}; this site's policy allows no embedded model."
        )
    if fallback and problem is None:
        instead = f"{why}; the embedded model {_embedded_title()} answers instead of {name}."
        return ModelChoice(_local(None, options), instead[:1].upper() + instead[1:], short)
    if problem is None:
        local = f"or use the embedded model {_embedded_title()} with `-m local`"
    else:
        local = f"or use the embedded model with `-m local` once it can run ({_lowered(problem[1])})"
    raise ModelError(f"No model {name!r}: {why}. To use it, {fix}; {local}.")


def requested_name(spec: str) -> str:
    """The model a spec asks for by name: ``"auto"`` is `DEFAULT_MODEL`, ``"auto:NAME"`` is NAME, anything else itself.

    Cassettes key a request by it, so "auto" and the model it stands for replay the same recordings.
    """
    kind, colon, rest = spec.strip().partition(":")
    if kind.lower() != AUTO:
        return spec
    return rest if colon and rest else DEFAULT_MODEL


def ollama_host() -> str:
    """Where the Ollama server is looked for: ``$OLLAMA_HOST``, else the site policy's
    ``[defaults] ollama_host``, else ``http://127.0.0.1:11434``."""
    if os.environ.get("OLLAMA_HOST"):
        return os.environ["OLLAMA_HOST"]
    policy = current_policy()
    return policy.ollama_host.value if policy.ollama_host is not None else _DEFAULT_HOST


def _ollama_state(host: str, name: str) -> tuple[str, Any]:
    """ "down" (no Ollama answers), "has" / "lacks" (its ``/api/show`` of ``name``), or "unknown";
    and the ``/api/show`` answer when it has the model (None when it is not JSON)."""
    if not ollama_answers(host):
        return "down", None
    import httpx

    try:
        response = httpx.post(_base_url(host) + "/api/show", json={"model": name}, timeout=_SHOW_TIMEOUT)
    except httpx.HTTPError:
        return "unknown", None
    state = {200: "has", 404: "lacks"}.get(response.status_code, "unknown")
    try:
        return state, response.json() if state == "has" else None
    except ValueError:
        return state, None


def _embedded_title() -> str:
    """The embedded model as a person reads its name: the default's title, or ``$MEOWGENT_GGUF``'s file name."""
    chosen = gguf.configured_path()
    return chosen.name if chosen is not None else gguf.DEFAULT_MODEL_TITLE


def _lowered(message: str) -> str:
    """A whole-sentence message as a clause: "The x." -> "the x" (a name in capitals, like MEOWGENT_GGUF, stays)."""
    return (message[:1].lower() + message[1:] if message[:2].istitle() else message).rstrip(".")


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


def local_model_problem(
    path: str | Path | None = None, model: gguf.EmbeddedModel = gguf.DEFAULT_EMBEDDED
) -> str | None:
    """Why the local model could not run, as an error message; None when it can.

    Looks without loading anything: the GGUF (``path``, else ``$MEOWGENT_GGUF``, else the
    default model's part packages) must be there, and llama-cpp-python importable.

    Args:
        path: An explicit GGUF file.
        model: The embedded model whose parts are looked for; one other than the default
            ignores ``path`` and ``$MEOWGENT_GGUF`` (``local:1.5b`` names it).
    """
    problem = _local_problem(path, model)
    return None if problem is None else problem[1]


def _local_problem(
    path: str | Path | None = None, model: gguf.EmbeddedModel = gguf.DEFAULT_EMBEDDED
) -> tuple[str, str] | None:
    """The reason in a few words, and the full message; None when the local model can run."""
    # A chosen file is checked first, so its error does not depend on what else is installed.
    chosen = gguf.configured_path(path) if model is gguf.DEFAULT_EMBEDDED else None
    if chosen is not None and not chosen.is_file():
        from_env = path is None
        return (
            gguf.missing_file_reason(chosen, from_env=from_env),
            gguf.missing_file_message(chosen, from_env=from_env),
        )
    # find_spec looks for llama-cpp-python without importing it (a second or more).
    if importlib.util.find_spec("llama_cpp") is None:
        from .llamacpp import NEEDS_LLAMA_CPP

        # The model's own extra installs llama-cpp-python with its parts.
        return "llama-cpp-python is not installed", NEEDS_LLAMA_CPP.replace(gguf.INSTALL_LOCAL, model.install)
    missing = gguf.missing_packages(model.packages) if chosen is None else []
    if missing:
        verb = "are" if len(missing) > 1 else "is"
        return f"{', '.join(missing)} {verb} not installed", gguf.missing_parts_message(missing, model)
    return None


def _ollama(name: str, options: Mapping[str, Any] | None) -> Model:
    from .ollama import OllamaModel

    if not name:
        raise ModelError('"ollama:" needs a model name after the colon, e.g. "ollama:qwen2.5:0.5b".')
    return OllamaModel(name, host=ollama_host(), options=options)


def _openai(name: str, options: Mapping[str, Any] | None, base_url: str | None, policy: Policy) -> Model:
    from .openai import OpenAIModel  # the openai client itself is imported by the first request

    if not name:
        raise ModelError(
            '"openai:" needs the model\'s name on the server after the colon, e.g.'
            ' "openai:Qwen/Qwen2.5-7B-Instruct"; the server is $OPENAI_BASE_URL.'
        )
    # %%agent always sends num_ctx; on these servers the context is fixed when the server starts.
    options = {key: value for key, value in (options or {}).items() if key != "num_ctx"}
    key = None
    if not base_url and not os.environ.get("OPENAI_BASE_URL") and policy.server_url is not None:
        base_url = policy.server_url.value
        secret = policy.server_key()  # the policy's key goes to the policy's server only
        key = secret.reveal() if secret is not None else None
    return OpenAIModel(name, base_url=base_url or None, api_key=key, options=options)


def _embedded(model: gguf.EmbeddedModel, options: Mapping[str, Any] | None) -> Model:
    """A `LlamaCppModel` of an embedded model other than the default, its file assembled (once) now."""
    problem = local_model_problem(model=model)
    if problem:
        raise ModelError(problem)
    return _local(str(gguf.model_path(model)), options, name=f"local:{model.short}")


def _local(path: str | None, options: Mapping[str, Any] | None, name: str | None = None) -> Model:
    from .llamacpp import LlamaCppModel

    options = {key: value for key, value in (options or {}).items() if value is not None}
    unknown = sorted(key for key in options if key not in _LOCAL_SETTINGS)
    if unknown:
        raise ModelError(
            f"The local model has no option {', '.join(unknown)}; it reads {', '.join(_LOCAL_SETTINGS)}."
        )
    settings = {_LOCAL_SETTINGS[key]: value for key, value in options.items()}
    if _shared_local():
        from .shared_local import SharedLocalModel

        return SharedLocalModel(path or None, name=name, **settings)
    return LlamaCppModel(path or None, name=name, **settings)


def _shared_local() -> bool:
    """Whether the embedded model is the machine's one shared process (`SharedLocalModel`): the
    site policy's ``[local] shared``, else ``$MEOWGENT_LOCAL_SHARED``. A policy that says so
    wins over the variable either way: the teacher chose it for the machine's memory."""
    from .shared_local import shared_requested

    policy = current_policy()
    if policy.shared_local is not None:
        return policy.shared_local.value
    return shared_requested()


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
