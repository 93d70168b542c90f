"""A tool's context: what a running tool may tell, or ask, whoever called it.

A tool takes it as a parameter typed `ToolContext`; that parameter is left out of the tool's
schema and filled in when the tool runs. `ToolContext.progress` and `ToolContext.log` report,
`ToolContext.ask` puts a form to a person and `ToolContext.sample` asks a model. Who called
decides where each goes: the MCP client of ``%tools serve``, the call's card in the notebook, or,
anywhere else, nowhere (progress dropped, logs to `logging`, `ask` declined, `sample` raising
`ToolContextError`); docs/guides/mcp.md has the table. The methods block the tool's thread, so an
``async def`` tool cannot use `ask` or `sample`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..errors import MeowgentError

__all__ = [
    "LEVELS",
    "MAX_LOG_CHARS",
    "Answer",
    "ToolContext",
    "ToolContextError",
    "context_backend",
    "is_context_type",
    "log_to_python",
]

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""Log levels (MCP's, those of syslog), least severe first."""
MAX_LOG_CHARS = 2000
"""The most characters of one log message that reach Python's `logging` (and so, where nothing
configured it, the cell's stderr); the rest is counted, not shown."""


class ToolContextError(MeowgentError, RuntimeError):
    """What the tool asked of its caller cannot be done (no model, the client cannot, it refused)."""


@dataclass(frozen=True)
class Answer:
    """The answer to `ToolContext.ask`: ``accept`` with the form's values, ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    """The values by field name when accepted, else None."""
    reason: str = ""
    """Why it was declined when no one could answer ("no person to answer (headless run)")."""

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class ContextBackend(Protocol):
    """Where a context's messages and questions go (the served request, the notebook, nowhere)."""

    def progress(self, done: float, total: float | None, message: str | None) -> None: ...

    def log(self, level: str, message: str) -> None: ...

    def ask(self, message: str, schema: dict[str, Any]) -> Answer: ...

    def sample(self, messages: Sequence[tuple[str, str]], system: str | None, max_tokens: int) -> str: ...


class _Nowhere:
    """No caller to tell or ask: progress is dropped, logs go to `logging`, nothing can be asked."""

    def __init__(self, tool: str):
        self.tool = tool

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        pass

    def log(self, level: str, message: str) -> None:
        log_to_python(self.tool, level, message)

    def ask(self, message: str, schema: dict[str, Any]) -> Answer:
        return Answer("decline", None, "no one to ask: the tool runs outside an agent and a served call")

    def sample(self, messages: Sequence[tuple[str, str]], system: str | None, max_tokens: int) -> str:
        raise ToolContextError(
            f"the tool {self.tool!r} asked to use a model, but it runs outside an agent and a served call:"
            " call it from %%agent or through %tools serve"
        )


_PY_LEVELS: dict[str, int] = dict(zip(LEVELS, (10, 20, 25, 30, 40, 50, 50, 50)))


def log_to_python(tool: str, level: str, message: Any) -> None:
    """A tool's log message to Python's `logging`, logger ``meowgent_nb.tool.TOOL``: its first
    `MAX_LOG_CHARS` characters (a message that is no string as ``str`` writes it), then how many
    more there were. Where nothing configured `logging`, its last resort writes a warning and above
    to stderr, the cell's in a notebook."""
    text = message if isinstance(message, str) else str(message)
    if len(text) > MAX_LOG_CHARS:
        text = f"{text[:MAX_LOG_CHARS]}... ({len(text) - MAX_LOG_CHARS:,} more characters)"
    logging.getLogger(f"meowgent_nb.tool.{tool}").log(_PY_LEVELS[level], text)


_BACKEND: ContextVar[Callable[[str], ContextBackend | None] | None] = ContextVar(
    "meowgent_tool_context", default=None
)
_default: list[Callable[[str], ContextBackend | None]] = []


@contextlib.contextmanager
def context_backend(factory: Callable[[str], ContextBackend | None]) -> Iterator[None]:
    """Around a call (in its task, before its thread starts): contexts made meanwhile use
    ``factory(tool_name)`` (`ToolServer` sets the served request's)."""
    token = _BACKEND.set(factory)
    try:
        yield
    finally:
        _BACKEND.reset(token)


def set_default_backend(factory: Callable[[str], ContextBackend | None] | None) -> None:
    """The backend where no `context_backend` is set (the notebook's, while the extension is
    loaded); ``factory`` may return None (no agent call runs), and then the context goes nowhere."""
    _default[:] = [factory] if factory is not None else []


class ToolContext:
    """What a running tool may tell or ask its caller; see the module docstring.

    Made by the tool's run; ``ToolContext()`` (for a direct call in Python) goes nowhere.
    """

    def __init__(self, backend: ContextBackend | None = None, *, tool: str = "tool"):
        self.tool = tool
        self._backend = backend if backend is not None else _Nowhere(tool)

    @classmethod
    def current(cls, tool: str) -> ToolContext:
        """The context of a call of ``tool`` starting now (in the call's thread)."""
        factory = _BACKEND.get() or (_default[0] if _default else None)
        return cls(factory(tool) if factory is not None else None, tool=tool)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report how far the call is: ``done`` of ``total`` (None: unknown), with an optional message."""
        for name, value in (("done", done), ("total", total)):
            if value is None and name == "total":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise TypeError(
                    f"ctx.progress: {name} must be a finite number{' or None' if name == 'total' else ''}, got {value!r}"
                )
        self._backend.progress(
            float(done), None if total is None else float(total), None if message is None else str(message)
        )

    def log(self, level: str, message: Any) -> None:
        """Log ``message`` at ``level`` (one of `LEVELS`: "debug", "info", "warning", "error", ...)."""
        if level not in LEVELS:
            raise ValueError(f"ctx.log: the level must be one of {', '.join(LEVELS)}, got {level!r}")
        self._backend.log(level, message if isinstance(message, str) else str(message))

    def ask(self, message: str, form: Any) -> Answer:
        """Ask the caller's person to fill in a form (MCP elicitation).

        Args:
            message: What to tell the person.
            form: The fields: a JSON Schema of ``"type": "object"`` with flat properties (strings,
                numbers, integers, booleans, enums; ``default`` and ``title`` are shown), or a
                pydantic model, dataclass or TypedDict class whose JSON Schema is that.

        Returns:
            The `Answer`: ``accept`` with the values, or ``decline`` / ``cancel``.

        Raises:
            ToolContextError: The caller cannot ask (an MCP client without elicitation).
        """
        return self._backend.ask(message, _form_schema(form))

    def sample(
        self, prompt: str | Sequence[Mapping[str, str]], *, system: str | None = None, max_tokens: int = 512
    ) -> str:
        """Ask the caller's model (MCP sampling); returns its answer's text.

        Args:
            prompt: The user's message, or chat messages (``{"role": "user", "content": "..."}``).
            system: A system prompt.
            max_tokens: The most tokens the answer may take.

        Raises:
            ToolContextError: No model can answer, or the request was refused.
        """
        if isinstance(prompt, str):
            messages = [("user", prompt)]
        else:
            messages = [(str(m["role"]), str(m["content"])) for m in prompt]
        return self._backend.sample(messages, system, int(max_tokens))

    def __repr__(self) -> str:
        return f"ToolContext(tool={self.tool!r})"


def _form_schema(form: Any) -> dict[str, Any]:
    if isinstance(form, Mapping):
        return dict(form)
    if isinstance(form, type):
        from pydantic import TypeAdapter

        schema = TypeAdapter(form).json_schema()  # a form is flat: no $defs to inline
        schema.pop("title", None)
        return schema
    raise TypeError(
        f"ctx.ask: the form must be a JSON Schema dict or a class (pydantic model, dataclass), got {form!r}"
    )


def is_context_type(annotation: Any) -> bool:
    """Whether a parameter's annotation is `ToolContext` (also ``Annotated`` or ``| None``)."""
    if isinstance(annotation, type):
        return issubclass(annotation, ToolContext)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return is_context_type(typing.get_args(annotation)[0])
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(args) == 1 and is_context_type(args[0])
    return False


def call_with_context(
    function: Callable[..., Any],
    values: Mapping[str, Any],
    positional: tuple[str, ...],
    context: str | None,
    tool: str,
) -> Any:
    """``function(**values)`` (the positional-only ones by position), with a `ToolContext` for the
    parameter named ``context``."""
    args = [values[name] for name in positional]
    keywords = {k: v for k, v in values.items() if k not in positional}
    if context is not None:
        keywords[context] = ToolContext.current(tool)
    return function(*args, **keywords)
