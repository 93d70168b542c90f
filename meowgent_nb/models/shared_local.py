"""`SharedLocalModel`: the embedded model in one process per machine, shared by its kernels.

Thirty kernels each holding their own `LlamaCppModel` each hold its context (hundreds of MB); with
this model an idle kernel holds none. The first kernel that needs the model starts the process,
detached so that it outlives that kernel (a file lock makes kernels starting at once start one);
the others connect to its Unix socket. The process answers one request at a time, in arrival
order, telling those waiting how many are ahead, and exits once it has answered nothing for its
idle time. A kernel whose process has gone (killed, idle) starts a new one on its next request.

The socket lives in a folder only the allowed users reach: by default the person's own
(``$XDG_RUNTIME_DIR/meowgent``, else ``<tmp>/meowgent-<uid>``, made with mode 0700); for a class
sharing one process, a folder the teacher makes, owned by a group, with no access for others, named
by ``directory=`` / ``$MEOWGENT_SHARED_DIR`` together with ``group=`` / ``$MEOWGENT_SHARED_GROUP``.
A folder that others can reach is refused. The wire is a versioned JSON-lines protocol
(`meowgent_nb.models._shared_wire` documents it).

From a shell: ``python -m meowgent_nb.models.shared_local serve|status|stop`` (``--help``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import grp
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import SettingsError
from . import gguf
from ._llama_text import chunks
from ._shared_wire import VERSION, chunk_from_wire, line, request_to_wire
from .base import ModelChunk, ModelError, ModelRequest, StreamCut, ToolSupport

__all__ = ["SharedLocalModel", "default_directory", "shared_requested"]

ENV_SWITCH = "MEOWGENT_LOCAL_SHARED"
"""``1``: ``resolve_model("local")`` gives a `SharedLocalModel` (the policy can say so too)."""
ENV_DIRECTORY = "MEOWGENT_SHARED_DIR"
ENV_GROUP = "MEOWGENT_SHARED_GROUP"
ENV_IDLE = "MEOWGENT_SHARED_IDLE"

_START_SECONDS = 60.0
"""How long a kernel waits for a process it started to listen (importing llama-cpp-python)."""
_SOCKET_PATH_MAX = 107  # sun_path on Linux, less its terminating NUL


def shared_requested() -> bool:
    """Whether ``$MEOWGENT_LOCAL_SHARED`` asks for the shared process where the embedded model is named.

    Raises:
        SettingsError: The variable is set to something other than 1/0, true/false, yes/no, on/off.
    """
    value = (os.environ.get(ENV_SWITCH) or "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SettingsError(
        f"${ENV_SWITCH}={os.environ[ENV_SWITCH]!r} is not a switch: set it to 1 to share one embedded"
        " model process between this machine's kernels, or 0 (or unset it) for a model in each kernel."
    )


def default_directory() -> Path:
    """The person's own socket folder: ``$XDG_RUNTIME_DIR/meowgent``, else ``<tmp>/meowgent-<uid>``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "meowgent"
    return Path(tempfile.gettempdir()) / f"meowgent-{os.getuid()}"


class SharedLocalModel:
    """The embedded model, answered by one process that the kernels of a machine share.

    Making one is free, and so is an idle one: the process is found or started on the first
    request, loads the model on its first, and exits when idle. Requests are answered one at a
    time; one that waits gets a `ModelChunk.status` saying how many are ahead. The answers are
    those a `LlamaCppModel` with the same settings gives in the kernel.

    Args:
        path: The GGUF file. None: ``$MEOWGENT_GGUF`` (read now), else the default model.
        n_ctx: The context window in tokens: prompt and answer together.
        n_threads: CPU threads of the process; None: half the cores.
        temperature: Sampling temperature; 0 always picks the likeliest token.
        max_tokens: The longest answer, in tokens.
        seed: The sampling seed, set before every request so answers repeat.
        name: What the model is called in listings; default ``"local:" + the file name``.
        directory: The socket folder. None: ``$MEOWGENT_SHARED_DIR``, else `default_directory`
            (made with mode 0700 if missing).
        group: The group whose members share the process (``$MEOWGENT_SHARED_GROUP`` if None):
            ``directory`` must then belong to it and give others no access. Without a group the
            folder must be the person's own with no access for group or others.
        idle_seconds: How long the process waits with nobody connected before it exits;
            None: ``$MEOWGENT_SHARED_IDLE``, else 600.

    Attributes:
        max_concurrency: 1: the process answers one request at a time.

    Raises:
        SettingsError: ``n_ctx``, ``idle_seconds`` or ``group`` is not one it takes.
    """

    max_concurrency = 1
    """The process answers one request at a time: an eval's cases would only queue."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int = 0,
        name: str | None = None,
        directory: str | Path | None = None,
        group: str | None = None,
        idle_seconds: float | None = None,
    ):
        self.path = gguf.configured_path(path)
        self.name = name or "local:" + (self.path.name if self.path is not None else gguf.GGUF_NAME)
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
            raise SettingsError(
                f"SharedLocalModel(n_ctx=...) must be a positive number of tokens, not {n_ctx!r}."
            )
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.options = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        chosen = directory if directory is not None else os.environ.get(ENV_DIRECTORY) or None
        self.directory = Path(chosen).expanduser() if chosen is not None else default_directory()
        self._own_directory = chosen is None
        self.group = group if group is not None else os.environ.get(ENV_GROUP) or None
        if self.group is not None:
            try:
                self._gid: int | None = grp.getgrnam(self.group).gr_gid
            except KeyError:
                raise SettingsError(
                    f"SharedLocalModel(group={self.group!r}): there is no such group on this machine;"
                    " name the group the teacher made for the class (getent group), or none."
                ) from None
        else:
            self._gid = None
        idle = idle_seconds if idle_seconds is not None else float(os.environ.get(ENV_IDLE) or 600)
        if isinstance(idle, bool) or not isinstance(idle, int | float) or idle <= 0:
            raise SettingsError(
                f"SharedLocalModel(idle_seconds=...) must be a positive number, not {idle!r}."
            )
        self.idle_seconds = float(idle)
        key = json.dumps([str(self.path), n_ctx, n_threads])
        self._stem = "model-" + hashlib.sha256(key.encode()).hexdigest()[:12]
        self._start_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SharedLocalModel({self.name!r}, socket={str(self.socket_path)!r})"

    @property
    def description(self) -> str:
        """``"Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp, shared by this machine's kernels)"``."""
        title = self.path.name if self.path is not None else gguf.DEFAULT_MODEL_TITLE
        return f"{title} (embedded, llama.cpp, shared by this machine's kernels)"

    async def tool_support(self) -> ToolSupport:
        """The protocol this model gets when none is chosen: ``decide``, as in-kernel (`gguf.EMBEDDED_SUPPORT`)."""
        return gguf.EMBEDDED_SUPPORT

    @property
    def socket_path(self) -> Path:
        """The socket of the process serving this model's file and context size."""
        return self.directory / f"{self._stem}.sock"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request`` from the shared process, starting it if none runs.

        Native tools' calls are read from the streamed text by ``request.call_parser`` here, in
        the kernel, as `LlamaCppModel` reads them.

        Args:
            request: As `LlamaCppModel.stream` takes it; the options default to this model's
                ``temperature``, ``max_tokens`` and ``seed``.

        Yields:
            ``status`` chunks while it waits for its turn ("waiting for the shared model: 1 ahead")
            or the model loads, then the chunks `LlamaCppModel.stream` gives; the last has
            ``done=True``.

        Raises:
            StreamCut: The process ended during the answer (stopped, killed, or crashed).
            ModelError: The socket folder is not safe, or the process could not start or failed;
                the process's own errors keep their message.
        """
        wire = request_to_wire(request)
        wire["options"] = {**self.options, **wire["options"]}
        reader, writer = await self._connect()
        parser = request.call_parser() if request.tools and request.call_parser else None
        may_ask_again = True  # until the first line: nothing of the answer was used yet
        try:
            writer.write(line({"v": VERSION, "op": "chat", "request": wire}))
            await writer.drain()
            while True:
                raw = await reader.readline()
                if not raw and may_ask_again:
                    # It stopped (idle) as this request reached it, before a word of an answer:
                    # a new process answers instead, once.
                    may_ask_again = False
                    writer.close()
                    reader, writer = await self._connect()
                    writer.write(line({"v": VERSION, "op": "chat", "request": wire}))
                    await writer.drain()
                    continue
                may_ask_again = False
                if not raw:
                    raise StreamCut(
                        f"The shared model process ({self.socket_path}) ended during the answer: it was"
                        " stopped or failed (its log: " + str(self._log_path) + "). Ask again: the next"
                        " request starts a new one."
                    )
                value = json.loads(raw)
                if "error" in value:
                    raise ModelError(value["error"])
                chunk = chunk_from_wire(value)
                if chunk.done:
                    for piece in chunks(parser.close(chunk.finish_reason)) if parser else []:
                        yield piece
                    yield chunk
                    return
                if parser and chunk.text:
                    for piece in chunks(parser.feed(chunk.text)):
                        yield piece
                else:
                    yield chunk
        finally:
            writer.close()  # also on aclose() or cancellation: the process stops this answer

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is for this model, counted by the shared process.

        Raises:
            ModelError: As `stream`.
        """

        # Plain sockets, not asyncio: a caller may be on a running event loop (the kernel's).
        with self._open() as client:
            client.sendall(line({"v": VERSION, "op": "count", "text": text}))
            with client.makefile("rb") as answer:
                raw = answer.readline()
        if not raw:
            raise ModelError(
                f"The shared model process ({self.socket_path}) ended before it counted: it was"
                f" stopped or failed (its log: {self._log_path}). Ask again: the next request starts a new one."
            )
        value = json.loads(raw)
        if "error" in value:
            raise ModelError(value["error"])
        return int(value["tokens"])

    def status(self) -> dict[str, Any] | None:
        """The running process's status (pid, model, requests waiting, clients), or None if none runs.

        Raises:
            ModelError: The socket folder is not safe.
        """
        return self._ask_running({"v": VERSION, "op": "status"})

    def stop(self) -> bool:
        """Ask the running process to exit now; False if none was running.

        Raises:
            ModelError: The socket folder is not safe.
        """
        return self._ask_running({"v": VERSION, "op": "stop"}) is not None

    # -- finding, checking and starting the process -------------------------------------------

    @property
    def _log_path(self) -> Path:
        return self.directory / f"{self._stem}.log"

    def _ask_running(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        if self._own_directory and not self.directory.exists():
            return None  # never made: nothing ever ran here
        self._check_directory(create=False)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            try:
                client.connect(str(self.socket_path))
                client.sendall(line(message))
                with client.makefile("rb") as answer:
                    raw = answer.readline()
            except (FileNotFoundError, ConnectionError):  # none listens, or it is stopping
                return None
        return json.loads(raw) if raw else None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_unix_connection(sock=await asyncio.to_thread(self._open))

    def _open(self) -> socket.socket:
        """A connection to the process, started first if none listens."""
        self._check_directory(create=True)
        for attempt in range(3):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                client.connect(str(self.socket_path))
                return client
            except (FileNotFoundError, ConnectionRefusedError):
                client.close()
                if attempt == 2:  # started, yet gone at once: its log says why
                    raise ModelError(
                        f"The shared model process at {self.socket_path} stopped as soon as it"
                        f" started; its log: {self._log_path}."
                    ) from None
                # None listens (never started, killed, or idle): start one. Twice, for one that was
                # just stopping when this kernel found it listening.
                self._start()
        raise AssertionError("unreachable")

    def _check_directory(self, *, create: bool) -> None:
        """Refuse a socket folder that users other than the allowed ones can reach."""
        folder = self.directory
        if create and self._own_directory and not folder.exists():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if len(str(self.socket_path)) > _SOCKET_PATH_MAX:
            raise ModelError(
                f"The shared model's socket path {self.socket_path} is longer than a Unix socket"
                f" allows ({_SOCKET_PATH_MAX} bytes): set ${ENV_DIRECTORY} to a shorter folder."
            )
        try:
            info = folder.stat()
        except FileNotFoundError:
            raise ModelError(
                f"The shared model's socket folder {folder} does not exist: make it (mkdir -m 0700, or"
                f" for a class: mkdir -m 2770 and chgrp to the class's group), or unset ${ENV_DIRECTORY}."
            ) from None
        mode = stat.S_IMODE(info.st_mode)
        problem = None
        if not stat.S_ISDIR(info.st_mode):
            problem = "is not a folder"
        elif self._gid is None:
            if info.st_uid != os.getuid():
                problem = f"belongs to uid {info.st_uid}, not to you (uid {os.getuid()})"
            elif mode & 0o077:
                problem = f"has mode {mode:04o}: others than you can reach it (it must be 0700)"
        else:
            if info.st_uid not in (os.getuid(), 0) and info.st_gid != self._gid:
                problem = f"belongs to neither you, root nor the group {self.group}"
            elif info.st_gid != self._gid:
                problem = f"is not in the group {self.group} (gid {info.st_gid}; chgrp {self.group} it)"
            elif mode & 0o007:
                problem = f"has mode {mode:04o}: users outside the group {self.group} can reach it (use 2770)"
            elif self._gid not in os.getgroups() and os.getgid() != self._gid:
                problem = f"is for the group {self.group}, which you are not in"
        if problem is not None:
            raise ModelError(
                f"Refusing the shared model's socket folder {folder}: it {problem}. Only the users"
                " allowed to share the model may reach it; fix its owner and mode, or choose another"
                f" folder (${ENV_DIRECTORY}), or unset it to use your own."
            )

    def _start(self) -> None:
        """Start the process unless one is listening; kernels starting at once start one (a lock)."""
        with self._start_lock, self._shared_file(f"{self._stem}.lock") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _listening(self.socket_path):
                return
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()  # a dead process's socket
            command = [sys.executable, "-m", "meowgent_nb.models.shared_local", "serve", *self._serve_args()]
            with self._shared_file(self._log_path.name) as log:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # not the kernel's: it outlives the kernel and its signals
                )
            # Reaped when it exits, so an idle-stopped process leaves no zombie in this kernel.
            threading.Thread(target=process.wait, daemon=True).start()
            deadline = time.monotonic() + _START_SECONDS
            while not _listening(self.socket_path):
                if process.poll() is not None or time.monotonic() > deadline:
                    if process.poll() is None:
                        process.kill()
                    tail = self._log_path.read_text(errors="replace")[-800:].strip()
                    raise ModelError(
                        f"The shared model process did not start (exit code {process.poll()}); its log"
                        f" ({self._log_path}) ends: {tail or '(empty)'}"
                    )
                time.sleep(0.05)

    def _shared_file(self, name: str) -> Any:
        """``name`` in the folder, opened to append: the group's to write (0660) in a class's folder."""
        descriptor = os.open(self.directory / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if os.fstat(descriptor).st_uid == os.getuid():  # only its owner may change its mode
            os.fchmod(descriptor, 0o660 if self._gid is not None else 0o600)
        return os.fdopen(descriptor, "ab")

    def _serve_args(self) -> list[str]:
        args = ["--directory", str(self.directory), "--n-ctx", str(self.n_ctx)]
        args += ["--idle", str(self.idle_seconds)]
        if self.path is not None:
            args += ["--path", str(self.path)]
        if self.n_threads is not None:
            args += ["--threads", str(self.n_threads)]
        if self.group is not None:
            args += ["--group", self.group]
        return args


def _listening(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m meowgent_nb.models.shared_local serve|status|stop``: run, show or stop the process."""
    parser = argparse.ArgumentParser(
        prog="python -m meowgent_nb.models.shared_local",
        description="The embedded model shared by the kernels of this machine.",
    )
    parser.add_argument("command", choices=["serve", "status", "stop"])
    parser.add_argument("--path", help="the GGUF file (default: $MEOWGENT_GGUF, else the default model)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the context window in tokens")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: half the cores)")
    parser.add_argument("--directory", help=f"the socket folder (default: ${ENV_DIRECTORY}, else your own)")
    parser.add_argument("--group", help=f"the group sharing the process (default: ${ENV_GROUP})")
    parser.add_argument("--idle", type=float, default=None, help="seconds idle before it exits (600)")
    args = parser.parse_args(argv)
    try:
        model = SharedLocalModel(
            args.path,
            n_ctx=args.n_ctx,
            n_threads=args.threads,
            directory=args.directory,
            group=args.group,
            idle_seconds=args.idle,
        )
        if args.command == "status":
            status = model.status()
            print(
                json.dumps(status)
                if status is not None
                else f"No shared model process at {model.socket_path}."
            )
            return 0 if status is not None else 1
        if args.command == "stop":
            print("Stopped." if model.stop() else f"No shared model process at {model.socket_path}.")
            return 0
        model._check_directory(create=True)  # noqa: SLF001 - the same check a kernel makes
        if _listening(model.socket_path):
            print(f"A shared model process already listens at {model.socket_path}.", file=sys.stderr)
            return 1
    except (ModelError, SettingsError) as exc:
        print(exc, file=sys.stderr)
        return 2
    from ._local_server import serve

    old = os.umask(0o117 if model.group is not None else 0o177)  # the socket: group or owner only
    try:
        serve(
            socket_path=model.socket_path,
            path=model.path,
            n_ctx=model.n_ctx,
            n_threads=model.n_threads,
            idle_seconds=model.idle_seconds,
        )
    finally:
        os.umask(old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
