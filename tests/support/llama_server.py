"""A llama-cpp-python server on the embedded GGUF, for the tests and the benchmarks that need one.

``python -m llama_cpp.server`` through `meowgent_nb.models.llama_cpu` (which loads the model safely
on AMX CPUs), on 127.0.0.1 with an API key; `llama_server` starts it, waits until it answers
``/v1/models``, and stops it (terminate, then kill) when the block ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from meowgent_nb.models.gguf import gguf_path

NAME = "qwen2.5-coder-0.5b"
"""The model name the server answers to (``--model_alias``)."""
STARTUP_SECONDS = 120
"""How long the server may take to answer ``/v1/models`` (it loads the model first)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def llama_server(
    *settings: str,
    key: str,
    port: int | None = None,
    threads: int = 1,
    log: Path | None = None,
) -> Iterator[str]:
    """A llama-cpp-python server on the embedded GGUF, its base URL (``http://127.0.0.1:PORT/v1``)
    while it runs; stopped after.

    Args:
        *settings: More command-line settings of the server (``"--interrupt_requests", "False"``).
        key: The API key it requires.
        port: Where it listens; None: a free port.
        threads: Its generation threads (``--n_threads``).
        log: A file for its output; None: discarded.

    Raises:
        RuntimeError: It exited, or did not answer within `STARTUP_SECONDS`; with its log's end.
    """
    port = free_port() if port is None else port
    command = [
        sys.executable, "-m", "meowgent_nb.models.llama_cpu",
        "--model", str(gguf_path()), "--model_alias", NAME,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "2048", "--n_threads", str(threads), "--api_key", key, *settings,
    ]  # fmt: skip
    # The server writes to its own copy of the file: this one closes once it has started.
    with log.open("wb") if log is not None else open(os.devnull, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_it_answers(process, base_url, key, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(15)


def _wait_until_it_answers(process: subprocess.Popen, base_url: str, key: str, log: Path | None) -> None:
    def tail() -> str:
        return log.read_text(errors="replace")[-2000:] if log is not None else "(no log kept)"

    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{tail()}")
        try:
            headers = {"Authorization": f"Bearer {key}"}
            if httpx.get(f"{base_url}/models", headers=headers, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer /v1/models within {STARTUP_SECONDS} s:\n{tail()}")
