"""`AgentMagics`: ``%%agent`` and ``%agent``, and the notebook's settings as its traitlets.

Its traits are the settings every family reads (``%config AgentMagics.model = ...``); the rest
they share is the shell's `NotebookSession`. `rewrite_agent_cell` is the input transformer
(registered by `extension`) that makes a ``%%agent`` cell an ``await``: an async cell lets
ipykernel deliver the approval buttons' clicks while the agent waits. A site's policy
(`meowgent_nb.policy`) gives the traits' defaults, and refuses a setting that passes its limits.
"""

from __future__ import annotations

import os
import re
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, CaselessStrEnum, Float, Int, List, Unicode, default, validate

from ..._async import run_to_completion
from ...agent.loop import Agent, AgentResult
from ...models.resolve import AUTO
from ...policy import current_policy
from ...protocols.registry import FOLLOW_MODEL, PROTOCOLS
from ...recording.cassette import MODE_NAMES as OLD_CASSETTE_MODES
from ...recording.cassette import MODES as CASSETTE_MODES  # imported with the agent anyway
from ...tools.core import Tool
from ...tools.values import VIEW_TOKENS
from .._setting_words import APPROVALS, OLD_APPROVALS, approval_word, cassette_mode_word
from . import _cassette_choice, agent_commands
from ._options import readable_help
from ._prompt_text import CellPrompt, cell_prompt
from .rules_magics import session_rules
from .session import SessionMagics

if TYPE_CHECKING:
    from ...agent.rules import Rules
    from ...agent.window.compaction import Compaction
    from ...mcp.client.toolbox import McpToolbox
    from ...mcp.server.serve import ToolServer

__all__ = ["AgentMagics", "agent_cell", "rewrite_agent_cell"]

_CELL_START = re.compile(r"^%%agent(\s|$)")


@magics_class
class AgentMagics(SessionMagics):
    """Talk to a model that can call the notebook's tools.

    Settings are traits: ``%config AgentMagics.model = "qwen2.5:1.5b"`` (or in
    ipython_config.py). `%agent config` shows the effective values.
    """

    model = Unicode(
        help="ollama:NAME, openai:NAME, local, local:PATH, a name (Ollama's; never replaced), or auto (qwen2.5:0.5b on"
        " Ollama, else the embedded model, saying so); MEOWGENT_MODEL, else auto."
    ).tag(config=True)
    protocol = CaselessStrEnum(
        [FOLLOW_MODEL, "xml", "native", "json", "list", "decide"],
        FOLLOW_MODEL,
        help="How tools reach the model: auto (native where the model's template has tools, decide on"
        " the embedded models, else xml; the model line says which), xml, native, json (constrained),"
        " list (a list of calls), or decide (xml's decision with a second look, then a list of calls).",
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
    retry_attempts = Int(
        8,
        help="Times a model request is asked in all when the server fails in a way asking again may"
        " mend (a cut answer, HTTP 429/502/503/504); 1: never ask again.",
    ).tag(config=True)
    retry_seconds = Float(
        120.0, help="Seconds a cell's model request may wait in all between its attempts."
    ).tag(config=True)
    retry_delay = Float(
        1.0, help="Seconds before the second attempt; each next wait doubles, give or take half."
    ).tag(config=True)
    max_output_chars = Int(
        4000,
        allow_none=True,
        help="A tool result longer than this is cut, keeping its start and end; None: never.",
    ).tag(config=True)
    max_output_items = Int(
        50, help="Entries of a list or object in a tool result written out at each level."
    ).tag(config=True)
    max_output_depth = Int(6, help="Levels of nesting of a tool result written out.").tag(config=True)
    variable_tokens = Int(
        VIEW_TOKENS,
        help="Tokens each variable a %%agent cell names as {name} may cost (not a string or number: those"
        " fill in as text); a longer view is cut, with a note. At least 50.",
    ).tag(config=True)
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
        policy = current_policy()
        return os.environ.get("MEOWGENT_MODEL") or (policy.model.value if policy.model else AUTO)

    @default("approve")
    def _default_approve(self) -> str:
        # MEOWGENT_APPROVE=allow|deny is a policy for the whole session; headless runs read it too.
        value = approval_word(os.environ.get("MEOWGENT_APPROVE", "").strip().lower(), "MEOWGENT_APPROVE={}")
        policy = current_policy()
        if value in APPROVALS:
            policy.check(policy.approval_refusal(value, f"MEOWGENT_APPROVE={value}"))
            return value
        return policy.approve.value if policy.approve is not None else "ask"

    @validate("approve")
    def _new_approve_word(self, proposal: Any) -> str:
        return approval_word(proposal["value"], "%config AgentMagics.approve = {!r}")

    @default("tool_timeout")
    def _default_tool_timeout(self) -> float:
        policy = current_policy()
        return policy.tool_timeout.value if policy.tool_timeout is not None else 30.0

    @default("max_turns")
    def _default_max_turns(self) -> int:
        policy = current_policy()
        return policy.max_turns.value if policy.max_turns is not None else 8

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

    def _written(self, name: str) -> str:
        """How the setting ``name`` was given, for a refusal: ``%config AgentMagics.approve = 'allow'``,
        ``MEOWGENT_APPROVE=allow``..."""
        value = getattr(self, name)
        configured = type(self).__name__ in self.config and name in self.config[type(self).__name__]
        if name == "approve" and not configured and os.environ.get("MEOWGENT_APPROVE", "").strip():
            return f"MEOWGENT_APPROVE={value}"
        return f"%config AgentMagics.{name} = {value!r}" if configured else f"AgentMagics.{name} = {value!r}"

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
    @argument(
        "--protocol",
        choices=[FOLLOW_MODEL, *PROTOCOLS],
        help="How tools reach the model (auto: native where the model's template has tools, decide on the"
        " embedded models, else xml).",
    )
    @argument("--tools", metavar="A,B", help="Offer only these tools (comma-separated names).")
    @argument("--no-tools", action="store_true", help="Offer no tools.")
    @argument(
        "--notebook",
        action="store_true",
        help="Offer the notebook tools too (notebook_tools: the agent works in this notebook's namespace);"
        " %%tools add notebook offers them in every cell.",
    )
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
        from ..views.transcript import variables_line
        from ._busy import busy_while_running
        from ._cell_expectation import cell_options, check_cell

        session = self.session
        args, expectation = cell_options(self.agent, self.shell, line, metadata)
        prompt = self.cell_prompt(cell)
        text = prompt.text
        if not text.strip() and not args.prompt:
            raise UsageError("%%agent: the cell is empty; write the prompt below the %%agent line.")
        # The first line names the cell: execution counts differ between frontends, nbval and IPython versions.
        first = (
            prompt.cell.strip().splitlines()[0][:60]
            if prompt.cell.strip()
            else f"--prompt {' '.join(args.prompt)}"[:60]
        )
        args.origin = f"the %%agent cell beginning {first!r}"
        agent = self.make_agent(args)
        turn = cell_turn(session, args, text)  # everything is read before the conversation changes
        if args.new:
            session.messages.clear()
            session.context_log.clear()
            session.compaction.reset()
            session.conversation_id = uuid.uuid4().hex
        agent.conversation_id = session.conversation_id
        agent.messages, agent.context_log, session.context_model = (
            session.messages,
            session.context_log,
            agent.model,
        )
        agent.compaction = session.compaction
        agent.messages.extend(turn.before)
        session.last_agent, session.last_agent_cell = agent, agent_commands.running_cell(self.shell)
        with busy_while_running(self.shell):  # JupyterLab's status bar says Busy until the answer is complete
            support = await agent.choose_protocol()  # said in the model line: "..., native tool calls (...)"
            notes = [note for note in (session.model_note, support and str(support)) if note]
            result = await show_run(
                agent,
                turn.prompt,
                live=not _headless(),
                variables=variables_line(prompt.seen),
                images=[image for seen in prompt.seen for image in seen.view.images],
                model_note=", ".join(notes) or None,
            )  # the agent keeps interrupts prompt
            if support is not None and agent.tool_support != support:  # the server refused native tools
                print(f"Switched to {agent.tool_support}.")
        session.last_result = result
        if args.out:
            self.shell.user_ns[args.out] = result
        check_cell(expectation, result)

    def prompt(self, cell: str) -> str:
        """The cell without nbval markers, with ``{name}`` filled from the notebook (see `_prompt_text`)."""
        return self.cell_prompt(cell).text

    def cell_prompt(self, cell: str) -> CellPrompt:
        """`prompt` and the variables it shows, each within ``variable_tokens`` (estimated: the same
        prompt whatever the model, so a recorded cell replays on any backend).

        Raises:
            UsageError: ``variable_tokens`` is below 50.
        """
        if self.variable_tokens < 50:
            raise UsageError(
                f"%config AgentMagics.variable_tokens = {self.variable_tokens}: a variable's view needs at"
                " least 50 tokens; give 500 (the default) or more."
            )
        return cell_prompt(cell, self.shell.user_ns, tokens=self.variable_tokens)

    def make_agent(self, args: Any) -> Agent:
        """An `Agent` for one cell, from the traits and the cell's options."""
        from ..approvals import default_approver
        from ..mcp.mcp_resource_magics import system_prompt

        session = self.session
        mode = args.approve or self.approve
        # The site's policy, checked where a cell uses the settings (%config cannot refuse a value).
        policy = current_policy()
        policy.check(
            policy.approval_refusal(mode, f"--approve {mode}" if args.approve else self._written("approve"))
        )
        policy.check(policy.timeout_refusal(self.tool_timeout, self._written("tool_timeout")))
        if mode in ("allow", "deny"):
            approver = default_approver(mode)
        else:
            if session.approver is None:  # one per session: "always allow" lasts across cells
                session.approver = default_approver("ask", timeout=self.approval_timeout)
                if hasattr(
                    session.approver, "add_rule"
                ):  # "Allow calls like this…" adds to the notebook's rules
                    session.approver.add_rule = session_rules(session).add
            approver = session.approver
            if hasattr(approver, "timeout"):  # %config AgentMagics.approval_timeout after the first cell
                approver.timeout = self.approval_timeout
        model = _cassette_choice.cell_model(session, args)
        _cassette_choice.use_tape(session, getattr(model, "tool_tape", None))
        tools = session.select_tools(args)
        return Agent(
            model,
            tools=tools,
            system=system_prompt(session, tools),
            approver=approver,
            protocol=args.protocol or self.protocol,
            max_turns=args.max_turns if args.max_turns is not None else self.max_turns,
            tool_timeout=self.tool_timeout,
            approve="every" if mode == "every" else "ask",
            think=self.think if args.think is None else args.think,
            max_repeated_failures=self.max_repeated_failures,
            retry_attempts=self.retry_attempts,
            retry_seconds=self.retry_seconds,
            retry_delay=self.retry_delay,
            max_output_chars=self.max_output_chars,
            max_output_items=self.max_output_items,
            max_output_depth=self.max_output_depth,
            context=self.context,
            rules=session_rules(session),
            tracer_provider=session.tracer_provider,
            trace_mask=session.settings.cassette_mask,
        )

    # --- %agent ----------------------------------------------------------------------------------

    @line_magic("agent")
    def agent_line(self, line: str) -> Any:
        """%agent reset | history | context | models | config | traceback | allow ... | deny ... | rules |
        trust | decisions [--df] | policy | trace on|off|status"""
        return agent_commands.agent_command(self.session, line)

    # --- the session's state, read through the magics as before the session had its own object ---

    @property
    def messages(self) -> list[dict[str, Any]]:
        """`NotebookSession.messages`."""
        return self.session.messages

    @property
    def context_log(self) -> deque[Any]:
        """`NotebookSession.context_log`."""
        return self.session.context_log

    @property
    def compaction(self) -> Compaction:
        """`NotebookSession.compaction`."""
        return self.session.compaction

    @property
    def last_result(self) -> AgentResult | None:
        """`NotebookSession.last_result`."""
        return self.session.last_result

    @property
    def toolboxes(self) -> list[Any]:
        """`NotebookSession.toolboxes`."""
        return self.session.toolboxes

    @toolboxes.setter
    def toolboxes(self, boxes: list[Any]) -> None:
        self.session.toolboxes = boxes

    @property
    def rules(self) -> Rules:
        """The notebook's approval rules (`rules_magics.session_rules`)."""
        return session_rules(self.session)

    @property
    def _approver(self) -> Any:
        return self.session.approver

    @_approver.setter
    def _approver(self, approver: Any) -> None:
        self.session.approver = approver

    @property
    def _mcp_servers(self) -> dict[str, McpToolbox]:
        return self.session.mcp_servers

    @property
    def _mcp_serving(self) -> ToolServer | None:
        return self.session.served

    @_mcp_serving.setter
    def _mcp_serving(self, server: ToolServer | None) -> None:
        self.session.served = server

    def available_tools(self, what: str = "%tools") -> list[Tool]:
        """`NotebookSession.available_tools`."""
        return self.session.available_tools(what)

    def select_tools(self, args: Any, what: str = "%%agent") -> list[Tool]:
        """`NotebookSession.select_tools`."""
        return self.session.select_tools(args, what)


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
