"""`SharedLocalModel`: the embedded model in one process per machine, shared by its kernels.

One real process serves the module (the default model, ``n_ctx=2048``); its answers are compared
token by token with a `LlamaCppModel` in this process. The tests of starting, stopping, killing
and idling use their own processes and ``count_tokens``, which loads only the vocabulary.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from meowgent_nb import ToolCall, tool
from meowgent_nb.models import LlamaCppModel, ModelChunk, ModelError, ModelRequest, SharedLocalModel, Usage
from meowgent_nb.models._shared_wire import chunk_from_wire, chunk_to_wire
from meowgent_nb.models.base import StreamCut
from meowgent_nb.models.shared_local import shared_requested
from meowgent_nb.protocols.native import NativeCallParser
from tests.models.test_llamacpp_model import real_model

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short socket folder of the person's own (a Unix socket's path has at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="msl-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def shared() -> Iterator[SharedLocalModel]:
    """One shared process for the module, stopped at its end."""
    path = Path(tempfile.mkdtemp(prefix="msl-"))
    model = SharedLocalModel(n_ctx=2048, max_tokens=48, directory=path, idle_seconds=120)
    yield model
    model.stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def in_kernel() -> LlamaCppModel:
    return LlamaCppModel(n_ctx=2048, max_tokens=48)


def collect(model: object, request: ModelRequest) -> list[ModelChunk]:
    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in model.stream(request)]  # type: ignore[attr-defined]

    return asyncio.run(run())


def answer(chunks: list[ModelChunk]) -> list[tuple[str, tuple[ToolCall, ...], str | None]]:
    """What a person gets of an answer: its text, calls and finish reason (not status, not timings)."""
    return [(c.text, c.tool_calls, c.finish_reason) for c in chunks if c.status is None]


def ask(text: str, **options: object) -> ModelRequest:
    return ModelRequest(messages=[SYSTEM, {"role": "user", "content": text}], options=options)


def wait_for(condition, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@real_model
def test_an_answer_through_the_shared_process_is_the_one_the_kernel_s_own_model_gives(shared, in_kernel):
    request = ask("Name three colours, one per line.")
    through = collect(shared, request)
    own = collect(in_kernel, request)
    assert answer(through) == answer(own)
    assert "".join(c.text for c in through) == "Red, Blue, Green"
    assert through[-1].done and through[-1].usage is not None
    assert (through[-1].usage.prompt_tokens, through[-1].usage.completion_tokens) == (
        own[-1].usage.prompt_tokens,  # type: ignore[union-attr]
        own[-1].usage.completion_tokens,  # type: ignore[union-attr]
    )


@real_model
def test_native_calls_are_read_in_the_kernel_and_match_the_kernel_s_own_model(shared):
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
    # The kernel's own model gives exactly these chunks for this request (the same model settings):
    # tests/models/test_llamacpp_model.py::test_native_tools_come_back_as_tool_calls.
    through = collect(shared, request)
    assert answer(through) == [("", (ToolCall("get_weather", {"city": "Paris"}),), None), ("", (), "stop")]


@real_model
def test_the_process_s_errors_come_back_with_the_kernel_model_s_message(shared, in_kernel):
    request = ask("Hi", num_ctx=4096)
    with pytest.raises(ModelError) as own:
        collect(in_kernel, request)
    with pytest.raises(ModelError) as through:
        collect(shared, request)
    assert (
        str(through.value)
        == str(own.value)
        == (
            "local:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf does not understand the option(s) num_ctx;"
            " it reads temperature, seed, num_predict, max_tokens, top_k, top_p, min_p, repeat_penalty."
            " Set the context size with LlamaCppModel(n_ctx=...)."
        )
    )


@real_model
def test_two_clients_at_once_are_both_served_and_the_second_is_told_it_waits(shared):
    request = ask("Count from 1 to 10, separated by commas.", num_predict=20)
    results: dict[str, list[ModelChunk]] = {}
    first_is_answered = threading.Event()

    def client(name: str) -> None:
        async def run() -> None:
            results[name] = []
            async for chunk in shared.stream(request):
                results[name].append(chunk)
                if chunk.text:
                    first_is_answered.set()

        asyncio.run(run())

    first = threading.Thread(target=client, args=("first",))
    first.start()
    assert first_is_answered.wait(20)
    second = threading.Thread(target=client, args=("second",))
    second.start()
    first.join(20)
    second.join(20)
    assert results["second"][0] == ModelChunk(status="waiting for the shared model: 1 ahead")
    assert all(chunk.status is None for chunk in results["first"])  # loaded by the tests before
    assert answer(results["second"]) == answer(results["first"])
    assert "".join(c.text for c in results["first"]).startswith("1, 2, 3, 4, 5")


@real_model
def test_a_client_that_stops_reading_frees_the_process_for_the_next(shared, in_kernel):
    async def first_token_then_stop() -> str:
        stream = shared.stream(ask("Write a long poem about the sea.", num_predict=400))
        async for chunk in stream:
            if chunk.text:
                await stream.aclose()  # type: ignore[attr-defined]
                return chunk.text
        return ""

    assert asyncio.run(first_token_then_stop())
    # Its connection closed, the process drops its request: only this status request is left.
    assert wait_for(lambda: (shared.status() or {}).get("connected") == 1)
    request = ask("Say OK.", num_predict=3)
    after = collect(shared, request)
    assert [c for c in after if c.status is not None] == []  # nobody ahead: the poem was dropped
    assert answer(after) == answer(collect(in_kernel, request))


@real_model
def test_an_idle_process_stops_and_the_next_request_starts_one(folder):
    model = SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=1)
    assert model.count_tokens("Hello, world") == 3  # starts the process: the vocabulary only
    pid = model.status()["pid"]  # type: ignore[index]
    assert wait_for(lambda: model.status() is None)
    assert not model.socket_path.exists()
    assert model.count_tokens("Hello, world") == 3
    assert model.status()["pid"] != pid  # type: ignore[index]
    model.stop()


@real_model
def test_a_killed_process_is_replaced_on_the_next_request(folder):
    model = SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=60)
    assert model.count_tokens("Hello") == 1
    pid = model.status()["pid"]  # type: ignore[index]
    os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: model.status() is None)
    assert model.socket_path.exists()  # a dead process leaves its socket
    assert model.count_tokens("Hello") == 1
    assert model.status()["pid"] != pid  # type: ignore[index]
    model.stop()


def test_six_kernels_starting_at_once_start_one_process(folder):
    """Six starters race for the lock (threads, each with its own model object, as six kernels)."""
    models = [SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=30) for _ in range(6)]
    barrier = threading.Barrier(6)

    def start(model: SharedLocalModel) -> None:
        barrier.wait()
        model._start()

    threads = [threading.Thread(target=start, args=(m,)) for m in models]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    pids = {m.status()["pid"] for m in models}  # type: ignore[index]
    assert len(pids) == 1
    listing = subprocess.run(
        ["pgrep", "-f", f"shared_local serve --directory {folder}"], capture_output=True, text=True
    )
    assert listing.stdout.split() == [str(pid) for pid in pids]
    models[0].stop()


def test_a_socket_folder_others_can_reach_is_refused(folder):
    folder.chmod(0o755)
    model = SharedLocalModel(directory=folder)
    with pytest.raises(ModelError) as refused:
        collect(model, ask("Hi"))
    assert str(refused.value) == (
        f"Refusing the shared model's socket folder {folder}: it has mode 0755: others than you can"
        " reach it (it must be 0700). Only the users allowed to share the model may reach it; fix its"
        " owner and mode, or choose another folder ($MEOWGENT_SHARED_DIR), or unset it to use your own."
    )
    assert list(folder.iterdir()) == []  # nothing started, nothing written


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user takes root")
def test_a_socket_folder_of_another_user_is_refused(folder):
    folder.chmod(0o700)
    os.chown(folder, 65534, -1)
    with pytest.raises(ModelError, match=r"it belongs to uid 65534, not to you \(uid 0\)\. Only"):
        SharedLocalModel(directory=folder).status()


def test_a_class_s_folder_must_belong_to_its_group_and_keep_others_out(folder, monkeypatch):
    group = __import__("grp").getgrgid(os.getgid()).gr_name
    monkeypatch.setenv("MEOWGENT_SHARED_DIR", str(folder))
    monkeypatch.setenv("MEOWGENT_SHARED_GROUP", group)
    folder.chmod(0o2775)
    with pytest.raises(ModelError, match=f"it has mode 2775: users outside the group {group} can reach it"):
        SharedLocalModel().status()
    folder.chmod(0o2770)
    model = SharedLocalModel(n_ctx=256, idle_seconds=30)
    assert model.status() is None  # accepted: no process runs there yet
    model._start()
    modes = {path.suffix: path.stat().st_mode & 0o777 for path in folder.iterdir()}
    model.stop()
    assert modes == {".sock": 0o660, ".lock": 0o660, ".log": 0o660}  # the group's, no one else's


def test_an_unknown_group_is_refused_when_the_model_is_made():
    with pytest.raises(ValueError, match=r"group='no-such-class'\): there is no such group on this machine"):
        SharedLocalModel(group="no-such-class")


def test_a_process_of_another_protocol_version_is_told_to_be_restarted(folder):
    model = SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=30)
    model._start()
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(str(model.socket_path))
        client.sendall(b'{"v": 99, "op": "status"}\n')
        reply = json.loads(client.makefile("rb").readline())
    model.stop()
    assert reply == {
        "error": "The shared model process speaks protocol v1, the request v99: stop it (python -m"
        " meowgent_nb.models.shared_local stop) and let the next request start a current one."
    }


def test_the_command_line_shows_and_stops_the_process(folder):
    command = [sys.executable, "-m", "meowgent_nb.models.shared_local"]
    where = ["--directory", str(folder), "--n-ctx", "256"]
    none = subprocess.run([*command, "status", *where], capture_output=True, text=True)
    model = SharedLocalModel(n_ctx=256, directory=folder)
    assert (none.returncode, none.stdout) == (1, f"No shared model process at {model.socket_path}.\n")
    model._start()
    status = json.loads(subprocess.run([*command, "status", *where], capture_output=True, text=True).stdout)
    assert {k: status[k] for k in ("model", "n_ctx", "waiting", "connected")} == {
        "model": "local:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "n_ctx": 256,
        "waiting": 0,
        "connected": 1,
    }
    stop = subprocess.run([*command, "stop", *where], capture_output=True, text=True)
    assert stop.stdout == "Stopped.\n"
    assert wait_for(lambda: not model.socket_path.exists())


def test_chunks_cross_the_wire_unchanged():
    chunk = ModelChunk(
        text="a",
        thinking="b",
        tool_calls=(ToolCall("get_weather", {"city": "Paris"}, id=""),),
        done=True,
        usage=Usage(prompt_tokens=3, completion_tokens=2, prompt_seconds=0.5),
        finish_reason="stop",
    )
    assert chunk_from_wire(json.loads(json.dumps(chunk_to_wire(chunk)))) == chunk
    waiting = ModelChunk(status="waiting for the shared model: 2 ahead")
    assert chunk_to_wire(waiting) == {"status": "waiting for the shared model: 2 ahead"}
    assert chunk_from_wire(chunk_to_wire(waiting)) == waiting


def test_a_decide_request_crosses_the_wire_with_its_second_look():
    from meowgent_nb import tool
    from meowgent_nb.models._local_server import request_from_wire
    from meowgent_nb.models._shared_wire import request_to_wire
    from meowgent_nb.protocols import get_protocol

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    parts = get_protocol("decide").request([get_weather], last=False)
    request = ModelRequest(
        messages=[SYSTEM, {"role": "user", "content": "hi"}],
        options={"temperature": 0},
        call_format=parts.call_format,
        call_tag=parts.call_tag,
        call_grounding=parts.call_grounding,
    )
    wire = json.loads(json.dumps(request_to_wire(request)))
    assert (wire["call_tag"], wire["call_grounding"]) == ("<tool_call>", True)
    assert replace(request_from_wire(wire), tools=()) == request  # no native tools: []
    assert (
        request_from_wire({**wire, "call_grounding": None}).call_grounding is False
    )  # an older kernel's line


@pytest.mark.parametrize(("value", "shared"), [("", False), ("0", False), ("1", True), ("yes", True)])
def test_the_environment_switch_asks_for_the_shared_process(monkeypatch, value, shared):
    monkeypatch.setenv("MEOWGENT_LOCAL_SHARED", value)
    assert shared_requested() is shared


def test_an_environment_switch_that_is_not_one_is_refused(monkeypatch):
    monkeypatch.setenv("MEOWGENT_LOCAL_SHARED", "please")
    with pytest.raises(ValueError) as refused:
        shared_requested()
    assert str(refused.value) == (
        "$MEOWGENT_LOCAL_SHARED='please' is not a switch: set it to 1 to share one embedded model"
        " process between this machine's kernels, or 0 (or unset it) for a model in each kernel."
    )


@real_model
def test_a_process_that_ends_before_answering_is_replaced_and_asked_again(folder, in_kernel):
    """A process stopping (idle) just as a request reaches it: a new one answers, nothing is lost."""
    model = SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=30)
    stopping = socket.socket(socket.AF_UNIX)
    stopping.bind(str(model.socket_path))
    stopping.listen()

    def take_the_request_and_go() -> None:
        connection, _ = stopping.accept()
        connection.makefile("rb").readline()
        stopping.close()
        model.socket_path.unlink()
        connection.close()

    going = threading.Thread(target=take_the_request_and_go)
    going.start()
    request = ask("Say hi.", num_predict=4)
    chunks = collect(model, request)
    going.join(5)
    model.stop()
    assert answer(chunks) == answer(collect(in_kernel, request))


@real_model
def test_a_kernel_using_the_shared_model_loads_no_llama_cpp(shared):
    code = (
        "import asyncio, sys\n"
        "from meowgent_nb.models import ModelRequest, SharedLocalModel\n"
        f"model = SharedLocalModel(n_ctx=2048, max_tokens=48, directory={str(shared.directory)!r})\n"
        "request = ModelRequest(messages=[{'role': 'user', 'content': 'Say OK.'}], options={'num_predict': 2})\n"
        "async def ask():\n"
        "    return ''.join([c.text async for c in model.stream(request)])\n"
        "print(repr(asyncio.run(ask())), sorted(m for m in sys.modules if m.startswith('llama_cpp')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "'OK' []\n"


@real_model
def test_a_process_killed_during_an_answer_is_a_cut_stream_naming_its_log(folder):
    model = SharedLocalModel(n_ctx=256, directory=folder, idle_seconds=30)

    async def kill_after_the_first_word() -> None:
        async for chunk in model.stream(ask("Write a long poem about the sea.", num_predict=200)):
            if chunk.text:
                os.kill(model.status()["pid"], signal.SIGKILL)  # type: ignore[index]

    with pytest.raises(StreamCut) as cut:
        asyncio.run(kill_after_the_first_word())
    assert str(cut.value) == (
        f"The shared model process ({model.socket_path}) ended during the answer: it was stopped or"
        f" failed (its log: {folder / model.socket_path.stem}.log). Ask again: the next request starts a new one."
    )
