"""`NotebookSession`: what the magic families of one shell share; `notebook_session` reaches it.

``%load_ext meowgent_nb`` makes one per shell and keeps it as ``shell.meowgent``; each family's
`Magics` class (``%%agent``/``%agent``, ``%tools``, ``%tools mcp``, ``%tools serve``) reads and
changes the conversation, rules, approver, toolboxes, cassettes and served server here, and the
helpers of those families take the session, not the magics object.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError
from IPython.core.magic import Magics

from ...agent.window.compaction import Compaction
from ...tools.core import Tool
from ._collected_tools import collected_tools, with_notebook_tools

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...agent.loop import AgentResult
    from ...agent.rules import Rules
    from ...mcp.client.toolbox import McpToolbox
    from ...mcp.server.serve import ToolServer
    from ...tools.output import Shape

__all__ = ["NotebookSession", "NotebookSettings", "SessionMagics", "notebook_session"]


class NotebookSettings(Protocol):
    """The settings the magic families read: `AgentMagics`'s configurable traits."""

    @property
    def model(self) -> str: ...

    @property
    def protocol(self) -> str: ...

    @property
    def max_turns(self) -> int: ...

    @property
    def tool_timeout(self) -> float: ...

    @property
    def max_output_chars(self) -> int | None: ...

    @property
    def max_output_items(self) -> int: ...

    @property
    def max_output_depth(self) -> int: ...

    @property
    def approve(self) -> str: ...

    @property
    def approval_timeout(self) -> float: ...

    @property
    def temperature(self) -> float: ...

    @property
    def attach_max_chars(self) -> int: ...

    @property
    def num_ctx(self) -> int: ...

    @property
    def openai_base_url(self) -> str: ...

    @property
    def cassette(self) -> str: ...

    @property
    def cassette_mode(self) -> str: ...

    @property
    def cassette_mask(self) -> list[str]: ...

    def trait_names(self, **metadata: Any) -> list[str]:
        """The names of the traits whose metadata match (``config=True``: the settings)."""
        ...


@dataclass(kw_only=True, eq=False)
class NotebookSession:
    """The state the notebook's magics share, one per shell (``shell.meowgent``)."""

    shell: InteractiveShell
    """The shell the magics run in; its ``user_ns`` is the notebook's namespace."""
    settings: NotebookSettings
    """The configurable settings: `AgentMagics`'s traits (``%config AgentMagics.model = ...``)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation, shared by every %%agent cell until --new or %agent reset."""
    context_log: deque[Any] = field(default_factory=lambda: deque(maxlen=200))
    """What each request of the conversation sent (`Agent.context_log`), for %agent context."""
    context_model: Any = None
    """The model of the last cell: it measures the context for %agent context."""
    compaction: Compaction = field(default_factory=Compaction)
    """What of the conversation is sent shortened or not at all (`Agent.compaction`), across cells."""
    last_result: AgentResult | None = None
    """The result of the last %%agent cell that finished."""
    last_agent: Any = None
    """The agent of the last %%agent cell that started a run: its ``last_result`` holds the run's
    calls also when the run failed or was stopped (``%agent traceback`` shows their tools' errors)."""
    last_agent_cell: int = 0
    """The number of that cell (`agent_commands.running_cell`): errors of earlier cells are not that run's."""
    approver: Any = None
    """The approver that asks a person, made by the first cell that needs one ("always allow" lasts)."""
    loaded_rules: Rules | None = None
    """The notebook's approval rules once read (`rules_magics.session_rules` reads and refreshes them)."""
    toolboxes: list[Any] = field(default_factory=list)
    """Toolboxes offered in every cell, besides the notebook's tools (MCP servers' among them)."""
    models: dict[tuple[str, tuple[tuple[str, Any], ...], str | None], Any] = field(default_factory=dict)
    """Models resolved by name, options and base URL (see `_model_choice`)."""
    told: set[str] = field(default_factory=set)
    """The notices said in full once per kernel (why the embedded model answers instead)."""
    model_note: str | None = None
    """A few words the cell's model line adds ("Ollama not running"), set as the cell picks its model."""
    cassettes: dict[Any, Any] = field(default_factory=dict)
    """The cassettes opened this session (see `recording.cassette.cassette_model`)."""
    mcp_servers: dict[str, McpToolbox] = field(default_factory=dict)
    """The MCP servers added with %tools mcp add or load, by name."""
    served: ToolServer | None = None
    """The server of %tools serve while it serves."""
    serve_sync: Callable[..., None] | None = None
    """The post_run_cell callback that keeps what is served in step with the notebook."""
    notebook_tools_on: bool = False
    """Whether every cell offers the notebook tools (`workspace.notebook_tools`): ``%tools add notebook``."""
    tracer_provider: Any = None
    """Where %%agent runs' spans go after ``%agent trace on`` (an OpenTelemetry SDK provider); None: off."""
    trace_file: str | None = None
    """The file `tracer_provider` writes spans to (``MEOWGENT_TRACE_FILE``); None: it sends them over OTLP/HTTP."""
    conversation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """``gen_ai.conversation.id`` of the session's runs (a new one after --new or %agent reset)."""

    def available_tools(self, what: str = "%tools", *, notebook: bool = False) -> list[Tool]:
        """Every `Tool` in the notebook namespace, then the tools of the toolboxes, then the
        notebook tools (`workspace.notebook_tools`) when ``notebook`` or `notebook_tools_on`.

        Raises:
            UsageError: An MCP server's tool is named like another, or a notebook tool like one of
                the others (see `_collected_tools`).
        """
        namespace = [v for k, v in self.shell.user_ns.items() if not k.startswith("_")]
        tools = collected_tools(namespace, self.toolboxes, what)
        if notebook or self.notebook_tools_on:
            return with_notebook_tools(tools, self.shell.user_ns, what)
        return tools

    def rule_tools(self, what: str, named: Iterable[str]) -> list[Tool]:
        """The tools a rule may name: `available_tools`, and each notebook tool ``named`` names
        that none of them has (a cell offers them with ``--notebook``, so a rule for one is no typo).

        Raises:
            UsageError: As `available_tools`.
        """
        tools = self.available_tools(what)
        wanted = set(named) - {tool.name for tool in tools}
        if not wanted:
            return tools
        from ..workspace import notebook_tools

        return [*tools, *(tool for tool in notebook_tools(self.shell.user_ns) if tool.name in wanted)]

    def select_tools(self, args: Any, what: str = "%%agent") -> list[Tool]:
        """The tools a cell offers: all, none (``--no-tools``) or those ``--tools`` names; the
        notebook tools too with ``--notebook`` (see `available_tools`).

        Raises:
            UsageError: ``--tools`` names a tool the notebook does not have, or ``--notebook``
                comes with ``--no-tools``.
        """
        notebook = bool(getattr(args, "notebook", False))
        if notebook and args.no_tools:
            raise UsageError(
                f"{what}: --notebook offers the notebook tools and --no-tools offers none; give one of them."
            )
        tools = self.available_tools(what, notebook=notebook)
        if args.no_tools:
            return []
        if not args.tools:
            return tools
        wanted = [name.strip() for name in args.tools.split(",") if name.strip()]
        by_name = {t.name: t for t in tools}
        missing = [name for name in wanted if name not in by_name]
        if missing:
            known = ", ".join(by_name) or "none (define one with @tool)"
            raise UsageError(
                f"%%agent --tools: no tool named {', '.join(missing)}; the notebook has: {known}"
            )
        return [by_name[name] for name in wanted]

    def model_options(self) -> dict[str, Any]:
        """The model settings from the traits that change its answers."""
        return {"temperature": self.settings.temperature, "num_ctx": self.settings.num_ctx}

    def output_shape(self) -> Shape:
        """How the cells shape tool results for the model (`tools.output.Shape`)."""
        from ...tools.output import Shape

        settings = self.settings
        return Shape(settings.max_output_chars, settings.max_output_items, settings.max_output_depth)


def notebook_session(shell: Any) -> NotebookSession:
    """The shell's session (``shell.meowgent``).

    Raises:
        UsageError: The extension is not loaded in this shell.
    """
    session = getattr(shell, "meowgent", None)
    if not isinstance(session, NotebookSession):
        raise UsageError("%%agent: the extension is not loaded; run %load_ext meowgent_nb first.")
    return session


class SessionMagics(Magics):
    """A family of the notebook's magics: IPython's `Magics`, reading the shell's `NotebookSession`.

    Each family's class (decorated with ``@magics_class``) derives from it; ``%load_ext
    meowgent_nb`` makes the session and registers them (`extension.load`).
    """

    shell: InteractiveShell  # pyright: ignore[reportIncompatibleVariableOverride] - always made with one (load_ipython_extension); IPython 9 types it Optional

    @property
    def session(self) -> NotebookSession:
        """The shell's `NotebookSession`, which the magic families share."""
        return notebook_session(self.shell)
