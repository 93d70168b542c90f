"""`AgentMagics`: ``%%agent`` and ``%agent``, the notebook surface, configured with traitlets.

`AgentMagics` also registers ``%tools``, whose words are handled in `tools_magics` (and, for
``%tools mcp`` and ``%tools serve``, in `notebook.mcp.mcp_magics`): the three families share its settings and
its tools. ``%load_ext meowgent_nb`` registers the magics and an input transformer that turns a ``%%agent``
cell into an ``await`` of the agent: an async cell lets ipykernel (>= 7.4) deliver the approval
buttons' clicks while the agent waits, and the cell still blocks until the agent is done.
"""

from __future__ import annotations

import os
import re
from collections import deque
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, CaselessStrEnum, Float, Int, List, Unicode, default, validate

from ..._async import run_to_completion
from ...agent.loop import Agent, AgentResult
from ...models.resolve import AUTO
from ...protocols.registry import PROTOCOLS
from ...recording.cassette import MODE_NAMES as OLD_CASSETTE_MODES
from ...recording.cassette import MODES as CASSETTE_MODES  # imported with the agent anyway
from ...tools.core import Tool
from .._setting_words import APPROVALS, OLD_APPROVALS, approval_word, cassette_mode_word
from . import _cassette_choice, agent_commands, tools_magics
from ._collected_tools import collected_tools
from ._options import readable_help
from ._prompt_text import prompt_text
from .rules_magics import session_rules

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["AgentMagics", "agent_cell", "rewrite_agent_cell"]

_CELL_START = re.compile(r"^%%agent(\s|$)")


@magics_class
class AgentMagics(Magics):
    """Talk to a model that can call the notebook's tools.

    Settings are traits: ``%config AgentMagics.model = "qwen2.5:1.5b"`` (or in
    ipython_config.py). `%agent config` shows the effective values.
    """

    shell: InteractiveShell  # pyright: ignore[reportIncompatibleVariableOverride] - always made with one (load_ipython_extension); IPython 9 types it Optional
    model = Unicode(
        help="ollama:NAME, openai:NAME, local, local:PATH, a name (Ollama's; never replaced), or auto (qwen2.5:0.5b on"
        " Ollama, else the embedded model, saying so); MEOWGENT_MODEL, else auto."
    ).tag(config=True)
    protocol = CaselessStrEnum(
        ["xml", "native", "json", "list"],
        "xml",
        help="How tools reach the model: xml, native, json (constrained), or list (a list of calls).",
    ).tag(config=True)
    max_turns = Int(8, help="Model requests per cell; the last offers no tools.").tag(config=True)
    max_repeated_failures = Int(
        3,
        allow_none=True,
        help="The run ends when the model makes the same call that failed the same way this many"
        " turns in a row (it is told not to repeat it the turn before); None: never.",
    ).tag(config=True)
    tool_timeout = Float(30.0, help="Seconds a tool call may take unless the tool sets its own.").tag(
        config=True
    )
    max_output_chars = Int(
        4000,
        allow_none=True,
        help="A tool result longer than this is cut, keeping its start and end; None: never.",
    ).tag(config=True)
    max_output_items = Int(
        50, help="Entries of a list or object in a tool result written out at each level."
    ).tag(config=True)
    max_output_depth = Int(6, help="Levels of nesting of a tool result written out.").tag(config=True)
    approve = CaselessStrEnum(
        [*APPROVALS, *OLD_APPROVALS],
        help="ask: a person approves calls of tools marked approval=True; every: every call; allow: no"
        " one is asked, they run; deny: no one is asked, they are denied. Default: MEOWGENT_APPROVE, else ask.",
    ).tag(config=True)
    approval_timeout = Float(600.0, help="Seconds to wait for a click before denying.").tag(config=True)
    think = Bool(None, allow_none=True, help="Ask a thinking model to think (None: its default).").tag(
        config=True
    )
    temperature = Float(0.1, help="Sampling temperature.").tag(config=True)
    attach_max_chars = Int(
        20_000,
        help="Characters of each resource that --attach puts in a request; the rest is cut, with a note.",
    ).tag(config=True)
    num_ctx = Int(16384, help="Context window in tokens.").tag(config=True)
    context = CaselessStrEnum(
        ["compact", "summarize", "error", "off"],
        "compact",
        help="When a request would not fit the model's window: compact (shorten old tool results, leave out"
        " the oldest exchanges, as sent), summarize (as compact, and the model summarizes what is left out),"
        " error (say so), or off (send it as it is).",
    ).tag(config=True)
    openai_base_url = Unicode(
        "",
        help="Where openai:NAME models are served (e.g. http://gpu-box:8000/v1); empty: $OPENAI_BASE_URL.",
    ).tag(config=True)
    toolboxes = List(help="Toolboxes offered in every cell, besides the notebook's tools.")
    cassette = Unicode(
        help="Record the model's answers to this file, or replay them from it (see cassette_mode);"
        " relative to the notebook's folder. MEOWGENT_CASSETTE, else none."
    ).tag(config=True)
    cassette_mode = CaselessStrEnum(
        [*CASSETTE_MODES, *OLD_CASSETTE_MODES],
        help="once: replay if the cassette exists, else record; record: record everything again; replay:"
        " replay only; auto: replay what is recorded, record what is missing; off: live model. Tools"
        " marked record=True follow it too. MEOWGENT_CASSETTE_MODE, else once.",
    ).tag(config=True)
    cassette_mask = List(
        Unicode(),
        help="Regular expressions of secrets never written to a cassette (e.g. r'sk-[A-Za-z0-9]+'):"
        " each match becomes *** in requests, answers, tool arguments and results, before matching.",
    ).tag(config=True)

    @default("model")
    def _default_model(self) -> str:
        return os.environ.get("MEOWGENT_MODEL") or AUTO

    @default("approve")
    def _default_approve(self) -> str:
        # MEOWGENT_APPROVE=allow|deny is a policy for the whole session; headless runs read it too.
        value = approval_word(os.environ.get("MEOWGENT_APPROVE", "").strip().lower(), "MEOWGENT_APPROVE={}")
        return value if value in APPROVALS else "ask"

    @validate("approve")
    def _new_approve_word(self, proposal: Any) -> str:
        return approval_word(proposal["value"], "%config AgentMagics.approve = {!r}")

    @default("cassette")
    def _default_cassette(self) -> str:
        return os.environ.get("MEOWGENT_CASSETTE", "")

    @default("cassette_mode")
    def _default_cassette_mode(self) -> str:
        value = os.environ.get("MEOWGENT_CASSETTE_MODE", "").strip().lower()
        value = cassette_mode_word(value, "MEOWGENT_CASSETTE_MODE={}")
        return value if value in CASSETTE_MODES else "once"

    @validate("cassette_mode")
    def _new_cassette_mode_word(self, proposal: Any) -> str:
        return cassette_mode_word(proposal["value"], "%config AgentMagics.cassette_mode = {!r}")

    def __init__(self, shell: Any = None, **kwargs: Any):
        super().__init__(shell=shell, **kwargs)
        self.messages: list[dict[str, Any]] = []
        """The conversation, shared by every %%agent cell until --new or %agent reset."""
        self.context_log: deque[Any] = deque(maxlen=200)
        """What each request of the conversation sent (`Agent.context_log`), for %agent context."""
        self._context_model: Any = None  # the model of the last cell: it measures the context
        from ...agent.window.compaction import Compaction

        self.compaction = Compaction()
        """What of the conversation is sent shortened or not at all (`Agent.compaction`), across cells."""
        self.last_result: AgentResult | None = None
        self._approver: Any = None
        self._models: dict[tuple[str, tuple[tuple[str, Any], ...], str | None], Any] = {}  # see _model_choice
        self._cassettes: dict[Any, Any] = {}  # the cassettes opened this session (see cassette_model)

    # --- %%agent -------------------------------------------------------------------------------

    @readable_help("%%agent")
    @magic_arguments()
    @argument(
        "-m",
        "--model",
        help="The model for this cell: ollama:NAME, openai:NAME, local, local:PATH, auto, or a name (see resolve_model).",
    )
    @argument(
        "--model-object", metavar="VAR", help="Use a model object from the notebook (e.g. a ScriptedModel)."
    )
    @argument("--protocol", choices=list(PROTOCOLS), help="How tools reach the model.")
    @argument("--tools", metavar="A,B", help="Offer only these tools (comma-separated names).")
    @argument("--no-tools", action="store_true", help="Offer no tools.")
    @argument(
        "--approve",
        choices=APPROVALS,
        type=lambda word: approval_word(word, "--approve {}"),
        help="Approval setting for this cell: ask, every, allow or deny (see AgentMagics.approve).",
    )
    @argument("--max-turns", type=int, metavar="N", help="Model requests for this cell.")
    @argument("--think", action="store_true", default=None, help="Ask the model to think.")
    @argument("--no-think", dest="think", action="store_false", help="Ask the model not to think.")
    @argument(
        "--attach",
        action="append",
        metavar="URI[,URI]",
        help="Put these MCP resources in the request, each in a <context source=URI> block.",
    )
    @argument(
        "--prompt",
        nargs="+",
        metavar=("SERVER/NAME", "KEY=VALUE"),
        help="Start from an MCP server's prompt and its arguments; the cell's text, if any, follows it.",
    )
    @argument("--new", action="store_true", help="Start a fresh conversation.")
    @argument("-o", "--out", metavar="VAR", help="Store the AgentResult in this notebook variable.")
    @argument("--record", metavar="PATH", help="Record the model's answers to this cassette file.")
    @argument(
        "--replay", metavar="PATH", help="Replay the answers recorded in this cassette; no model is used."
    )
    @argument("--cassette", metavar="PATH", help="Use this cassette in AgentMagics.cassette_mode.")
    @argument(
        "--expect", metavar='"CALLS"', help="The calls the run must make: \"f(a='x*') then g(b=1), ...\"."
    )
    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Send the cell to the model; it may call the notebook's @tool functions.

        The cell is the prompt: ``{name}`` is replaced by the notebook variable ``name`` (unknown
        names stay as typed) and ``# NBVAL_...`` lines are removed. The conversation continues
        across cells until ``--new`` or ``%agent reset``. ``--attach`` and ``--prompt`` add an
        MCP server's resources and prompts (see `mcp_resource_magics`).
        """
        run_to_completion(self.run_cell(line, cell))

    async def run_cell(self, line: str, cell: str, metadata: dict[str, Any] | None = None) -> None:
        """The async body of ``%%agent`` (what the input transformer awaits); ``metadata``: the
        cell's, where the request does not carry it (see `_cell_expectation`)."""
        from ..mcp.mcp_resource_magics import cell_turn
        from ..views.display import show_run
        from ._busy import busy_while_running
        from ._cell_expectation import cell_options, check_cell

        args, expectation = cell_options(self, line, metadata)
        text = self.prompt(cell)
        if not text.strip() and not args.prompt:
            raise UsageError("%%agent: the cell is empty; write the prompt below the %%agent line.")
        # The first line names the cell: execution counts differ between frontends, nbval and IPython versions.
        first = (
            text.strip().splitlines()[0][:60] if text.strip() else f"--prompt {' '.join(args.prompt)}"[:60]
        )
        args.origin = f"the %%agent cell beginning {first!r}"
        agent = self.make_agent(args)
        turn = cell_turn(self, args, text)  # everything is read before the conversation changes
        if args.new:
            self.messages.clear()
            self.context_log.clear()
            self.compaction.reset()
        agent.messages, agent.context_log, self._context_model = self.messages, self.context_log, agent.model
        agent.compaction = self.compaction
        agent.messages.extend(turn.before)
        with busy_while_running(self.shell):  # JupyterLab's status bar says Busy until the answer is complete
            result = await show_run(
                agent, turn.prompt, live=not _headless()
            )  # the agent keeps interrupts prompt
        self.last_result = result
        if args.out:
            self.shell.user_ns[args.out] = result
        check_cell(expectation, result)

    def prompt(self, cell: str) -> str:
        """The cell without nbval markers, with ``{name}`` filled from the notebook (see `_prompt_text`)."""
        return prompt_text(cell, self.shell.user_ns)

    @property
    def rules(self) -> Any:
        """The notebook's approval rules (`agent.rules` of every cell; see `rules_magics`)."""
        return session_rules(self)

    def make_agent(self, args: Any) -> Agent:
        """An `Agent` for one cell, from the traits and the cell's options."""
        from ..approvals import default_approver
        from ..mcp.mcp_resource_magics import system_prompt

        mode = args.approve or self.approve
        if mode in ("allow", "deny"):
            approver = default_approver(mode)
        else:
            if self._approver is None:  # one per session: "always allow" lasts across cells
                self._approver = default_approver("ask", timeout=self.approval_timeout)
                if hasattr(
                    self._approver, "add_rule"
                ):  # "Allow calls like this…" adds to the notebook's rules
                    self._approver.add_rule = self.rules.add
            approver = self._approver
            if hasattr(approver, "timeout"):  # %config AgentMagics.approval_timeout after the first cell
                approver.timeout = self.approval_timeout
        model = self.resolve_model(args)
        _cassette_choice.use_tape(self, getattr(model, "tool_tape", None))
        tools = self.select_tools(args)
        return Agent(
            model,
            tools=tools,
            system=system_prompt(self, tools),
            approver=approver,
            protocol=args.protocol or self.protocol,
            max_turns=args.max_turns if args.max_turns is not None else self.max_turns,
            tool_timeout=self.tool_timeout,
            approve="every" if mode == "every" else "ask",
            think=self.think if args.think is None else args.think,
            max_repeated_failures=self.max_repeated_failures,
            max_output_chars=self.max_output_chars,
            max_output_items=self.max_output_items,
            max_output_depth=self.max_output_depth,
            context=self.context,
            rules=session_rules(self),
        )

    def output_shape(self) -> Any:
        """How the cells shape tool results for the model (`tools.output.Shape`)."""
        from ...tools.output import Shape

        return Shape(self.max_output_chars, self.max_output_items, self.max_output_depth)

    def resolve_model(self, args: Any) -> Any:
        """The cell's model; with a cassette, one that records or replays (see `_cassette_choice`)."""
        return _cassette_choice.cell_model(self, args)

    def session_tape(self) -> Any:
        """The `ToolTape` of the session's cassette (the traits), or None without one (or in mode off)."""
        return _cassette_choice.session_tape(self)

    def _resolve_model(self, args: Any) -> Any:
        from ._model_choice import cell_model

        return cell_model(self, args)

    def _options(self) -> dict[str, Any]:
        """The model settings from the traits that change its answers."""
        return {"temperature": self.temperature, "num_ctx": self.num_ctx}

    def available_tools(self, what: str = "%tools") -> list[Tool]:
        """Every `Tool` in the notebook namespace, then the tools of registered toolboxes (an MCP
        server's tool named like another is a `UsageError`: see `_collected_tools`)."""
        namespace = [v for k, v in self.shell.user_ns.items() if not k.startswith("_")]
        return collected_tools(namespace, self.toolboxes, what)

    def select_tools(self, args: Any, what: str = "%%agent") -> list[Tool]:
        tools = self.available_tools(what)
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

    # --- %agent ----------------------------------------------------------------------------------

    @line_magic("agent")
    def agent_line(self, line: str) -> Any:
        """%agent reset | history | context | models | config | traceback | allow ... | deny ... | rules |
        trust | decisions [--df]"""
        return agent_commands.agent_command(self, line)

    # --- %tools ----------------------------------------------------------------------------------

    @line_magic
    def tools(self, line: str) -> Any:
        """%tools [xml | json | text | NAME]: what the model sees of the notebook's tools.

        ``%tools eval VAR [--model-object M | -m NAME]`` checks the model picks the right tool for
        each case in the list VAR (see `tools_magics.tools_eval`). ``%tools mcp ...`` adds, loads
        (from a Claude Desktop / Cursor / VS Code file), lists and removes MCP servers' tools and
        lists their resources and prompts (``%tools mcp help`` lists the options); ``%tools serve
        ...`` serves the notebook's tools over MCP (see `mcp_magics`).
        """
        return tools_magics.tools(self, line)


def _headless() -> bool:
    from ..approvals import is_headless

    return is_headless()


def rewrite_agent_cell(lines: list[str]) -> list[str]:
    """Input transformer: a ``%%agent`` cell becomes an ``await`` of `agent_cell`."""
    if not lines or not _CELL_START.match(lines[0]):
        return lines
    line = lines[0][len("%%agent") :].strip()
    cell = "".join(lines[1:])
    return [
        f"await __import__('meowgent_nb.notebook.magics.agent_magics').notebook.magics.agent_magics.agent_cell({line!r}, {cell!r})\n"
    ]


async def agent_cell(line: str, cell: str, metadata: dict[str, Any] | None = None) -> None:
    """What a rewritten ``%%agent`` cell awaits (``metadata``: the cell's, from the pytest plugin)."""
    from IPython.core.getipython import get_ipython

    shell: Any = get_ipython()  # a rewritten cell runs in IPython; its traits type as Optional
    magics = shell.magics_manager.registry.get("AgentMagics")
    if magics is None:
        raise UsageError("%%agent: the extension is not loaded; run %load_ext meowgent_nb first.")
    await magics.run_cell(line, cell, metadata)
