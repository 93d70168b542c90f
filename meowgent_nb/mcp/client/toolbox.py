"""Tools from MCP servers: `McpToolbox`, one server's tools as `McpTool`s an agent can call.

`McpToolbox` is a `Toolbox` that owns one `_connection.Connection` (the session of the moment on
the background loop of `mcp._thread`, the secrets, the time limits, reconnecting) and passes it to
its parts: `_server_resources.ServerResources` (resources, prompts, completions) and
`_refresh.ToolRefresh` (the tools listed again when the server says they changed). Each server
tool becomes an `McpTool` (`_server_tool.mcp_tool`) whose approval default comes from its
annotations (`needs_approval`); a tool that must run as an MCP task runs as one (`_tasks`). A
recorded box takes its tools from the cell's cassette (`use_tape`, `_replayed`). The rules a
person reads are in docs/guides/mcp.md.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ...errors import SettingsError, ToolDefinitionError
from ...tools.core import Tool
from ...tools.media import McpImage
from ...tools.toolbox import Toolbox
from ..config import env_credentials, header_secrets, masked
from ..content._recorded_values import MCP_VALUES
from ..content._results import StructuredResult
from ._connection import MARGIN, Connection
from ._refresh import Listing, ToolChanges, ToolRefresh, listing_key
from ._replayed import replayed_tools
from ._secrets import Secrets
from ._server_resources import READ_TOOL, ServerResources
from ._server_tool import BAD_NAME_CHARS, mcp_tool, needs_approval
from ._session import McpServerError, McpToolError
from ._tasks import task_problem
from .asking import Asked, ServerAsks
from .oauth import OAuth, oauth_options
from .progress import LogEntry, ServerNotes
from .resources import instructions_block
from .tool import McpTool

__all__ = [
    "McpImage",
    "McpServerError",
    "McpTool",
    "McpToolError",
    "McpToolbox",
    "OAuth",
    "StructuredResult",
    "ToolChanges",
    "mcp_tool",
    "needs_approval",
]

_PREFIX = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]{0,31})?")


class McpToolbox(Toolbox):
    """The tools of one MCP server, connected over stdio or streamable HTTP.

    Making it starts the server (stdio) or connects to it (HTTP) and lists its tools, unless
    ``record=True`` defers that to the first use. Close it with `close` or a ``with`` block.

    Example::

        files = McpToolbox("files", ["python", "files_server.py"], approval={"read": False})
        web = McpToolbox("web", url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})

    Args:
        name: What the server is called here; also the tools' name prefix.
        command: The stdio server's command line (a list, or one string split like a shell
            would); give this or ``url``.
        url: The streamable-HTTP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: HTTP headers to send (for example a bearer token).
        oauth: True, or an `OAuth`, to authorize with an OAuth-protected HTTP server.
        prefix: True for ``NAME_``, False for the server's names, or a string such as ``"gh_"``.
        approval: Per-tool overrides of the annotation defaults (server or local names).
        include: Offer only these of the server's tools (server names).
        exclude: Offer all but these (server names).
        timeout: Seconds each call may take; None: the agent's limit.
        call_timeout: When ``timeout`` is None, seconds after which a call is abandoned here.
        env: Extra environment variables for a stdio server.
        cwd: The working directory of a stdio server.
        connect_timeout: Seconds to wait for the server to start and list its tools.
        secrets: Strings shown as ``***`` in the box's repr, listings and errors; the values of
            ``env`` and ``headers`` are always among them.
        read_resources: Offer the model a ``NAME_read_resource`` tool for this server's resources.
        use_instructions: Put the server's instructions in the system prompt of ``%%agent`` cells.
        sampling: When the server asks to use the model: ``"ask"``, ``"allow"`` or ``"deny"``.
        sampling_model: The model that answers sampling requests; None: the calling agent's.
        roots: The folders offered to the server as roots; none given: no roots capability.
        log_level: The least severe server log message kept in `log`.
        record: Record the box's listing and calls in the cell's cassette and replay them from
            it (see `use_tape`).

    Raises:
        McpServerError: The server did not start, could not be reached, or failed to list tools.
        SettingsError: An option is wrong (a bad prefix or timeout, include/exclude/approval names a
            tool the server does not have).
    """

    def __init__(
        self,
        name: str,
        command: Sequence[str] | str | None = None,
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        oauth: OAuth | bool | None = None,
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
        record: bool = False,
    ):
        self._waiting = False  # a recorded box starts its server only when it must: see _wake
        self._removed: set[str] = set()  # server tools removed by hand: refreshes keep them out
        Toolbox.__init__(self, name)
        self.asks = ServerAsks(name, sampling, sampling_model, roots)
        """The answers to the server's elicitation, sampling and roots requests (see `history`)."""
        self.notes = ServerNotes(name, log_level)
        """The server's log messages (see `log`) and its calls' progress."""
        if (command is None) == (url is None):
            raise SettingsError(
                f"McpToolbox {name!r}: give either a command (stdio) or url= (streamable HTTP)"
            )
        argv = shlex.split(command) if isinstance(command, str) else list(command or [])
        if command is not None and not argv:
            raise SettingsError(f"McpToolbox {name!r}: the command is empty")
        for option, value in (
            ("timeout", timeout),
            ("call_timeout", call_timeout),
            ("connect_timeout", connect_timeout),
        ):
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
            ):
                raise SettingsError(
                    f"McpToolbox {name!r}: {option} must be a positive number of seconds, got {value!r}"
                )
        self.prefix = _prefix(name, prefix)
        """What the box's tool names start with ("" for none)."""
        if include is not None and exclude is not None:
            raise SettingsError(f"McpToolbox {name!r}: give include= or exclude=, not both")
        include, exclude = _listed(include), _listed(exclude)
        headers, env = dict(headers or {}), dict(env or {})
        self.env_names, self.header_names = tuple(env), tuple(headers)
        """The names of the env variables and headers given (their values are never shown)."""
        given = [secrets] if isinstance(secrets, str) else list(secrets)  # one string is one secret
        credentials = header_secrets(headers) | set(env_credentials(env))  # masked in what the server says
        masked_here = Secrets(set(given) | set(env.values()) | header_secrets(headers), credentials)
        self.oauth = oauth_options(name, oauth)
        """How the box authorizes (an `OAuth`), or None."""
        if self.oauth is not None and url is None:
            raise SettingsError(
                f"McpToolbox {name!r}: oauth= is for HTTP servers (url=); a stdio server is not asked"
            )
        self._connection = Connection(
            name,
            argv,
            url,
            headers,
            env,
            cwd,
            secrets=masked_here,
            asks=self.asks,
            notes=self.notes,
            oauth=self.oauth,
            call_timeout=call_timeout,
            connect_timeout=connect_timeout,
        )
        self.transport, self.target = self._connection.transport, self._connection.target
        """The transport ("stdio" or "http"), and the command line or URL (secrets as ``***``)."""
        self.call_timeout, self.connect_timeout = call_timeout, connect_timeout
        self._resources = ServerResources(self._connection)
        self._refresh = ToolRefresh(self._connection)
        self.instructions: str | None = None
        """What the server said about using it (``instructions`` at the start), or None."""
        self.use_instructions = use_instructions
        self.read_resources = read_resources
        self.skipped: dict[str, str] = {}
        """Server tools not offered, and why (a bad schema or name, or tasks the session lacks)."""
        self.left_out: list[str] = []
        """Server tools left out by ``include`` / ``exclude``."""
        self._options = (dict(approval or {}), include, exclude, timeout)
        self._keys: dict[str, dict[str, str]] = {}
        if not isinstance(record, bool):
            raise SettingsError(f"McpToolbox {name!r}: record must be True or False, got {record!r}")
        self.record = record
        """Whether the box's calls and listing go in the cell's cassette (see `use_tape`)."""
        self.replayed_from: str | None = None
        """The cassette the box's tools were replayed from, or None."""
        self.tape_path: str | None = None
        """The cassette the box's tools were recorded in or replayed from, or None."""
        self._tape_key: tuple[Any, str] | None = None
        self._waiting = record
        if not record:
            self._start()

    @property
    def log_path(self) -> str | None:
        """Where a stdio server's stderr goes (ipykernel's stderr has no file descriptor)."""
        return self._connection.log_path

    def _wake(self) -> None:
        """Start a recorded box's server if no cassette has said what to do yet (see `use_tape`)."""
        if self._waiting:
            try:
                self._start()
            except BaseException:
                self._waiting = True
                raise

    def _start(self) -> None:
        """Start the server (stdio) or connect to it (HTTP), and list its tools."""
        self._waiting = False
        listed = self._connection.start()
        self.instructions = self._connection.session.instructions
        self.replayed_from = None
        try:
            self._tools, self.skipped, self.left_out, self._keys = self._built(listed, strict=True, kept={})
        except BaseException:
            self.close()
            raise

    def _built(
        self, listed: list[Any], *, strict: bool, kept: dict[str, tuple[dict[str, str] | None, Tool]]
    ) -> Listing:
        """The box's tools from a listing and its options: tools, skipped, left out, listing keys.

        Args:
            listed: The server's tools.
            strict: Whether names in include / exclude / approval the server lacks are an error
                (a new box) or kept for later (a refresh).
            kept: Tools to reuse where their `listing_key` is unchanged, by local name.

        Raises:
            SettingsError: ``strict`` and an option names a tool the server does not have.
        """
        overrides, include, exclude, timeout = dict(self._options[0]), *self._options[1:]
        has = [spec.name for spec in listed]
        for option, names in (("include", include), ("exclude", exclude)):
            unknown = [n for n in (names or ()) if n not in has]
            if unknown and strict:
                raise SettingsError(
                    f"McpToolbox {self.name!r}: {option} names unknown tools: {', '.join(unknown)};"
                    f" the server has: {', '.join(has) or 'none'}"
                )
        box, skipped, left_out, keys = Toolbox(self.name), {}, [], {}  # box: the clash rules
        tasks = task_problem(self._connection.client, self._connection.session.capabilities)
        for spec in listed:
            local = BAD_NAME_CHARS.sub("_", self.prefix + spec.name)[:64]
            wanted = overrides.pop(spec.name, overrides.pop(local, None))
            if (include is not None and spec.name not in include) or (
                exclude is not None and spec.name in exclude
            ):
                left_out.append(spec.name)
                continue
            if spec.name in self._removed:  # box.remove(...): a refresh keeps it out
                continue
            key, (old_key, old) = listing_key(spec), kept.get(local, (None, None))
            try:
                if isinstance(old, McpTool) and old_key == key and old.remote_name == spec.name:
                    made = old  # the same listing: the same Tool, with any setting made on it
                else:
                    made = mcp_tool(
                        spec,
                        self._call,
                        prefix=self.prefix,
                        approval=wanted,
                        timeout=timeout,
                        server=self.name,
                        task_problem=tasks,
                    )
                made.value_codec = MCP_VALUES
                made.record = self.record
                box.add(made)
                keys[made.name] = key
            except ToolDefinitionError as error:  # one odd tool should not hide the server's others
                skipped[spec.name] = "; ".join(error.problems)
        if self.read_resources:
            local = BAD_NAME_CHARS.sub("_", self.prefix + READ_TOOL)[:64]
            wanted = overrides.pop(READ_TOOL, overrides.pop(local, None))
            old = kept.get(local, (None, None))[1]
            reader = (
                old
                if isinstance(old, McpTool) and old.remote_name is None
                else self._resources.reader(local, bool(wanted), timeout)
            )
            reader.record = self.record
            try:
                box.add(reader)
            except ToolDefinitionError as error:
                if strict:
                    raise
                skipped[READ_TOOL] = "; ".join(error.problems)
        if overrides and strict:
            raise SettingsError(
                f"McpToolbox {self.name!r}: approval names unknown tools: {', '.join(overrides)};"
                f" the server has: {', '.join(has) or 'none'}"
            )
        return box._tools, skipped, left_out, keys

    def remove(self, name: str) -> Tool:
        """Remove the tool called ``name`` and return it; refreshes leave it out until it is `add`-ed.

        Raises:
            KeyError: No tool has that name; the message lists the names there are.
        """
        self._wake()
        removed = super().remove(name)
        remote = removed.remote_name if isinstance(removed, McpTool) else None
        if remote is not None:
            self._removed = {*self._removed, remote}
        return removed

    def add(self, item: Any) -> Tool:
        """Add a tool (see `Toolbox.add`); a removed server tool is offered by refreshes again."""
        self._wake()
        added = super().add(item)
        remote = added.remote_name if isinstance(added, McpTool) else None
        if remote is not None:
            self._removed = self._removed - {remote}
        return added

    @property
    def connected(self) -> bool:
        """Whether the session is open."""
        return self._connection.alive

    def ping(self, timeout: float = 2.0) -> bool:
        """Ask the server whether it is still there; a slow answer counts as there.

        Returns:
            `connected` after asking.
        """
        return self._connection.loop.run(self._connection.session.ping(timeout), timeout=timeout + 5.0)

    def _call(self, remote: str, arguments: dict[str, Any]) -> Any:
        gone = self._refresh.gone(remote)  # an agent may hold a tool the server has dropped since
        if gone:
            raise McpServerError(gone)
        tool = next(
            (t for t in self._tools.values() if isinstance(t, McpTool) and t.remote_name == remote), None
        )
        limit = (
            tool.timeout if tool is not None and tool.timeout is not None else self.call_timeout
        ) + MARGIN
        try:
            # A server that asks, reports progress or logs during the call reaches the agent's call.
            with self.asks.flight() as flight, self.notes.watch(flight) as watch:
                as_task = tool is not None and tool.runs_as_task

                def attempt() -> Any:
                    called = self._connection.session.call(
                        remote, arguments, limit, watch.progress, task=as_task, status=watch.status
                    )
                    return self._connection.loop.run(called, timeout=limit + 5.0, held=flight.running)

                was_open = self._connection.alive
                try:
                    return attempt()
                except McpServerError as error:
                    if not self._connection.retries(tool, error, flight.running, was_open):
                        raise
                    self._again(remote, error)
                    return attempt()
        except (McpServerError, McpToolError) as error:  # a server may quote its token back
            if self._refresh.vanished(remote, error):  # the server dropped the tool since it was listed
                raise McpServerError(self._refresh.gone(remote) or "") from None
            raise type(error)(self._connection.redact(str(error))) from None

    def _again(self, remote: str, error: McpServerError) -> None:
        """Reconnect before retrying an idempotent call.

        Raises:
            McpServerError: Reconnecting failed; the message holds both errors.
        """
        try:
            self.reconnect()
        except McpServerError as failed:
            raise McpServerError(
                f"{error}\nTrying {remote} again on a new session failed: {str(failed).splitlines()[0]}"
            ) from None

    # --- the server's resources, prompts and completions (`ServerResources`) ----------------------

    def resources(self) -> list[Any]:
        """The server's resources (the SDK's ``Resource`` values); [] when it has none."""
        return self._resources.resources()

    def resource_templates(self) -> list[Any]:
        """The server's resource templates (the SDK's ``ResourceTemplate`` values); fill one with `read`."""
        return self._resources.resource_templates()

    def read(self, uri: str, /, **values: str) -> Any:
        """A resource's content as a Python value: ``str``, parsed JSON, ``bytes`` or `McpImage`
        (a list of them for several contents).

        Args:
            uri: The resource's URI, or a resource template (``notes://{name}``) to fill.
            values: The template's values, e.g. ``name="groceries"``.

        Raises:
            ValueError: The values do not fit the template.
            McpServerError: The server refused the read (an unknown URI) or could not be reached.
        """
        return self._resources.read(uri, **values)

    def owns(self, uri: str) -> bool:
        """Whether ``uri`` is this server's (listed, from a template, or linked by a result)."""
        return self._resources.owns(uri)

    def contents(self, uri: str, /, **values: str) -> list[Any]:
        """A read's contents as the SDK gives them; arguments and errors as for `read`."""
        return self._resources.contents(uri, **values)

    def prompts(self) -> list[Any]:
        """The server's prompts (the SDK's ``Prompt`` values)."""
        return self._resources.prompts()

    def prompt(self, name: str, /, **arguments: Any) -> list[dict[str, str]]:
        """A prompt's messages as chat messages, their text escaped like tool results.

        Args:
            name: The prompt's name.
            arguments: The prompt's arguments.

        Raises:
            ValueError: No such prompt, or an argument is missing or unknown.
            McpServerError: The server refused or could not be reached.
        """
        return self._resources.prompt(name, **arguments)

    def complete(
        self,
        argument: str,
        value: str = "",
        *,
        prompt: str | None = None,
        template: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> list[str]:
        """The server's completions of an argument of a prompt or a resource template.

        Args:
            argument: The argument's name.
            value: What is typed so far.
            prompt: The prompt's name; give this or ``template``.
            template: The resource template (``notes://note/{name}``).
            context: Arguments already chosen, for servers that complete one from the others.

        Returns:
            The suggested values; [] when the server offers no completions.
        """
        return self._resources.complete(argument, value, prompt=prompt, template=template, context=context)

    def instructions_block(self) -> str:
        """The server's instructions as a delimited, escaped block for a system prompt ("" if none)."""
        return instructions_block(self.name, self.instructions) if self.instructions else ""

    # --- the tools listed again (`ToolRefresh`) and a new session -------------------------------

    @property
    def stale(self) -> bool:
        """Whether the server said its tools changed since they were last listed."""
        return self._connection.stale

    @property
    def announces_changes(self) -> bool:
        """Whether the server announces changes to its tools (``tools.listChanged``)."""
        return self._connection.session.announces_tool_changes

    def tools_changed(self) -> None:
        """Take note that the server's tools changed (the session calls it, on the background loop)."""
        self._connection.tools_changed()

    def refresh(self) -> ToolChanges:
        """List the server's tools again and offer what it has now, with the box's options.

        Returns:
            What changed (false when nothing did).

        Raises:
            McpServerError: The box is closed, the server went away, or it did not list its tools in time.
        """
        listing, changes = self._refresh.relist(
            dict(self._tools), dict(self.skipped), self._keys, self._built
        )
        self._tools, self.skipped, self.left_out, self._keys = listing
        return changes

    def reconnect(self) -> ToolChanges:
        """Open a new session (restarting a stdio server) and list the tools again.

        Returns:
            What changed in the tools (false when nothing did).

        Raises:
            McpServerError: The server could not be reached; the box keeps its tools, stopped.
        """
        self._connection.reconnect()
        self.instructions = self._connection.session.instructions
        return self.refresh()

    # --- where the box's tools are looked at: a stale box is refreshed first ---------------------

    def __iter__(self) -> Iterator[Tool]:
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return super().__iter__()

    def __len__(self) -> int:
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return super().__len__()

    def __contains__(self, name: object) -> bool:
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return super().__contains__(name)

    def __getitem__(self, name: str) -> Tool:
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return super().__getitem__(name)

    def get(self, name: str, default: Tool | None = None) -> Tool | None:
        """The tool called ``name``, or ``default`` (a stale box is refreshed first)."""
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return super().get(name, default)

    @property
    def names(self) -> list[str]:
        """The tool names, in order (a stale box is refreshed first)."""
        self._refresh.refresh_if_stale(self.refresh)
        self._wake()
        return list(self._tools)

    # --- a recorded box: its tools from the cell's cassette -------------------------------------

    def use_tape(self, tape: Any) -> None:
        """Take a ``record=True`` box's tools from a cassette, or record them in it.

        Args:
            tape: The cell's cassette model's `ToolTape` (``model.tool_tape``), or None to do nothing.

        Raises:
            CassetteError: In replay only, the cassette has no listing of this box.
            McpServerError: The server had to be started and could not be.
        """
        if not self.record or tape is None:
            return
        key = (tape.cassette, tape.mode)
        if self._tape_key is not None and self._tape_key[0] is key[0] and self._tape_key[1] == key[1]:
            return
        listing = tape.listing(self.name)
        if listing is not None:
            if self._connection.alive:  # replayed now: the server is not needed
                self.close()
            self._waiting = False
            self.tape_path = str(tape.cassette.path)
            self._tools, self.instructions = replayed_tools(self, listing), listing.instructions
            self.skipped, self.left_out = dict(listing.skipped), list(listing.left_out)
            self.replayed_from = str(tape.cassette.path)
        else:
            if not self._connection.alive:
                self._start()
            tape.record_listing(
                self.name, self._tools.values(), self.instructions, self.skipped, self.left_out
            )
        self._tape_key, self.tape_path = key, str(tape.cassette.path)

    @property
    def history(self) -> list[Asked]:
        """What the server asked during calls (input, the model, roots), and what became of it."""
        return list(self.asks.history)

    @property
    def log(self) -> tuple[LogEntry, ...]:
        """The server's recent log messages at or above ``log_level``, oldest first."""
        return self.notes.log

    def close(self) -> None:
        """End the session (a stdio server is stopped) and delete its stderr log."""
        self._connection.close()

    def __enter__(self) -> McpToolbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._waiting:  # shown, a recorded box does not start its server
            return f"McpToolbox({self.name!r}, {self.transport}: {self.target!r}, recorded, not started)"
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
        raise SettingsError(
            f"McpToolbox {name!r}: prefix must be True, False or a string of letters, digits, '_', '.'"
            f" and '-' starting with a letter or '_' (at most 32), got {prefix!r}"
        )
    return prefix
