"""MCP server configuration files, as Claude Desktop, Cursor and VS Code write them.

`parse_mcp_config` turns a file's text and an environment into an `McpConfig` of checked
`ServerSpec`s, with ``${VAR}`` expanded; it starts nothing and reads no file (`mcp.load` does).
A server with a problem is left out with the reason; a problem with the whole file raises
`McpConfigError`. No message quotes a value that may be secret. Also the masking helpers the
client shares: `env_credentials`, `header_secrets`, `redact`, `masked`. The format a person
reads is in docs/guides/mcp.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .._redact import redact as hidden  # this module's `redact` keeps only secrets long enough
from ..errors import MeowgentError
from ..recording import Mask

__all__ = [
    "MAX_CONFIG_CHARS",
    "McpConfig",
    "McpConfigError",
    "ServerSpec",
    "env_credentials",
    "header_secrets",
    "masked",
    "parse_mcp_config",
    "redact",
    "secret_mask",
    "shown_name",
]

MAX_CONFIG_CHARS = 1_000_000
"""The largest configuration file read (real ones are a few kilobytes)."""

SERVER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,31}")
"""What a server may be called: its name starts its tools' names (``NAME_TOOL``)."""

_KEYS = {"command", "args", "env", "cwd", "url", "headers", "type", "disabled"}
_STDIO_ONLY = ("args", "env", "cwd")
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_REFERENCE = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
_FORMATS = "'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code)"


class McpConfigError(MeowgentError):
    """The configuration file as a whole cannot be read (not JSON, not the format, too large)."""


class _ServerProblem(Exception):
    """One server's entry cannot be used; the message says why (and never quotes a value)."""


@dataclass(frozen=True, repr=False)
class ServerSpec:
    """One server from a configuration file, checked and with its variables expanded."""

    name: str
    command: tuple[str, ...] | None = None
    """The stdio server's program and arguments; None for an HTTP server."""
    url: str | None = None
    """The streamable-HTTP endpoint; None for a stdio server."""
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()
    """Every value taken from the environment, plus the env and header values: never shown."""

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def toolbox_arguments(self) -> dict[str, Any]:
        """The keyword arguments of `McpToolbox` that make this server's box."""
        if self.command is not None:
            return {
                "command": list(self.command),
                "env": dict(self.env),
                "cwd": self.cwd,
                "secrets": self.secrets,
            }
        return {"url": self.url, "headers": dict(self.headers), "secrets": self.secrets}

    def __repr__(self) -> str:
        target = " ".join(self.command) if self.command is not None else self.url or ""
        parts = [repr(self.name), f"{self.transport}: {redact(target, self.secrets)!r}"]
        for label, values in (("env", self.env), ("headers", self.headers)):
            if values:
                parts.append(f"{label}={masked(values)}")
        if self.cwd is not None:
            parts.append(f"cwd={redact(self.cwd, self.secrets)!r}")
        return f"ServerSpec({', '.join(parts)})"


@dataclass(frozen=True)
class McpConfig:
    """What a configuration file holds: the usable servers, and what was left out and why."""

    servers: dict[str, ServerSpec]
    """The usable servers, in the file's order."""
    failed: dict[str, str]
    """Servers left out because of a problem, and the problem (one line each)."""
    disabled: tuple[str, ...] = ()
    """Servers marked ``"disabled": true``."""
    notes: tuple[str, ...] = ()
    """Things ignored that a person may want to know about (unknown keys)."""


def parse_mcp_config(
    text: str, environ: Mapping[str, str], source: str = "the MCP configuration"
) -> McpConfig:
    """The servers of a configuration file's text, with ``${VAR}`` expanded from ``environ``.

    Args:
        text: The file's contents (JSON).
        environ: Where ``${VAR}`` are looked up (usually ``os.environ``).
        source: What to call the file in messages (its path).

    Returns:
        The usable servers, those that failed with why, the disabled ones and notes.

    Raises:
        McpConfigError: The text is too large, not JSON, or not an object with ``mcpServers``
            or ``servers`` mapping names to servers.
    """
    if len(text) > MAX_CONFIG_CHARS:
        raise McpConfigError(
            f"{source} is {len(text):,} characters; an MCP configuration is at most {MAX_CONFIG_CHARS:,}."
            " Check that it is the right file."
        )
    try:
        data = json.loads(text, object_pairs_hook=_Object.of)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        detail = f": {error}" if isinstance(error, json.JSONDecodeError) else " (it is nested too deeply)"
        raise McpConfigError(
            f"{source} is not JSON{detail}. Fix the file (comments are not allowed)."
        ) from None
    if not isinstance(data, dict):
        raise McpConfigError(
            f"{source} must be a JSON object with {_FORMATS}, not a JSON {_json_type(data)}."
        )
    _refuse_twice(data, source)
    keys = [key for key in ("mcpServers", "servers") if key in data]
    if len(keys) != 1:
        found = "both" if keys else "neither"
        raise McpConfigError(f"{source} must have {_FORMATS} (it has {found}).")
    entries = data[keys[0]]
    if not isinstance(entries, dict):
        raise McpConfigError(
            f"{source}: {keys[0]!r} must be an object of servers by name, not a {_json_type(entries)}."
        )
    servers: dict[str, ServerSpec] = {}
    failed: dict[str, str] = {}
    disabled: list[str] = []
    notes: list[str] = []
    for name, entry in entries.items():
        try:
            if isinstance(entry, dict) and entry.get("disabled") is True:
                disabled.append(_check_name(name))
                continue
            servers[name] = _server(name, entry, environ, notes)
        except _ServerProblem as problem:
            failed[name] = str(problem)
    return McpConfig(servers, failed, tuple(disabled), tuple(notes))


class _Object(dict):  # type: ignore[type-arg]
    """A JSON object that remembers the keys it was given more than once (JSON keeps the last)."""

    twice: tuple[str, ...] = ()

    @classmethod
    def of(cls, pairs: list[tuple[str, Any]]) -> _Object:
        made = cls(pairs)
        if len(made) != len(pairs):
            keys = [key for key, _ in pairs]
            made.twice = tuple(dict.fromkeys(key for key in keys if keys.count(key) > 1))
        return made


def _refuse_twice(data: dict[str, Any], source: str) -> None:
    """Refuse a key given twice in one object: JSON would keep the last and drop the first unseen."""
    where, twice = _first_twice(data, [])
    if twice is None:
        return
    names = ", ".join(_shown(key) for key in twice)
    if where in (["mcpServers"], ["servers"]):
        raise McpConfigError(
            f"{source}: the server name {names} is given twice in {where[0]!r}; JSON keeps only the last,"
            " so the first would be dropped without a word. Give each server its own name (or remove one)."
        )
    inside = " -> ".join(_shown(part) for part in where) or "the top level"
    raise McpConfigError(
        f"{source}: the key {names} is given twice in one object ({inside}); JSON keeps only the last."
        " Remove one of them."
    )


def _shown(key: str) -> str:
    return repr(key if len(key) <= 40 else key[:40] + "...")


def _first_twice(value: Any, where: list[str]) -> tuple[list[str], tuple[str, ...] | None]:
    """Where the first object with a key given twice is (its path of keys), and those keys."""
    stack: list[tuple[Any, list[str]]] = [(value, where)]
    while stack:  # a loop, not recursion: the file may be nested as deep as json.loads allows
        value, where = stack.pop()
        if isinstance(value, _Object) and value.twice:
            return where, value.twice
        children = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        )
        stack.extend(reversed([(child, [*where, str(key)]) for key, child in children]))
    return [], None


def _server(name: str, entry: Any, environ: Mapping[str, str], notes: list[str]) -> ServerSpec:
    _check_name(name)
    if not isinstance(entry, dict):
        raise _ServerProblem(f"must be an object with 'command' or 'url', not a {_json_type(entry)}")
    unknown = [key for key in entry if key not in _KEYS]
    if unknown:
        shown = ", ".join(repr(key[:40]) for key in unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        notes.append(f"{name}: ignored what this client does not use: {shown}")
    if entry.get("disabled", False) is not False:
        raise _ServerProblem(f"'disabled' must be true or false, not a {_json_type(entry['disabled'])}")
    kind = _kind(entry)
    secrets: set[str] = set()
    expand = _Expander(environ, secrets)
    if kind == "http":
        wrong = [key for key in (*_STDIO_ONLY, "command") if key in entry]
        if wrong:
            raise _ServerProblem(f"{', '.join(wrong)} go with 'command' (a stdio server), not with 'url'")
        url = expand(_string(entry, "url"), "url")
        if not re.match(r"https?://", url):
            raise _ServerProblem("'url' must start with http:// or https://")
        headers = {key: expand(value, f"headers.{key}") for key, value in _strings(entry, "headers").items()}
        secrets.update(headers.values())
        return ServerSpec(name, url=url, headers=headers, secrets=_kept(secrets))
    if "headers" in entry:
        raise _ServerProblem("'headers' go with 'url' (an HTTP server), not with 'command'")
    command = expand(_string(entry, "command"), "command")
    if not command.strip():
        raise _ServerProblem("'command' is empty")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise _ServerProblem(f"'args' must be a list of strings, not a {_json_type(args)}")
    for index, arg in enumerate(args):
        if not isinstance(arg, str):
            raise _ServerProblem(f"'args' must be a list of strings; args[{index}] is a {_json_type(arg)}")
    argv = (command, *(expand(arg, f"args[{index}]") for index, arg in enumerate(args)))
    env = {key: expand(value, f"env.{key}") for key, value in _strings(entry, "env").items()}
    secrets.update(env.values())
    cwd = expand(_string(entry, "cwd"), "cwd") if entry.get("cwd") is not None else None
    return ServerSpec(name, command=argv, env=env, cwd=cwd, secrets=_kept(secrets))


def _check_name(name: str) -> str:
    if not SERVER_NAME.fullmatch(name):
        raise _ServerProblem(
            "is not a usable server name; use letters, digits, '_' and '-' (at most 32, starting with"
            " a letter or '_'), and rename it in the file"
        )
    return name


def _kind(entry: dict[str, Any]) -> str:
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise _ServerProblem("has both 'command' (stdio) and 'url' (HTTP); keep one")
    if not (has_command or has_url):
        raise _ServerProblem("has neither 'command' (a stdio server) nor 'url' (an HTTP server)")
    kind = "stdio" if has_command else "http"
    declared = entry.get("type")
    if declared is None:
        return kind
    if declared == "sse":
        raise _ServerProblem(
            "uses the SSE transport, which this client does not speak; give the server's streamable-HTTP"
            ' endpoint (often ending in /mcp) with "type": "http"'
        )
    if not isinstance(declared, str) or declared not in _TYPES:
        shown = repr(declared[:20]) if isinstance(declared, str) else f"a {_json_type(declared)}"
        raise _ServerProblem(f'\'type\' must be "stdio" or "http", not {shown}')
    if _TYPES[declared] != kind:
        raise _ServerProblem(
            f"'type' is {declared!r} but the server has {'command' if has_command else 'url'!r}"
        )
    return kind


def _string(entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str):
        raise _ServerProblem(f"{key!r} must be a string, not a {_json_type(value)}")
    return value


def _strings(entry: dict[str, Any], key: str) -> dict[str, str]:
    """An object of string values (``env``, ``headers``); a wrong value is named by its key only."""
    values = entry.get(key, {})
    if not isinstance(values, dict):
        raise _ServerProblem(f"{key!r} must be an object of strings, not a {_json_type(values)}")
    for name, value in values.items():
        if not isinstance(value, str):
            raise _ServerProblem(f"{key}.{name[:40]} must be a string, not a {_json_type(value)}")
        if key == "headers" and not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}", name):
            raise _ServerProblem(f"headers: {name[:40]!r} is not a usable HTTP header name")
        if key == "env" and (not name or "=" in name or "\0" in name):
            raise _ServerProblem(f"env: {name[:40]!r} is not a usable environment variable name")
    return values


class _Expander:
    """Expands ``${VAR}``, ``${env:VAR}`` and ``${VAR:-default}``; remembers what came from ``environ``."""

    def __init__(self, environ: Mapping[str, str], secrets: set[str]):
        self.environ, self.secrets = environ, secrets

    def __call__(self, text: str, where: str) -> str:
        return _VARIABLE.sub(lambda match: self._value(match.group(1), where), text)

    def _value(self, reference: str, where: str) -> str:
        parsed = _REFERENCE.fullmatch(reference)
        if parsed is None:
            raise _ServerProblem(
                f"cannot expand ${{{reference[:40]}}} in {where}; use ${{VAR}} or ${{VAR:-default}}"
                " with an environment variable (VS Code's ${input:...} prompts are not supported)"
            )
        variable, default = parsed.groups()
        value = self.environ.get(variable)
        if value is not None and (value or default is None):
            self.secrets.add(value)
            return value
        if default is not None:
            return default
        raise _ServerProblem(
            f"${{{variable}}} in {where} is not set in the environment; set it (in a notebook:"
            f" %env {variable}=...) or give a default, ${{{variable}:-default}}"
        )


def _kept(secrets: set[str]) -> frozenset[str]:
    return frozenset(value for value in secrets if len(value) >= SECRET_MIN)


SECRET_MIN = 4
"""Shorter values are not masked: masking every "1" of an env ``DEBUG=1`` would garble messages."""
PART_MIN = 8
"""The least length of a credential inside a header value to be masked on its own: shorter ones
are placeholders (``Bearer none``) whose masking would garble every "none" a server says."""

_AUTH_HEADERS = {"authorization", "proxy-authorization"}
_AUTH_SCHEMES = {"bearer", "basic", "token"}  # recognized in any header's value
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S+)\s*")


_CREDENTIAL_NAME = re.compile(
    r"(?i)(token|secret|passw|pwd|api_?key|access_?key|private_?key|auth|credential|cookie|session|_key$|^key$)"
)


def env_credentials(env: Mapping[str, str]) -> set[str]:
    """The values of ``env`` whose names say they are credentials (``GITHUB_TOKEN``, ``API_KEY``,
    ...), of `PART_MIN` characters or more; other values are settings a server may report."""
    return {value for name, value in env.items() if _CREDENTIAL_NAME.search(name) and len(value) >= PART_MIN}


def header_secrets(headers: Mapping[str, str]) -> set[str]:
    """The secrets in HTTP headers: each value, and the token inside a ``SCHEME TOKEN`` value
    (with a Basic token's decoded ``user:password`` and password) of `PART_MIN` characters or more."""
    found: set[str] = set()
    for name, value in headers.items():
        found.add(value)
        written = _SCHEME.fullmatch(value)
        if written is None:
            continue
        scheme, token = written.group(1).lower(), written.group(2)
        if name.lower() not in _AUTH_HEADERS and scheme not in _AUTH_SCHEMES:
            continue
        parts = [token]
        if scheme == "basic":
            try:
                pair = base64.b64decode(token, validate=True).decode("utf-8")
            except (binascii.Error, ValueError):  # not base64 of UTF-8: the token itself is the secret
                pair = ""
            if ":" in pair:
                parts += [pair, pair.partition(":")[2]]
        found.update(part for part in parts if len(part) >= PART_MIN)
    return found


def redact(text: str, secrets: frozenset[str] | set[str]) -> str:
    """``text`` with each of ``secrets`` (of at least `SECRET_MIN` characters) replaced by ``***``,
    in every form `meowgent_nb._redact` finds (percent-, JSON-, HTML- or base64-encoded)."""
    return hidden(text, (secret for secret in secrets if len(secret) >= SECRET_MIN))


def secret_mask(secrets: Iterable[str]) -> Mask:
    """The `Mask` of ``secrets`` (those of at least `SECRET_MIN` characters)."""
    return _mask_of(frozenset(secret for secret in secrets if len(secret) >= SECRET_MIN))


@lru_cache(maxsize=64)
def _mask_of(secrets: frozenset[str]) -> Mask:  # made once: a box masks each message from its server
    return Mask(secrets=secrets)


def shown_name(name: str) -> str:
    """A server's name for a message: as it is when usable, else quoted and cut to 40 characters."""
    if SERVER_NAME.fullmatch(name):
        return name
    return repr(name[:40] + ("..." if len(name) > 40 else ""))


def masked(values: Mapping[str, str]) -> str:
    """``{'TOKEN': '***'}``: the names of env variables or headers, never their values."""
    return "{" + ", ".join(f"{name!r}: '***'" for name in values) + "}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", int: "number", float: "number"}.get(
        type(value), "value"
    )
