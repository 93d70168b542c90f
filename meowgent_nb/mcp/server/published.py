"""What a notebook publishes besides tools: ``@resource`` (`Resource`) and ``@prompt`` (`Prompt`).

Decorated like tools, and still plain functions when called::

    @resource("notes://{name}", description="A note by its name.")
    def note(name: str) -> str:
        return NOTES[name]

A URI with ``{placeholders}`` is a template whose function takes exactly those names; a prompt's
arguments are its function's parameters. What they may return, and how arguments complete, is
in docs/guides/mcp.md. Nothing here imports the MCP SDK until a `ResourceContent` is sent.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast
from urllib.parse import unquote

from ...errors import MeowgentError, ToolDefinitionError
from ..content.served import ResourceContent, has_media

__all__ = ["Prompt", "Resource", "ResourceContent", "UnsafeSegment", "prompt", "resource", "segment_problem"]

Completions = Mapping[str, "Iterable[str] | Callable[[str], Iterable[str]]"]
"""``complete=``: an argument's completions, as values or a function of what is typed."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


class UnsafeSegment(MeowgentError, ValueError):
    """A resource template's placeholder was given a value that is not one plain path segment."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STILL_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")


def segment_problem(value: str) -> str | None:
    """Why ``value`` (already percent-decoded) is not one plain path segment, or None when it is.

    Cases are pinned in tests/mcp/test_mcp_resource_segments.py.
    """
    # Also as NFKC folds it (a function that normalises would turn "．．／" into "../").
    folded = unicodedata.normalize("NFKC", value)
    if value in (".", "..") or folded in (".", ".."):
        return "names a folder (. and .. are refused); give a name in it"
    separator = next((c for c in "/\\" if c in value), None) or next((c for c in "/\\" if c in folded), None)
    if separator is not None:
        return f"contains the path separator {separator!r}; give one name without separators"
    if re.match(r"[A-Za-z]:", value):
        return "is an absolute path (a drive letter); give one name"
    control = _CONTROL.search(value)
    if control is not None:
        return f"contains the control character U+{ord(control.group()):04X}; give printable text"
    encoded = _STILL_ENCODED.search(value)
    if encoded is not None:
        return f"is still percent-encoded after decoding ({encoded.group()!r}: encoded twice); encode it once"
    return None


class Resource:
    """A notebook function published as an MCP resource (or resource template); see `resource`."""

    def __init__(
        self,
        function: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        complete: Completions | None = None,
    ):
        target = getattr(function, "__qualname__", repr(function))
        problems: list[str] = []
        if not isinstance(uri, str) or not _URI.fullmatch(uri):
            problems.append(f"the URI {uri!r} is not a URI (scheme://...)")
            uri = str(uri)
        self.placeholders = tuple(_PLACEHOLDER.findall(uri))
        parameters = list(inspect.signature(function).parameters) if callable(function) else []
        if sorted(parameters) != sorted(self.placeholders):
            problems.append(
                f"its parameters ({', '.join(parameters) or 'none'}) must be the URI's placeholders"
                f" ({', '.join(self.placeholders) or 'none'})"
            )
        if len(set(self.placeholders)) != len(self.placeholders):
            problems.append("a placeholder appears twice in the URI")
        self.complete = _choices(function, list(self.placeholders), complete, problems)
        """Each placeholder's completions: a list of values, or a function of what is typed."""
        if problems:
            raise ToolDefinitionError(target, problems)
        self.function, self.uri = function, uri
        self.name = name or getattr(function, "__name__", "resource")
        self.description = description if description is not None else _first_line(function.__doc__)
        self.mime_type = mime_type
        # Matched against the decoded URI, so an encoded "/" (%2F) is a "/" when it is matched;
        # a placeholder takes any text here, and `match` refuses what is not one plain segment.
        self._pattern = re.compile(
            "".join(
                f"(?P<{part}>.+?)" if i % 2 else re.escape(unquote(part))
                for i, part in enumerate(_PLACEHOLDER.split(uri))
            ),
            re.DOTALL,
        )
        functools.update_wrapper(self, function, updated=())

    @property
    def template(self) -> bool:
        """Whether the URI has placeholders (one resource per value)."""
        return bool(self.placeholders)

    def match(self, uri: str) -> dict[str, str] | None:
        """The placeholders' values in ``uri`` (percent-decoded once) if it is this resource's, else None.

        Raises:
            UnsafeSegment: ``uri`` has this template's shape, but a value is not one plain
                segment (see `segment_problem`).
        """
        found = self._pattern.fullmatch(unquote(uri))
        if found is None:
            return None
        values = found.groupdict()
        for placeholder, value in values.items():
            problem = segment_problem(value)
            if problem is not None:
                raise UnsafeSegment(
                    f"{uri[:200]}: the value of {{{placeholder}}}, {value[:100]!r}, {problem}"
                )
        return values

    def read(self, uri: str) -> tuple[str | bytes, str]:
        """The content at ``uri`` (str or bytes) and its MIME type.

        Raises:
            KeyError: ``uri`` is not this resource's.
            UnsafeSegment: A value in ``uri`` is not one plain segment (see `match`).
        """
        values = self.match(uri)
        if values is None:
            raise KeyError(uri)
        value = self.function(**values)
        if isinstance(value, (bytes, bytearray)):
            return bytes(value), self.mime_type or "application/octet-stream"
        if isinstance(value, str):
            return value, self.mime_type or "text/plain"
        return json.dumps(value, ensure_ascii=False, default=str), self.mime_type or "application/json"

    def embed(self, **values: str) -> ResourceContent:
        """This resource's content now (a template's with its placeholders' ``values``), to embed
        in a tool's result or a prompt message."""
        uri = _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.uri) if self.template else self.uri
        content, mime = self.read(uri)
        return ResourceContent(uri, content, mime)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Resource({self.uri!r}, name={self.name!r})"


class Prompt:
    """A notebook function published as an MCP prompt; see `prompt`."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        complete: Completions | None = None,
    ):
        target = getattr(function, "__qualname__", repr(function))
        name = name or getattr(function, "__name__", None)
        problems = []
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            problems.append(f"the name {name!r} is not a valid prompt name (letters, digits, '_', '-', '.')")
        signature = inspect.signature(function)
        odd = [p.name for p in signature.parameters.values() if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if odd:
            problems.append(f"*args / **kwargs cannot be prompt arguments: {', '.join(odd)}")
        self.complete = _choices(function, list(signature.parameters), complete, problems)
        """Each argument's completions: a list of values, or a function of what is typed."""
        if problems:
            raise ToolDefinitionError(target, problems)
        self.function = function
        self.name: str = cast(str, name)  # a name that is not a str is one of the problems above
        self.description = description if description is not None else _first_line(function.__doc__)
        self.arguments = tuple(
            (p.name, p.default is inspect.Parameter.empty) for p in signature.parameters.values()
        )
        """(name, required) of each argument, in order."""
        functools.update_wrapper(self, function, updated=())

    def messages(self, arguments: dict[str, str]) -> list[tuple[str, Any]]:
        """The prompt's (role, content) messages for ``arguments``: text, or an image, audio or a
        `ResourceContent` (see `meowgent_nb.mcp.content.served`).

        Raises:
            ValueError: A required argument is missing or an unknown one is given, or the
                function returned something that is not messages.
        """
        known = [name for name, _ in self.arguments]
        unknown = [name for name in arguments if name not in known]
        missing = [name for name, required in self.arguments if required and name not in arguments]
        if unknown or missing:
            parts = [f"unknown argument(s): {', '.join(unknown)}"] if unknown else []
            parts += [f"missing argument(s): {', '.join(missing)}"] if missing else []
            raise ValueError(
                f"prompt {self.name!r}: {'; '.join(parts)}; it takes: {', '.join(known) or 'none'}"
            )
        value = self.function(**arguments)
        if isinstance(value, str):
            return [("user", value)]
        if isinstance(value, list) and all(
            isinstance(m, dict)
            and m.get("role") in ("user", "assistant")
            and _message_content(m.get("content"))
            for m in value
        ):
            return [(m["role"], m["content"]) for m in value]
        raise ValueError(
            f"prompt {self.name!r} returned {type(value).__name__}; return a str or a list of"
            ' {"role": "user" | "assistant", "content": str, an image, audio or a ResourceContent}'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Prompt({self.name!r}, arguments={[n for n, _ in self.arguments]!r})"


def resource(
    uri: str,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    complete: Completions | None = None,
) -> Callable[[Callable[..., Any]], Resource]:
    """Publish a function as the resource at ``uri`` (a template where it has ``{placeholders}``).

    Args:
        uri: The resource's URI or URI template.
        complete: Each placeholder's completions: values, or a function of what is typed.

    Raises:
        ToolDefinitionError: The URI is not one, or the function's parameters are not exactly
            its placeholders.
    """
    return lambda function: Resource(
        function, uri, name=name, description=description, mime_type=mime_type, complete=complete
    )


def prompt(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    complete: Completions | None = None,
) -> Any:
    """Publish a function as a prompt (``@prompt`` or ``@prompt(name=..., description=...)``);
    its parameters are the prompt's arguments, completed as `resource`'s ``complete`` says."""
    if function is None:
        return lambda function: Prompt(function, name=name, description=description, complete=complete)
    return Prompt(function, name=name, description=description, complete=complete)


_COMPLETIONS = 100  # values one completion answers with (MCP's most)


def completions(choices: Mapping[str, Any], argument: str, typed: str) -> tuple[list[str], int]:
    """The values of ``argument`` that begin with ``typed`` (a function's values as it gives them),
    at most 100, and how many there are in all."""
    source = choices.get(argument)
    if source is None:
        return [], 0
    given = cast("Iterable[Any]", source(typed) if callable(source) else source)  # a function's: values
    values = [str(v) for v in given]
    if not callable(source):
        values = [v for v in values if v.lower().startswith(typed.lower())]
    return values[:_COMPLETIONS], len(values)


def _choices(
    function: Any, names: list[str], given: Completions | None, problems: list[str]
) -> dict[str, Any]:
    """Each argument's completions: ``given``'s, else the values of its ``Literal`` / ``Enum`` type."""
    import enum
    import typing

    choices: dict[str, Any] = {}
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve completes nothing
        hints = {}
    for name in names:
        hint = hints.get(name)
        if typing.get_origin(hint) is typing.Literal:
            choices[name] = [str(v) for v in typing.get_args(hint)]
        elif isinstance(hint, type) and issubclass(hint, enum.Enum):
            choices[name] = [str(member.value) for member in hint]
    for name, source in dict(given or {}).items():
        if name not in names:
            problems.append(
                f"complete= names {name!r}, which is not one of its arguments ({', '.join(names) or 'none'})"
            )
        elif not callable(source) and (isinstance(source, (str, bytes)) or not isinstance(source, Iterable)):
            problems.append(
                f"complete={{{name!r}: ...}} must be a list of values or a function of what is typed"
            )
        else:
            choices[name] = source if callable(source) else list(source)
    return choices


def _message_content(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return not isinstance(content, (list, tuple)) and has_media(content)


def _first_line(doc: str | None) -> str | None:
    text = inspect.cleandoc(doc or "").split("\n\n", 1)[0].strip()
    return " ".join(text.split()) or None
