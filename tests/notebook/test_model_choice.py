"""Which model a ``%%agent`` cell uses, and ``%agent models``, through a real IPython shell.

Ollama is a real local HTTP server speaking its wire format (tests/support/ollama_wire.py), or a port
where nothing listens. The embedded model is a GGUF path that exists (MEOWGENT_GGUF) and is
never loaded: resolving a model only builds it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb.models import LlamaCppModel, ModelError, OllamaModel
from tests.support.embedded_parts import install_parts
from tests.support.ollama_wire import not_found, show

needs_llama_cpp = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
)


def magics(shell):
    return shell.magics_manager.registry["AgentMagics"]


@pytest.fixture(autouse=True)
def _no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEOWGENT_MODEL", "MEOWGENT_CASSETTE", "MEOWGENT_CASSETTE_MODE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_ollama(monkeypatch: pytest.MonkeyPatch) -> str:
    with socket.socket() as probe:  # free a moment ago, so nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def gguf_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    existing = tmp_path / "embedded.gguf"
    existing.write_bytes(b"GGUF")
    monkeypatch.setenv("MEOWGENT_GGUF", str(existing))
    return existing


def serve_ollama(httpserver, *names: str) -> str:
    """The test server as an Ollama that has ``names``: /api/version, /api/show, /api/tags."""
    from werkzeug.wrappers import Response

    def show_model(request):
        name = request.get_json()["model"]
        body, status = (show("completion"), 200) if name in names else (not_found(name), 404)
        return Response(json.dumps(body), status=status, content_type="application/json")

    tags = [
        {
            "name": n,
            "model": n,
            "modified_at": "2025-05-01T10:00:00Z",
            "size": 1,
            "digest": "d",
            "details": {},
        }
        for n in names
    ]
    httpserver.expect_request("/api/version", method="GET").respond_with_json({"version": "0.12.6"})
    httpserver.expect_request("/api/show", method="POST").respond_with_handler(show_model)
    httpserver.expect_request("/api/tags", method="GET").respond_with_json({"models": tags})
    return f"http://{httpserver.host}:{httpserver.port}"


def cell_model(ip, line: str = ""):
    """What a cell with this %%agent line resolves to (the cell's own path: make_agent), and what it printed."""
    args = magics(ip).agent.parser.parse_args(line.split())
    with capture_output() as out:
        agent = magics(ip).make_agent(args)
    return agent.model, out.stdout


# --- a name is never replaced ----------------------------------------------------------------------


@needs_llama_cpp
def test_a_wrong_name_without_ollama_is_one_error_and_nothing_is_lost(ip, no_ollama, gguf_file):
    magics(ip).messages[:] = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "-m ollama-model-that-does-not-exist", "What is 2 + 2?")
    assert str(caught.value) == (
        f"%%agent: No model 'ollama-model-that-does-not-exist': Ollama is not running at {no_ollama}. To use"
        " it, start it (`ollama serve`, then `ollama pull ollama-model-that-does-not-exist`); or use the"
        " embedded model embedded.gguf with `-m local`."
    )
    assert magics(ip).messages == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
    ]


@needs_llama_cpp
def test_a_name_the_running_ollama_lacks_says_ollama_pull(ip, httpserver, monkeypatch, gguf_file):
    host = serve_ollama(httpserver, "qwen3:0.6b")
    monkeypatch.setenv("OLLAMA_HOST", host)
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "-m llama3.2", "Hi")
    assert str(caught.value) == (
        f"%%agent: No model 'llama3.2': the Ollama server at {host} has no model 'llama3.2'. To use it, pull"
        " it (`ollama pull llama3.2`; `%agent models` lists the models it has); or use the embedded model"
        " embedded.gguf with `-m local`."
    )
    model, printed = cell_model(ip, "-m qwen3:0.6b")
    assert (type(model), model.name, printed) == (OllamaModel, "qwen3:0.6b", "")


@needs_llama_cpp
def test_a_model_named_by_meowgent_model_is_not_replaced_either(ip, no_ollama, gguf_file, monkeypatch):
    monkeypatch.setenv("MEOWGENT_MODEL", "qwen2.5:0.5b")
    ip.run_line_magic("unload_ext", "meowgent_nb")
    ip.run_line_magic("load_ext", "meowgent_nb")  # the trait's default is read when the magics are made
    with pytest.raises(UsageError) as caught:
        cell_model(ip)
    assert str(caught.value).startswith(
        f"%%agent: No model 'qwen2.5:0.5b': Ollama is not running at {no_ollama}."
    )


# --- the person's choice: "auto", the default --------------------------------------------------------


EXPLICIT = (
    'To choose the model yourself (and not be told this again): `%%agent -m local`, `%config AgentMagics.model = "local"`'
    ' or MEOWGENT_MODEL=local; later cells say "{short}" in their model line.\n'
)


def model_lines(out) -> list[str]:
    """The model line of each transcript the cell displayed, as its text (``model: ...``)."""
    lines = []
    for shown in out.outputs:
        found = re.search(r'<span class="meowgent-model">(.*?)</span>', shown.data.get("text/html", ""))
        if found:
            lines.append(found.group(1))
    return lines


@needs_llama_cpp
@pytest.mark.parametrize("line", ["", "-m auto"])
def test_the_default_and_auto_say_once_in_words_that_the_embedded_model_answers(
    ip, no_ollama, gguf_file, line
):
    assert magics(ip).model == "auto"
    note = f"Ollama is not running at {no_ollama}; the embedded model embedded.gguf answers instead of qwen2.5:0.5b.\n"
    model, printed = cell_model(ip, line)
    assert (type(model), model.path, printed) == (
        LlamaCppModel,
        gguf_file,
        note + EXPLICIT.format(short="Ollama not running"),
    )
    again, printed = cell_model(ip, line)  # said once per kernel; the model is kept (loaded once)
    assert (again, printed, magics(ip).session.model_note) == (model, "", "Ollama not running")


@needs_llama_cpp
def test_later_cells_say_it_in_their_model_line_and_a_chosen_model_says_nothing(ip, no_ollama, gguf_file):
    """Each cell fails loading the file (it is not a model), after its transcript named the model."""
    said = []
    for line in ("", "", "-m local"):
        with capture_output() as out, pytest.raises(ModelError):
            ip.run_cell_magic("agent", line, "Hi")
        said.append((out.stdout.split("\n", 1)[0][:20], sorted(set(model_lines(out)))))
    assert said == [
        ("Ollama is not runnin", ["embedded.gguf (embedded, llama.cpp), Ollama not running"]),
        ("", ["embedded.gguf (embedded, llama.cpp), Ollama not running"]),
        ("", ["embedded.gguf (embedded, llama.cpp)"]),
    ]


@needs_llama_cpp
def test_once_ollama_serves_the_model_the_next_cell_uses_it(
    ip, no_ollama, gguf_file, httpserver, monkeypatch
):
    embedded, printed = cell_model(ip)
    assert isinstance(embedded, LlamaCppModel) and printed
    monkeypatch.setenv("OLLAMA_HOST", serve_ollama(httpserver))  # started, but without the model
    same, printed = cell_model(ip)
    assert same is embedded
    assert printed == (  # a new reason is said in full
        f"The Ollama server at http://{httpserver.host}:{httpserver.port} has no model 'qwen2.5:0.5b'; the"
        " embedded model embedded.gguf answers instead of qwen2.5:0.5b.\n"
        + EXPLICIT.format(short="Ollama has no qwen2.5:0.5b")
    )
    httpserver.clear()
    serve_ollama(httpserver, "qwen2.5:0.5b")  # and pulled
    model, printed = cell_model(ip)
    assert (type(model), model.name, printed, magics(ip).session.model_note) == (
        OllamaModel,
        "qwen2.5:0.5b",
        "",
        None,
    )


# --- %agent models -----------------------------------------------------------------------------------

BIGGER_ABSENT = (
    "Embedded, bigger (-m local:1.5b):\n"
    '  Qwen2.5-Coder-1.5B-Instruct (llama.cpp): not installed (pip install "meowgent-nb[local-1.5b]")\n'
    "  Pick it when right calls matter more than seconds: about 2.3x slower a case here, 1.5 GB of"
    " memory against 0.8 GB; it writes calls with the decide protocol, as the 0.5B does (docs/benchmarks.md).\n"
)


@pytest.fixture
def bigger_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The optional 1.5B model's parts are not installed, wherever the suite runs."""
    install_parts(tmp_path, monkeypatch, b"GGUF", installed=False)


@needs_llama_cpp
def test_agent_models_without_ollama_lists_the_embedded_model_and_says_where_ollama_is_not(
    ip, no_ollama, gguf_file, bigger_absent
):
    with capture_output() as out:
        ip.run_line_magic("agent", "models")
    assert out.stdout == (
        f"Ollama at {no_ollama}: not running (start it with `ollama serve`, then `ollama pull qwen2.5:0.5b`).\n"
        "Embedded (-m local):\n"
        f"  embedded.gguf (llama.cpp): ready ({gguf_file}, from $MEOWGENT_GGUF)\n" + BIGGER_ABSENT
    )


def test_agent_models_says_what_the_embedded_model_lacks(
    ip, httpserver, monkeypatch, tmp_path, bigger_absent
):
    monkeypatch.setenv("OLLAMA_HOST", serve_ollama(httpserver, "qwen2.5:0.5b", "llama3.2:1b"))
    monkeypatch.setattr(
        __import__("meowgent_nb").models, "ALLOW_MODEL_REQUESTS", True
    )  # the local test server
    monkeypatch.setenv("MEOWGENT_GGUF", str(tmp_path / "gone.gguf"))
    with capture_output() as out:
        ip.run_line_magic("agent", "models")
    assert out.stdout == (
        f"Ollama at http://{httpserver.host}:{httpserver.port} (-m NAME):\n"
        "  qwen2.5:0.5b\n"
        "  llama3.2:1b\n"
        "Embedded (-m local):\n"
        f"  gone.gguf (llama.cpp): MEOWGENT_GGUF is set to {tmp_path / 'gone.gguf'}, which is not a file: point"
        " it at a GGUF file, or unset it to use the default local model.\n" + BIGGER_ABSENT
    )


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or bool(__import__("meowgent_nb.models.gguf").models.gguf.missing_packages()),
    reason="the default embedded model is not installed",
)
def test_the_readme_quotes_what_the_cell_says(ip, no_ollama, monkeypatch):
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)
    _, printed = cell_model(ip)
    readme = " ".join((Path(__file__).parents[2] / "docs" / "guides" / "models.md").read_text().split())
    said, how = printed.strip().replace(no_ollama, "http://127.0.0.1:11434").split("\n")
    assert f'the first cell says so: "{said}" and how to choose: "{how}"' in readme
