"""`load_mcp_config`: start every server of a Claude Desktop / Cursor / VS Code configuration file.

Each usable server of `config.parse_mcp_config` becomes an `McpToolbox`, a few starting at once;
`LoadedServers` holds them with what did not start and why.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Mapping
from typing import Any

from .client.toolbox import McpServerError, McpToolbox
from .config import MAX_CONFIG_CHARS, McpConfigError, parse_mcp_config, shown_name

__all__ = ["LoadedServers", "load_mcp_config"]

_STARTING = 8  # servers started at the same time


class LoadedServers(dict[str, McpToolbox]):
    """The toolboxes a configuration file started (a dict of `McpToolbox` by server name), and
    what did not start and why. Close them with `close`."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source
        """The file's path."""
        self.failed: dict[str, str] = {}
        """Servers that were left out or did not start, and why (never quoting a secret)."""
        self.disabled: tuple[str, ...] = ()
        """Servers the file marks ``"disabled": true``."""
        self.notes: tuple[str, ...] = ()
        """What was ignored (keys this client does not use)."""

    def summary(self) -> str:
        """Which servers loaded, which failed and why, which are disabled, what was ignored."""
        loaded = ", ".join(self) or "none"
        lines = [f"Loaded from {self.source}: {loaded}"]
        lines += [
            f"Not loaded: {shown_name(name)}: {why}".replace("\n", "\n    ")
            for name, why in self.failed.items()
        ]
        if self.disabled:
            lines.append(f"Disabled in the file: {', '.join(self.disabled)}")
        lines += [f"Note: {note}" for note in self.notes]
        return "\n".join(lines)

    def close(self) -> None:
        """Close every box."""
        for box in self.values():
            box.close()

    def __repr__(self) -> str:
        return f"LoadedServers({self.source!r}, loaded={list(self)!r}, failed={list(self.failed)!r})"


def load_mcp_config(
    path: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    skip: Mapping[str, str] | None = None,
    **options: Any,
) -> LoadedServers:
    """Start the servers of an ``mcpServers`` (or VS Code ``servers``) JSON file.

    Example::

        servers = load_mcp_config("claude_desktop_config.json", call_timeout=60)
        print(servers.summary())
        agent = Agent(model, tools=[*servers.values()])

    Args:
        path: The file (Claude Desktop's ``claude_desktop_config.json``, Cursor's
            ``.cursor/mcp.json``, VS Code's ``.vscode/mcp.json``, ...).
        environ: Where ``${VAR}`` are looked up; default ``os.environ``.
        skip: Servers not to start, with the reason to report.
        **options: Given to every `McpToolbox` (``call_timeout``, ``prefix=False``, ...).

    Returns:
        The started boxes by name, with ``failed``, ``disabled``, ``notes`` and ``summary()``.

    Raises:
        McpConfigError: The file cannot be read or is not such a file; no server is started.
    """
    source = os.fspath(path)
    try:
        size = os.path.getsize(source)
        if size > 4 * MAX_CONFIG_CHARS:  # four bytes a character at most: surely too large, so not read
            raise McpConfigError(
                f"{source} is {size:,} bytes; an MCP configuration is at most {MAX_CONFIG_CHARS:,} characters."
                " Check that it is the right file."
            )
        with open(source, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise McpConfigError(
            f"cannot read the MCP configuration {source}: {error.strerror or error}."
        ) from None
    except UnicodeDecodeError:
        raise McpConfigError(f"{source} is not UTF-8 text; is it the right file?") from None
    config = parse_mcp_config(text, os.environ if environ is None else environ, source)
    loaded = LoadedServers(source)
    loaded.failed.update(config.failed)
    loaded.disabled, loaded.notes = config.disabled, config.notes
    wanted = {name: spec for name, spec in config.servers.items() if not (skip and name in skip)}
    loaded.failed.update({name: skip[name] for name in config.servers if skip and name in skip})
    if not wanted:
        return loaded
    # All at once: each start mostly waits (npx, uvx, a Python import), and each box's calls go to
    # the one background loop, which any thread may hand work to.
    pool = concurrent.futures.ThreadPoolExecutor(min(_STARTING, len(wanted)), "meowgent-mcp-start")
    starts = {
        name: pool.submit(McpToolbox, name, **spec.toolbox_arguments(), **options)
        for name, spec in wanted.items()
    }
    try:
        for name, start in starts.items():  # in the file's order
            try:
                loaded[name] = start.result()
            except (McpServerError, ValueError) as error:
                loaded.failed[name] = str(error)
    except BaseException:  # an interrupt: no server started here may be left running
        for start in starts.values():
            start.cancel()
        for start in starts.values():
            if not start.cancelled() and start.exception() is None:
                start.result().close()
        raise
    finally:
        pool.shutdown(wait=False)
    return loaded
