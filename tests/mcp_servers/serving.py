"""Start one of these test servers over streamable HTTP, for as long as a test needs it."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def http_server(script: str, log_dir: Path, *extra: str) -> Iterator[str]:
    """``python script http PORT [EXTRA...]`` on a free port of 127.0.0.1; yields its URL, stops it after."""
    port = free_port()
    with open(log_dir / f"server-{port}.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, script, "http", str(port), *extra], stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 60  # a loaded machine starts Python and the SDK slowly
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    assert process.poll() is None, f"the HTTP server {Path(script).name} exited"
                    assert time.monotonic() < deadline, (
                        f"the HTTP server {Path(script).name} did not listen in 60 s"
                    )
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(10)
