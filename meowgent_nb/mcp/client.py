"""Tools from MCP servers: `McpToolbox` connects to a server and makes each of its tools a `Tool`.

Each server tool is described to the model with its real arguments (its input schema, validated
with `jsonschema` before any approval), and runs through the server's session. The sessions live
on one background event loop (see `_mcp_thread`), because the kernel's loop is busy while a cell
runs. Works with the official ``mcp`` package, 2.x; it is imported when a toolbox is made.

Approval defaults come from the tool's annotations (see `needs_approval`): ``destructiveHint``
or ``openWorldHint`` true asks, else ``readOnlyHint`` true runs without asking, anything else asks
(an outside server is not trusted by default). Override per tool with ``approval={"name": False}``
or by setting ``tool.approval``. A tool's ``title`` (or its annotations' ``title``) is kept as the
tool's ``title`` attribute, for listings and approvals; the model is given its name.

A tool's examples are JSON Schema's own top-level ``examples`` keyword in its input schema (a list
of argument objects). Those that the tool's validation accepts are kept (at most 5); the others
are left out with a warning naming the server and the tool: a server's listing is outside input,
and a bad example never keeps a server or a tool from being added.

Besides tools, a box reads the server's resources and resource templates (`McpToolbox.read`),
prompts (`McpToolbox.prompt`), completions and instructions; see `_server_context`. With
``read_resources=True`` the model gets a ``read_resource`` tool for the server's resources (to
follow a resource link in a tool's result).

When the server changes its tools (``notifications/tools/list_changed``), the box lists them
again before its tools are next used; `refresh` does it by hand (see `_refresh`).

A tool that can only run as an MCP task (``execution.taskSupport: "required"``, protocol
2025-11-25) runs as one (see `_tasks`): its status is a line in the call's card, and giving the
call up (Stop, the time limit) cancels the task on the server. Where the session cannot run
tasks, the tool is not offered, and `McpToolbox.skipped` says why. A tool for which tasks are
``"optional"`` gets plain calls. Stop ends a plain call on the server too (it is cancelled).
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ._asking import Asked, ServerAsks
from ._context import McpImage
from ._progress import LogEntry, ServerNotes
from ._refresh import ToolChanges, ToolRefresh, listing_key
from ._results import StructuredResult, result_value, value_schema, wraps_result
from ._server_context import READ_TOOL, ServerContext
from ._session import CallTimedOut, McpServerError, McpToolError, _Connection, _field
from ._tasks import task_problem
from ._thread import background_loop
from .config import masked, redact
from ..errors import ToolDefinitionError
from ..tools._examples import split_examples
from ..tools.toolbox import Toolbox
from ..tools.core import Tool

__all__ = [
    "McpImage",
    "McpServerError",
    "McpToolError",
    "McpToolbox",
    "StructuredResult",
    "ToolChanges",
    "mcp_tool",
    "needs_approval",
]

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_PREFIX = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]{0,31})?")
_TITLE_LIMIT = 100  # characters of a server's title kept (it is outside text, shown on one line)
_MARGIN = 1.0  # seconds: the agent's own time limit ends a slow call first, as for local tools
_NEEDS_TASKS = "it runs only as an MCP task, and no session was given that can run one"
_CONNECT_FIX = {
    "stdio": "Check the command, and that the server starts on its own in a terminal.",
    "http": "Check the URL, the token or headers (a refused token reads 'Server returned an error response'),"
    " and that the server is running.",
}


def needs_approval(annotations: Any) -> bool:
    """Whether a tool with these MCP annotations asks before it runs.

    ``destructiveHint`` true -> yes; else ``openWorldHint`` true -> yes (it reaches outside: the
    web, other people's systems, even when it only reads); else ``readOnlyHint`` true -> no; else
    yes. Annotations may be the SDK's object (``destructive_hint``) or a dict in the wire's
    spelling.
    """
    if _field(annotations, "destructive_hint", "destructiveHint") is True:
        return True
    if _field(annotations, "open_world_hint", "openWorldHint") is True:
        return True
    return _field(annotations, "read_only_hint", "readOnlyHint") is not True


def mcp_tool(
    spec: Any,
    call: Callable[[str, dict[str, Any]], str],
    *,
    prefix: str = "",
    approval: bool | None = None,
    timeout: float | None = None,
    server: str | None = None,
    task_problem: str | None = _NEEDS_TASKS,
) -> Tool:
    """A `Tool` from one entry of an MCP server's tool listing.

    Characters a tool name may not have here (``/``, spaces, ...) become ``_``; the tool's
    ``remote_name`` attribute keeps the server's name, which calls use, its ``title``
    attribute the server's title for people (the tool's, else its annotations'; None if neither),
    and its ``output_schema`` attribute the schema of the values its calls return (see
    `value_schema`; None where a call's value is its text).

    Args:
        spec: The listed tool: the SDK's ``Tool`` (``input_schema``, mcp 2.x) or a dict / object
            with ``inputSchema`` (the wire's and mcp 1.x's spelling).
        call: Called with the server's tool name and the validated arguments; returns the text,
            or the server's ``CallToolResult``, which becomes the call's value (its structured
            content where it has one, see `result_value`; the model reads the server's text).
        prefix: Put before the tool's name (e.g. ``"github_"``) to avoid clashes.
        approval: Whether calls ask first; None: from the annotations (see `needs_approval`).
        timeout: Seconds a call may take, or None for the agent's default.
        server: The server's name, for the warning about examples that are left out.
        task_problem: Why a tool that runs only as a task cannot (see `_tasks.task_problem`), or
            None when the session can run it: the tool's ``runs_as_task`` attribute is then
            True, and ``call`` must make a task of it.

    Raises:
        ToolDefinitionError: The schema is not valid JSON Schema, the name cannot be made a tool
            name, or the tool runs only as a task (``execution.taskSupport: "required"``) and
            ``task_problem`` says why it cannot.
    """
    remote = _field(spec, "name", "name")
    as_task = _field(_field(spec, "execution", "execution"), "task_support", "taskSupport") == "required"
    if as_task and task_problem is not None:
        raise ToolDefinitionError(f"the MCP tool {remote!r}", [task_problem])
    schema = _field(spec, "input_schema", "inputSchema") or {"type": "object"}
    title = _title(spec)
    description = _field(spec, "description", "description") or title or ""
    name = _BAD_NAME_CHARS.sub("_", prefix + remote)[:64]
    if approval is None:
        approval = needs_approval(_field(spec, "annotations", "annotations"))

    listed_schema = _field(spec, "output_schema", "outputSchema")
    wrapped, output_schema = wraps_result(listed_schema), value_schema(listed_schema)

    def handler(**arguments: Any) -> Any:
        answer = call(remote, arguments)
        return answer if isinstance(answer, str) else result_value(answer, wrapped)

    schema, examples = split_examples(schema)  # a bad example should not cost the tool itself
    made = Tool.from_schema(name, description, schema, handler, approval=approval, timeout=timeout)
    made.remote_name = remote  # type: ignore[attr-defined]
    made.title = title  # type: ignore[attr-defined]
    made.output_schema = output_schema  # type: ignore[attr-defined]
    made.runs_as_task = as_task  # type: ignore[attr-defined]
    made.idempotent = _field(_field(spec, "annotations", "annotations"), "idempotent_hint", "idempotentHint") is True  # type: ignore[attr-defined]
    if examples is not None:
        left_out = made._adopt_examples(examples)
        if left_out:
            _warn_examples(server, remote, len(made.examples), left_out)
    return made


def _title(spec: Any) -> str | None:
    """The server's title for a tool, on one line and bounded; None when it has none."""
    title = _field(spec, "title", "title") or _field(
        _field(spec, "annotations", "annotations"), "title", "title"
    )
    if not isinstance(title, str) or not title.strip():
        return None
    title = " ".join(title.split())
    return title if len(title) <= _TITLE_LIMIT else title[: _TITLE_LIMIT - 3] + "..."


_SHOWN_PROBLEMS = 3


def _warn_examples(server: str | None, remote: str, kept: int, problems: list[str]) -> None:
    """Say which of a server tool's examples are left out, in one bounded line."""
    source = f"the MCP server {server!r}" if server else "an MCP server"
    shown = "".join(f"\n- {problem[:200]}" for problem in problems[:_SHOWN_PROBLEMS])
    if len(problems) > _SHOWN_PROBLEMS:
        shown += f"\n- and {len(problems) - _SHOWN_PROBLEMS} more"
    offered = f"with the {kept} that fit" if kept else "without examples"
    warnings.warn(
        f"Examples of the tool {remote[:64]!r} from {source} are left out (it is offered {offered}):{shown}",
        stacklevel=3,
    )


class McpToolbox(ServerContext, ToolRefresh, Toolbox):
    """The tools of one MCP server, connected over stdio or streamable HTTP.

    Making it starts the server (stdio) or connects to it (HTTP) and lists its tools. Close it with
    `close` (or use it as a context manager); the process's sessions also close at exit.

    Example::

        files = McpToolbox("files", ["python", "files_server.py"], approval={"read": False})
        web = McpToolbox("web", url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})

    Args:
        name: What the server is called here; also the tools' name prefix.
        command: The stdio server's command and arguments (a list, or one string split like a
            shell would); give this or ``url``.
        url: The streamable-HTTP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: HTTP headers to send (for example a bearer token).
        prefix: What tool names start with: True for ``NAME_`` (``github_search``), False for
            nothing (the server's names), or a string (``"gh_"``: ``gh_search``).
        approval: Per-tool overrides of the annotation defaults: ``{"search": False}`` (server or
            local names).
        include: Offer only these of the server's tools (server names); or
        exclude: offer all but these. A name the server does not have is an error.
        timeout: Seconds each call may take (the tools' own limit); None: the agent's limit.
        call_timeout: When ``timeout`` is None, seconds after which a call is abandoned here;
            set it to the agent's limit (``%tools mcp`` uses ``AgentMagics.tool_timeout``).
        env: Extra environment variables for a stdio server.
        cwd: The working directory of a stdio server.
        connect_timeout: Seconds to wait for the server to start and list its tools.
        secrets: Strings never shown in the box's repr, listings or error messages (``***``
            instead), e.g. values a configuration file took from the environment. The values of
            ``env`` and ``headers`` are always among them (those of 4 characters or more).
        read_resources: Offer the model a ``read_resource`` tool (``NAME_read_resource``) that
            reads this server's resources: listed ones, those its templates make, and those its
            tools' results link to; it runs without asking (override with ``approval=``).
        use_instructions: Put the server's instructions (`instructions`) in the system prompt of
            ``%%agent`` cells that offer its tools, as a delimited, escaped block.
        sampling: What happens when the server asks to use the model (``sampling/createMessage``)
            during a call: ``"ask"`` (the person approves the request, then the answer, in the
            running cell; refused in headless runs), ``"allow"`` (the model answers without
            asking; the card says so), or ``"deny"`` (not offered to the server).
        sampling_model: The model that answers sampling requests; None: the model of the agent
            whose call the server is serving.
        roots: Folders offered to the server as roots (``roots/list``), besides the working
            directory, which always is.
        log_level: The least severe of the server's log messages kept in `log` ("debug", "info",
            "notice", "warning", "error", "critical", "alert", "emergency"); the server is asked
            to send nothing below it.

    A server's request for input (elicitation) during a call is shown as a form in the running
    cell, under the call's card; headless runs decline it. See `history` for what the server
    asked and what became of it. A call's progress notifications are a live progress line in its
    card (in a ``%%agent`` cell; ignored elsewhere); the server's log messages are kept in `log`,
    and those at warning and above during a call are lines in its card too (see `_progress`).

    When the server says its tools changed, the box lists them again the next time its tools are
    looked at (a ``%%agent`` cell gathering them), printing what changed; `refresh` does it by hand.
    A call to a tool the server no longer offers is refused with an error that says so.

    Raises:
        McpServerError: The server did not start, could not be reached, or failed to list tools.
        ValueError: An option is wrong (a bad prefix or timeout, include/exclude/approval names a
            tool the server does not have).
    """

    def __init__(
        self,
        name: str,
        command: Sequence[str] | str | None = None,
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: bool | str = True,
        approval: Mapping[str, bool] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        timeout: float | None = None,
        call_timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        connect_timeout: float = 30.0,
        secrets: Iterable[str] = (),
        read_resources: bool = False,
        use_instructions: bool = False,
        sampling: str = "ask",
        sampling_model: Any = None,
        roots: Sequence[str | os.PathLike[str]] = (),
        log_level: str = "info",
    ):
        Toolbox.__init__(self, name)
        self.asks = ServerAsks(name, sampling, sampling_model, roots)
        """The answers to the server's elicitation, sampling and roots requests (see `history`)."""
        self.notes = ServerNotes(name, log_level)
        """The server's log messages (see `log`) and its calls' progress."""
        if (command is None) == (url is None):
            raise ValueError(f"McpToolbox {name!r}: give either a command (stdio) or url= (streamable HTTP)")
        argv = shlex.split(command) if isinstance(command, str) else list(command or [])
        if command is not None and not argv:
            raise ValueError(f"McpToolbox {name!r}: the command is empty")
        for option, value in (
            ("timeout", timeout),
            ("call_timeout", call_timeout),
            ("connect_timeout", connect_timeout),
        ):
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
            ):
                raise ValueError(
                    f"McpToolbox {name!r}: {option} must be a positive number of seconds, got {value!r}"
                )
        self.prefix = _prefix(name, prefix)
        """What the box's tool names start with ("" for none)."""
        if include is not None and exclude is not None:
            raise ValueError(f"McpToolbox {name!r}: give include= or exclude=, not both")
        include, exclude = _listed(include), _listed(exclude)
        headers, env = dict(headers or {}), dict(env or {})
        self.env_names, self.header_names = tuple(env), tuple(headers)
        """The names of the env variables and headers given (their values are never shown)."""
        given = [secrets] if isinstance(secrets, str) else list(secrets)  # one string is one secret
        self._secrets = frozenset(given) | set(env.values()) | set(headers.values())
        self.transport = "stdio" if url is None else "http"
        self.target = self._redact(url if url is not None else shlex.join(argv))
        """The command line or the URL, for listings (secrets shown as ``***``)."""
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.log_path: str | None = None
        """Where a stdio server's stderr goes (ipykernel's stderr has no file descriptor)."""
        if url is None:
            handle, self.log_path = tempfile.mkstemp(prefix=f"meowgent-mcp-{name}-", suffix=".log")
            os.close(handle)
        self._connection = _Connection(self, argv, url, headers, env, cwd)
        self._loop = background_loop()
        try:
            listed = self._loop.run(self._connection.start(), timeout=connect_timeout + _MARGIN)
        except BaseException as exc:
            self._loop.run(self._connection.stop(), timeout=15)
            error = self._connection.failure(
                f"could not connect to the MCP server {name!r} ({self.target})",
                exc,
                fix=_CONNECT_FIX[self.transport],
            )
            self._remove_log()
            if not isinstance(exc, Exception):  # an interrupt stays an interrupt
                raise
            raise McpServerError(self._redact(str(error))) from None
        self._loop.on_exit(self, self._aclose)
        self.instructions: str | None = self._connection.instructions
        """What the server said about using it (``instructions`` at the start), or None."""
        self.use_instructions = use_instructions
        self.read_resources = read_resources
        self.skipped: dict[str, str] = {}
        """Server tools that are not offered (a bad schema or name, or one that runs only as a task
        on a session that cannot run tasks), and why."""
        self.left_out: list[str] = []
        """Server tools left out by ``include`` / ``exclude``."""
        self._options = (dict(approval or {}), include, exclude, timeout)
        try:
            self._tools, self.skipped, self.left_out, self._keys = self._built(listed, strict=True, kept={})
        except BaseException:
            self.close()
            raise

    def _built(
        self, listed: list[Any], *, strict: bool, kept: dict[str, tuple[dict[str, str] | None, Tool]]
    ) -> tuple[dict[str, Tool], dict[str, str], list[str], dict[str, dict[str, str]]]:
        """The box's tools from a listing and its options: tools, skipped, left out, listing keys.

        Args:
            listed: The server's tools.
            strict: Whether include / exclude / approval names the server does not have are an
                error (when the box is made), or kept for later (a refresh).
            kept: Tools to keep as they are where their listing is the same (by local name, with
                their `listing_key`).
        """
        overrides, include, exclude, timeout = dict(self._options[0]), *self._options[1:]
        has = [spec.name for spec in listed]
        for option, names in (("include", include), ("exclude", exclude)):
            unknown = [n for n in (names or ()) if n not in has]
            if unknown and strict:
                raise ValueError(
                    f"McpToolbox {self.name!r}: {option} names unknown tools: {', '.join(unknown)};"
                    f" the server has: {', '.join(has) or 'none'}"
                )
        box, skipped, left_out, keys = Toolbox(self.name), {}, [], {}  # box: the clash rules
        for spec in listed:
            local = _BAD_NAME_CHARS.sub("_", self.prefix + spec.name)[:64]
            wanted = overrides.pop(spec.name, overrides.pop(local, None))
            if (include is not None and spec.name not in include) or (
                exclude is not None and spec.name in exclude
            ):
                left_out.append(spec.name)
                continue
            key, (old_key, old) = listing_key(spec), kept.get(local, (None, None))
            try:
                if old is not None and old_key == key and old.remote_name == spec.name:
                    made = old  # the same listing: the same Tool, with any setting made on it
                else:
                    made = mcp_tool(
                        spec, self._call, prefix=self.prefix, approval=wanted, timeout=timeout, server=self.name,
                        task_problem=task_problem(self._connection.client, self._connection.capabilities),
                    )
                box.add(made)
                keys[made.name] = key
            except ToolDefinitionError as error:  # one odd tool should not hide the server's others
                skipped[spec.name] = "; ".join(error.problems)
        if self.read_resources:
            local = _BAD_NAME_CHARS.sub("_", self.prefix + READ_TOOL)[:64]
            wanted = overrides.pop(READ_TOOL, overrides.pop(local, None))
            old = kept.get(local, (None, None))[1]
            reader = old if old is not None and old.remote_name is None else self._reader(local, bool(wanted), timeout)
            try:
                box.add(reader)
            except ToolDefinitionError as error:
                if strict:
                    raise
                skipped[READ_TOOL] = "; ".join(error.problems)
        if overrides and strict:
            raise ValueError(
                f"McpToolbox {self.name!r}: approval names unknown tools: {', '.join(overrides)};"
                f" the server has: {', '.join(has) or 'none'}"
            )
        return box._tools, skipped, left_out, keys

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    @property
    def connected(self) -> bool:
        """Whether the session is open (False after `close`, or once a call found the server gone)."""
        return self._connection.alive

    def ping(self, timeout: float = 2.0) -> bool:
        """Ask the server whether it is still there (a tool listing); returns `connected` afterwards.

        A server that died while idle is noticed here (or at the next call). A server that is
        merely slow to answer within ``timeout`` counts as connected.
        """
        return self._loop.run(self._connection.ping(timeout), timeout=timeout + 5.0)

    def reconnect(self) -> ToolChanges:
        """A new session with the server (a stdio server is started again), and its tools listed again.

        For a server that stopped (it crashed, or the connection broke) or hangs. The tools keep
        their names and settings where the server lists them as before.

        Returns:
            What changed in the tools (printable; false when nothing did).

        Raises:
            McpServerError: The server could not be reached again; the box keeps its tools, stopped.
        """
        old = self._connection
        self._loop.run(old.stop(), timeout=15)
        fresh = _Connection(self, old.argv, old.url, old.headers, old.env, old.cwd)
        try:
            self._loop.run(fresh.start(), timeout=self.connect_timeout + _MARGIN)
        except BaseException as exc:
            self._loop.run(fresh.stop(), timeout=15)
            if not isinstance(exc, Exception):  # an interrupt stays an interrupt
                raise
            error = fresh.failure(
                f"could not connect to the MCP server {self.name!r} again ({self.target})", exc,
                fix=_CONNECT_FIX[self.transport],
            )
            raise McpServerError(self._redact(str(error))) from None
        self._connection = fresh
        self.instructions = fresh.instructions
        self._loop.on_exit(self, self._aclose)
        return self.refresh()

    def _call(self, remote: str, arguments: dict[str, Any]) -> Any:
        gone = self._gone(remote)  # an agent may hold a tool the server has dropped since
        if gone:
            raise McpServerError(gone)
        tool = next((t for t in self._tools.values() if getattr(t, "remote_name", None) == remote), None)
        limit = (
            tool.timeout if tool is not None and tool.timeout is not None else self.call_timeout
        ) + _MARGIN
        try:
            # A server that asks, reports progress or logs during the call reaches the agent's call.
            with self.asks.flight() as flight, self.notes.watch(flight) as watch:
                as_task = bool(getattr(tool, "runs_as_task", False))

                def attempt() -> Any:
                    called = self._connection.call(
                        remote, arguments, limit, watch.progress, task=as_task, status=watch.status
                    )
                    return self._loop.run(called, timeout=limit + 5.0, held=flight.running)

                was_open = self._connection.alive
                try:
                    return attempt()
                except McpServerError as error:
                    if not self._retries(tool, error, flight.running, was_open):
                        raise
                    self._again(remote, error)
                    return attempt()
        except (McpServerError, McpToolError) as error:  # a server may quote its token back
            if self._vanished(remote, error):  # the server dropped the tool since it was listed
                raise McpServerError(self._gone(remote) or "") from None
            raise type(error)(self._redact(str(error))) from None

    def _retries(self, tool: Tool | None, error: McpServerError, running: Any, was_open: bool) -> bool:
        """Whether a failed call is made once more, on a new session: only a call of a tool the
        server marks ``idempotentHint`` (running it twice does no harm) that timed out here or
        whose connection broke, and that its agent has not given up (Stop, its own limit)."""
        lost = was_open and not self._connection.alive and not self._connection.stopped
        if not (lost or isinstance(error, CallTimedOut)) or getattr(running, "ended", None) is not None:
            return False
        if not getattr(tool, "idempotent", False):
            raise type(error)(
                f"{error}\nIt was not tried again: the server does not mark {tool.remote_name if tool else 'it'}"
                " idempotent (idempotentHint), so it may have run."
            ) from None
        return True

    def _again(self, remote: str, error: McpServerError) -> None:
        """Reconnect before the one retry of an idempotent call; if that fails, both errors are told."""
        try:
            self.reconnect()
        except McpServerError as failed:
            raise McpServerError(
                f"{error}\nTrying {remote} again on a new session failed: {str(failed).splitlines()[0]}"
            ) from None

    @property
    def history(self) -> list[Asked]:
        """What the server asked during calls (input, the model, roots), and what became of it."""
        return list(self.asks.history)

    @property
    def log(self) -> tuple[LogEntry, ...]:
        """The server's last 200 log messages at or above ``log_level``, oldest first (``%tools mcp log NAME``)."""
        return self.notes.log

    def close(self) -> None:
        """End the session (a stdio server is stopped) and delete its stderr log."""
        self._loop.on_exit(self, None)
        self._loop.run(self._connection.stop(), timeout=15)
        self._remove_log()

    async def _aclose(self) -> None:  # at interpreter exit, on the background loop
        await self._connection.stop()
        self._remove_log()

    def _remove_log(self) -> None:
        if self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)

    def __enter__(self) -> McpToolbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        given = [
            f"{label}={masked(dict.fromkeys(names, ''))}"
            for label, names in (("env", self.env_names), ("headers", self.header_names))
            if names
        ]
        return ", ".join(
            [
                f"McpToolbox({self.name!r}",
                f"{self.transport}: {self.target!r}",
                *given,
                state,
                f"tools={self.names!r})",
            ]
        )


def _listed(names: Sequence[str] | str | None) -> list[str] | None:
    """Tool names as a list; one string is one name (not its letters)."""
    return None if names is None else [names] if isinstance(names, str) else list(names)


def _prefix(name: str, prefix: bool | str) -> str:
    if prefix is True:
        return f"{name}_"
    if prefix is False:
        return ""
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ValueError(
            f"McpToolbox {name!r}: prefix must be True, False or a string of letters, digits, '_', '.'"
            f" and '-' starting with a letter or '_' (at most 32), got {prefix!r}"
        )
    return prefix
