"""`resolve_model`: model names to models, with a real local HTTP server standing in for Ollama.

Nothing here loads a model: resolving only builds one. These tests run with or without
llama-cpp-python; the few whose outcome depends on it say so in a skip condition.
"""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent_nb import ScriptedModel
from meowgent_nb.models import LlamaCppModel, ModelError, OllamaModel, OpenAIModel
from meowgent_nb.models.gguf import GGUF_NAME, missing_packages
from meowgent_nb.models.resolve import DEFAULT_MODEL, choose_model, local_model_problem, resolve_model
from tests.support.ollama_wire import not_found, show

HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
HAVE_PARTS = not missing_packages()
INSTALL = 'pip install "meowgent-nb[local]"'
needs_llama_cpp = pytest.mark.skipif(not HAVE_LLAMA_CPP, reason="llama-cpp-python is not installed")
without_llama_cpp = pytest.mark.skipif(HAVE_LLAMA_CPP, reason="llama-cpp-python is installed")


@pytest.fixture
def ollama(httpserver, monkeypatch: pytest.MonkeyPatch) -> str:
    """A local server answering /api/version as Ollama does, and having every model; OLLAMA_HOST points at it."""
    httpserver.expect_request("/api/version", method="GET").respond_with_json({"version": "0.12.6"})
    httpserver.expect_request("/api/show", method="POST").respond_with_json(show("completion", "tools"))
    host = f"http://{httpserver.host}:{httpserver.port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host


@pytest.fixture
def no_ollama(monkeypatch: pytest.MonkeyPatch) -> str:
    """OLLAMA_HOST at a port where nothing listens."""
    with socket.socket() as probe:  # free a moment ago, so nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    host = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host


@pytest.fixture
def no_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEOWGENT_GGUF at a file that does not exist, so the local model cannot run anywhere."""
    missing = tmp_path / "missing.gguf"
    monkeypatch.setenv("MEOWGENT_GGUF", str(missing))
    return missing


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    # A MEOWGENT_GGUF from the developer's shell would change what "local" means.
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


# --- explicit prefixes --------------------------------------------------------------------------


def test_ollama_prefix_makes_an_ollama_model_without_contacting_it(no_ollama):
    model = resolve_model("ollama:qwen3:0.6b", options={"temperature": 0.0})
    assert isinstance(model, OllamaModel)
    assert (model.name, model.host, model.options) == ("qwen3:0.6b", no_ollama, {"temperature": 0.0})


def test_ollama_prefix_needs_a_name():
    with pytest.raises(ModelError) as caught:
        resolve_model("ollama:")
    assert str(caught.value) == '"ollama:" needs a model name after the colon, e.g. "ollama:qwen2.5:0.5b".'


def test_openai_prefix_makes_a_model_on_openai_base_url_without_contacting_it(no_ollama, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # num_ctx (which %%agent always sends) is left out: a server's context is fixed when it starts.
    model = resolve_model("openai:Qwen/Qwen2.5-7B-Instruct", options={"temperature": 0.0, "num_ctx": 4096})
    assert isinstance(model, OpenAIModel)
    assert (model.name, model.base_url, model.options) == (
        "Qwen/Qwen2.5-7B-Instruct",
        "http://127.0.0.1:9/v1",
        {"temperature": 0.0},
    )
    assert "sk-test" not in repr(model) + model.description


def test_openai_prefix_needs_a_name_and_refuses_options_the_api_lacks():
    with pytest.raises(ModelError) as caught:
        resolve_model("openai:")
    assert str(caught.value) == (
        '"openai:" needs the model\'s name on the server after the colon, e.g.'
        ' "openai:Qwen/Qwen2.5-7B-Instruct"; the server is $OPENAI_BASE_URL.'
    )
    with pytest.raises(ModelError) as caught:
        resolve_model("openai:m", options={"num_thread": 4, "top_k": 3})
    assert str(caught.value) == (
        "OpenAIModel('m') does not understand the option(s) num_thread, top_k; it reads temperature,"
        " seed, num_predict, max_tokens, top_p, stop. The context size is set where the server is started."
    )


def test_local_path_that_does_not_exist_is_named(tmp_path: Path):
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ModelError) as caught:
        resolve_model(f"local:{missing}")
    assert (
        str(caught.value) == f"The local model file {missing} does not exist: check the path (a .gguf file)."
    )


def test_local_prefix_needs_a_path():
    with pytest.raises(ModelError) as caught:
        resolve_model("local:")
    assert (
        str(caught.value)
        == '"local:" needs a GGUF file after the colon, or use "local" for the default model.'
    )


def test_local_with_meowgent_gguf_missing_says_so(no_local_model: Path):
    with pytest.raises(ModelError) as caught:
        resolve_model("local")
    assert str(caught.value) == (
        f"MEOWGENT_GGUF is set to {no_local_model}, which is not a file: point it at a GGUF file,"
        " or unset it to use the default local model."
    )


@without_llama_cpp
def test_local_without_llama_cpp_says_how_to_install_it(tmp_path: Path):
    existing = tmp_path / "model.gguf"
    existing.write_bytes(b"GGUF")
    for spec in ("local", f"local:{existing}"):
        with pytest.raises(ModelError) as caught:
            resolve_model(spec)
        assert str(caught.value) == f"The local model needs llama-cpp-python: {INSTALL}"


@needs_llama_cpp
def test_local_path_makes_a_local_model_without_loading_it(tmp_path: Path):
    existing = tmp_path / "tiny.gguf"
    existing.write_bytes(b"not loaded until the first request")
    model = resolve_model(f"local:{existing}", options={"temperature": 0.3, "num_ctx": 2048, "seed": None})
    assert isinstance(model, LlamaCppModel)
    assert (model.name, model.path, model.n_ctx, model.sampling.temperature) == (
        "local:tiny.gguf",
        existing,
        2048,
        0.3,
    )


@needs_llama_cpp
def test_local_options_without_a_local_meaning_are_refused(tmp_path: Path):
    existing = tmp_path / "tiny.gguf"
    existing.write_bytes(b"GGUF")
    with pytest.raises(ModelError) as caught:
        resolve_model(f"local:{existing}", options={"num_gpu": 1, "temperature": 0.1, "mirostat": 2})
    assert str(caught.value) == (
        "The local model has no option mirostat, num_gpu; it reads temperature, seed, num_ctx,"
        " num_predict, num_thread."
    )


@pytest.mark.skipif(not (HAVE_LLAMA_CPP and HAVE_PARTS), reason="the local model is not installed")
def test_local_means_the_default_model():
    model = resolve_model("local")
    assert isinstance(model, LlamaCppModel)
    assert (model.name, model.path) == (f"local:{GGUF_NAME}", None)
    assert local_model_problem() is None


# --- bare names ---------------------------------------------------------------------------------


def test_a_bare_name_is_ollama_when_its_server_answers(ollama):
    model = resolve_model("llama3.2:1b")
    assert isinstance(model, OllamaModel)
    assert (model.name, model.host) == ("llama3.2:1b", ollama)


def test_ollama_host_without_a_scheme_is_probed_like_the_client_reads_it(httpserver, ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"{httpserver.host}:{httpserver.port}")
    assert isinstance(resolve_model("qwen3:0.6b"), OllamaModel)
    assert [(r.method, r.path, r.get_data(as_text=True)) for r, _ in httpserver.log] == [
        ("GET", "/api/version", ""),
        ("POST", "/api/show", '{"model":"qwen3:0.6b"}'),
    ]


def test_none_is_the_default_model(ollama):
    model = resolve_model(None)
    assert isinstance(model, OllamaModel)
    assert model.name == DEFAULT_MODEL == "qwen2.5:0.5b"


def test_a_model_object_passes_through(no_ollama):
    model = ScriptedModel(["Hi"])
    assert resolve_model(model, options={"temperature": 1.0}) is model


def test_no_server_and_no_local_model_names_both_ways(no_ollama, no_local_model):
    with pytest.raises(ModelError) as caught:
        resolve_model("qwen2.5:0.5b")
    assert str(caught.value) == (
        f"No model 'qwen2.5:0.5b': Ollama is not running at {no_ollama}. To use it, start it (`ollama"
        " serve`, then `ollama pull qwen2.5:0.5b`); or use the embedded model with `-m local` once it can"
        f" run (MEOWGENT_GGUF is set to {no_local_model}, which is not a file: point it at a GGUF file, or"
        " unset it to use the default local model)."
    )


def test_a_server_that_is_not_ollama_does_not_count(httpserver, monkeypatch, no_local_model):
    httpserver.expect_request("/api/version").respond_with_data("Not Found", status=404)
    host = f"http://{httpserver.host}:{httpserver.port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    with pytest.raises(ModelError) as caught:
        resolve_model("phi4")
    assert str(caught.value).startswith(f"No model 'phi4': Ollama is not running at {host}. To use it,")


@without_llama_cpp
def test_no_server_and_no_llama_cpp_says_what_is_missing(no_ollama):
    with pytest.raises(ModelError) as caught:
        resolve_model("qwen2.5:0.5b")
    assert str(caught.value) == (
        f"No model 'qwen2.5:0.5b': Ollama is not running at {no_ollama}. To use it, start it (`ollama"
        " serve`, then `ollama pull qwen2.5:0.5b`); or use the embedded model with `-m local` once it can"
        f" run (the local model needs llama-cpp-python: {INSTALL})."
    )


# --- a name is never replaced; "auto" (the default) says when the embedded model answers instead ------


@pytest.fixture
def gguf_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEOWGENT_GGUF at a file that exists (never loaded here): the embedded model can run."""
    existing = tmp_path / "fallback.gguf"
    existing.write_bytes(b"GGUF")
    monkeypatch.setenv("MEOWGENT_GGUF", str(existing))
    return existing


@pytest.fixture
def ollama_without(httpserver, monkeypatch: pytest.MonkeyPatch) -> str:
    """A local server speaking Ollama's wire format that has qwen3:0.6b and no other model."""
    from werkzeug.wrappers import Response

    def show_model(request):
        name = request.get_json()["model"]
        body, status = (show("completion"), 200) if name == "qwen3:0.6b" else (not_found(name), 404)
        return Response(json.dumps(body), status=status, content_type="application/json")

    httpserver.expect_request("/api/version", method="GET").respond_with_json({"version": "0.12.6"})
    httpserver.expect_request("/api/show", method="POST").respond_with_handler(show_model)
    host = f"http://{httpserver.host}:{httpserver.port}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    return host


@needs_llama_cpp
def test_a_bare_name_without_ollama_is_an_error_never_the_embedded_model(no_ollama, gguf_file):
    with pytest.raises(ModelError) as caught:
        resolve_model("ollama-model-that-does-not-exist", options={"temperature": 0.1})
    assert str(caught.value) == (
        f"No model 'ollama-model-that-does-not-exist': Ollama is not running at {no_ollama}. To use it,"
        " start it (`ollama serve`, then `ollama pull ollama-model-that-does-not-exist`); or use the"
        " embedded model fallback.gguf with `-m local`."
    )


@needs_llama_cpp
def test_a_bare_name_the_running_ollama_lacks_is_an_error_saying_ollama_pull(ollama_without, gguf_file):
    with pytest.raises(ModelError) as caught:
        resolve_model("llama3.2:1b")
    assert str(caught.value) == (
        f"No model 'llama3.2:1b': the Ollama server at {ollama_without} has no model 'llama3.2:1b'. To use"
        " it, pull it (`ollama pull llama3.2:1b`; `%agent models` lists the models it has); or use the embedded model fallback.gguf with `-m local`."
    )
    model = resolve_model("qwen3:0.6b")  # one it has
    assert isinstance(model, OllamaModel) and model.name == "qwen3:0.6b"


NAMES = st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,30}(:[a-z0-9._-]{1,12})?", fullmatch=True).filter(
    lambda name: name.partition(":")[0] not in ("ollama", "openai", "local", "auto")
)


@needs_llama_cpp
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES)
def test_no_bare_name_ever_becomes_the_embedded_model(name, no_ollama, gguf_file):
    with pytest.raises(ModelError) as caught:
        choose_model(name)
    assert str(caught.value).startswith(
        f"No model {name!r}: Ollama is not running at {no_ollama}. To use it,"
    )
    assert f"`ollama pull {name}`" in str(caught.value)


@needs_llama_cpp
@pytest.mark.parametrize("spec", [None, "auto"])
def test_auto_falls_back_to_the_embedded_model_and_says_why(spec, no_ollama, gguf_file):
    choice = choose_model(spec, options={"temperature": 0.1, "num_ctx": 4096})
    assert isinstance(choice.model, LlamaCppModel)
    assert (choice.model.name, choice.model.path, choice.model.n_ctx) == (
        "local:fallback.gguf",
        gguf_file,
        4096,
    )
    assert choice.instead == (
        f"Ollama is not running at {no_ollama}; the embedded model fallback.gguf answers instead of qwen2.5:0.5b."
    )


@needs_llama_cpp
def test_auto_falls_back_when_the_running_ollama_lacks_the_model(ollama_without, gguf_file):
    choice = choose_model("auto")
    assert isinstance(choice.model, LlamaCppModel)
    assert choice.instead == (
        f"The Ollama server at {ollama_without} has no model 'qwen2.5:0.5b'; the embedded model"
        " fallback.gguf answers instead of qwen2.5:0.5b."
    )
    named = choose_model("auto:qwen3:0.6b")  # one it has: no fallback, nothing to say
    assert isinstance(named.model, OllamaModel) and (named.model.name, named.instead) == ("qwen3:0.6b", None)


@pytest.mark.skipif(not (HAVE_LLAMA_CPP and HAVE_PARTS), reason="the local model is not installed")
def test_the_fallback_names_the_default_embedded_model(no_ollama):
    assert choose_model("auto:llama3.2").instead == (
        f"Ollama is not running at {no_ollama}; the embedded model Qwen2.5-Coder-0.5B-Instruct answers"
        " instead of llama3.2."
    )


def test_auto_without_ollama_or_local_model_names_both_ways(no_ollama, no_local_model):
    with pytest.raises(ModelError) as caught:
        choose_model(None)
    assert str(caught.value).startswith(
        f"No model 'qwen2.5:0.5b': Ollama is not running at {no_ollama}. To use it, start it"
    )
    with pytest.raises(ModelError) as caught:
        choose_model("auto:")
    assert (
        str(caught.value)
        == '"auto:" needs a model name after the colon, e.g. "auto:qwen2.5:0.5b", or use "auto".'
    )


@pytest.mark.skipif(not (HAVE_LLAMA_CPP and HAVE_PARTS), reason="the local model is not installed")
@pytest.mark.parametrize(
    "spec", ["Qwen2.5-Coder-0.5B-Instruct", "qwen2.5-coder-0.5b-instruct", f"local:{GGUF_NAME}"]
)
def test_the_embedded_models_own_names_are_the_embedded_model(spec, no_ollama):
    choice = choose_model(spec)
    assert isinstance(choice.model, LlamaCppModel)
    assert (choice.model.name, choice.model.path, choice.instead) == (f"local:{GGUF_NAME}", None, None)


@needs_llama_cpp
def test_resolve_model_logs_why_the_embedded_model_answers(no_ollama, gguf_file, caplog):
    with caplog.at_level("WARNING", logger="meowgent_nb"):
        model = resolve_model("auto")
    assert isinstance(model, LlamaCppModel)
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "meowgent_nb",
            "WARNING",
            f"Ollama is not running at {no_ollama}; the embedded model fallback.gguf answers instead of qwen2.5:0.5b.",
        )
    ]


@needs_llama_cpp
@pytest.mark.parametrize("spec", [" auto ", "AUTO", "", "  "])
def test_auto_whatever_its_case_and_spaces_and_no_name_at_all(spec, no_ollama, gguf_file):
    choice = choose_model(spec)
    assert isinstance(choice.model, LlamaCppModel)
    assert choice.instead == (
        f"Ollama is not running at {no_ollama}; the embedded model fallback.gguf answers instead of qwen2.5:0.5b."
    )


@needs_llama_cpp
def test_prefixes_whatever_their_case(no_ollama, gguf_file):
    assert isinstance(choose_model("LOCAL").model, LlamaCppModel)
    assert choose_model("Ollama:Qwen3:0.6B").model.name == "Qwen3:0.6B"  # the name as typed: Ollama reads it
