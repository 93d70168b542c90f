"""`ToolsMagics`: ``%tools``, what the model sees of the notebook's tools, and ``%tools eval``.

``%tools`` is one line magic; its first word ``mcp`` or ``serve`` goes on to that family's class
(`notebook.mcp.mcp_magics.McpMagics`, `ServeMagics`), made and registered the first time it is
used: its module imports the MCP client, which a notebook without MCP never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ...evals.evaluation import TEXT_LIMIT
from ...protocols.registry import FOLLOW_MODEL, PROTOCOLS
from ...tools.view import ToolsView
from ._cassette_choice import cell_model
from ._options import parse_options
from .session import SessionMagics

if TYPE_CHECKING:
    from ..mcp.mcp_magics import McpMagics, ServeMagics
    from .session import NotebookSession

__all__ = ["ToolsMagics", "tools_eval"]


@magics_class
class ToolsMagics(SessionMagics):
    """``%tools``: the notebook's tools as the model sees them; ``eval``, ``mcp`` and ``serve``."""

    FAMILIES = ("mcp", "serve")
    """The first words ``%tools`` hands on to a family of their own."""
    SWITCHES = ("add", "remove")
    """The first words that turn the notebook tools on and off: ``%tools add notebook``."""

    @line_magic
    def tools(self, line: str) -> Any:
        """%tools [xml | json | text | NAME]: what the model sees of the notebook's tools.

        ``%tools add notebook`` offers the notebook tools (`workspace.notebook_tools`: the agent
        works in this notebook's namespace) in every ``%%agent`` cell of the session, after the
        notebook's own tools; ``%tools remove notebook`` stops offering them (``%%agent
        --notebook`` offers them in one cell). ``%tools`` lists them, named as the notebook tools.

        ``%tools eval VAR [--model-object M | -m NAME]`` checks the model picks the right tool for
        each case in the list VAR (see `tools_magics.tools_eval`). ``%tools mcp ...`` adds, loads
        (from a Claude Desktop / Cursor / VS Code file), lists and removes MCP servers' tools and
        lists their resources and prompts (``%tools mcp help`` lists the options); ``%tools serve
        ...`` serves the notebook's tools over MCP (see `mcp_magics`).
        """
        word = line.strip()
        command, _, rest = word.partition(" ")
        if command == "eval":
            return tools_eval(self.session, rest)
        if command in self.FAMILIES:
            return self.family(command).run(rest)
        if command in self.SWITCHES and rest.strip():  # `%tools add` alone still shows a tool named add
            return self.switch(command, rest.strip())
        session = self.session
        available = session.available_tools()
        if word in ("", "xml", "json", "text"):
            if word == "" and session.notebook_tools_on:
                print(_notebook_line(session))
            return ToolsView(available, mode=word or "all")
        by_name = {t.name: t for t in available}
        if word not in by_name:
            known = ", ".join(by_name) or "none (define one with @tool)"
            raise UsageError(f"%tools: no tool named {word!r}; use xml, json, text or one of: {known}")
        return ToolsView([by_name[word]], mode="all", shape=session.output_shape())

    def switch(self, command: str, what: str) -> None:
        """``%tools add notebook`` / ``%tools remove notebook``: the notebook tools on or off.

        Raises:
            UsageError: ``what`` is not ``notebook``, or a notebook tool has the name of a tool the
                notebook offers already (see `_collected_tools.with_notebook_tools`).
        """
        if what != "notebook":
            raise UsageError(
                f"%tools {command}: {command} what? `%tools {command} notebook` {command}s the notebook tools"
                f" ({'to' if command == 'add' else 'from'} every cell); an MCP server is `%tools mcp {command} ...`."
            )
        session = self.session
        if command == "add":
            session.available_tools(f"%tools {command} notebook", notebook=True)  # a clash fails here
        session.notebook_tools_on = command == "add"
        print(_notebook_line(session))

    def family(self, word: str) -> McpMagics | ServeMagics:
        """The registered family for ``%tools WORD`` (``mcp`` or ``serve``), registered now if new."""
        from ..mcp.mcp_magics import McpMagics, ServeMagics

        family = McpMagics if word == "mcp" else ServeMagics
        manager = self.shell.magics_manager  # IPython types it Optional; a shell always has one
        magics = manager.registry.get(family.__name__) if manager is not None else None
        if not isinstance(magics, family):
            magics = family(shell=self.shell)
            self.shell.register_magics(magics)
        return magics


def _notebook_line(session: NotebookSession) -> str:
    """One line saying whether every cell offers the notebook tools, and which they are."""
    if not session.notebook_tools_on:
        return "The notebook tools are off (%tools add notebook, or %%agent --notebook for one cell)."
    from ..workspace import notebook_tools

    names = ", ".join(tool.name for tool in notebook_tools(session.shell.user_ns))
    return f"The notebook tools, offered in every cell (%tools remove notebook to stop): {names}."


@magic_arguments()
@argument("cases", metavar="VAR", help="A notebook variable holding a list of cases.")
@argument("-m", "--model", help="Model name (as for %%agent); default: AgentMagics.model.")
@argument(
    "--model-object", metavar="VAR", help="Use a model object from the notebook (e.g. a ScriptedModel)."
)
@argument("--tools", metavar="A,B", help="Offer only these tools (comma-separated names).")
@argument("--protocol", choices=list(PROTOCOLS), help="How tools reach the model.")
@argument(
    "--text-limit",
    type=int,
    metavar="N",
    help=f"Stop reading an answer after N characters of text with no call begun (default {TEXT_LIMIT}); 0: read it all.",
)
@argument(
    "--concurrency",
    type=int,
    default=1,
    metavar="N",
    help="Run N cases at once, for a server that batches requests (vLLM, SGLang); the embedded model runs one.",
)
@argument(
    "--repeat",
    type=int,
    default=1,
    metavar="N",
    help="Ask each case N times: a case passes only when all N pass (pass^N); the report names the flips.",
)
@argument(
    "--baseline",
    metavar="FILE",
    help="Record the outcomes to FILE (JSON) if it does not exist, else fail naming the cases that got worse.",
)
@argument(
    "--cassette",
    metavar="PATH",
    help="Replay (or record) the model's answers with this cassette, in AgentMagics.cassette_mode.",
)
def tools_eval(session: NotebookSession, line: str) -> Any:
    """%tools eval VAR [-m MODEL | --model-object VAR] [--tools A,B] [--protocol P] [--text-limit N] [--concurrency N] [--repeat N] [--baseline FILE] [--cassette PATH]

    Runs the cases in VAR against the notebook's tools, one model turn each; no tool runs. While
    it runs, the cell shows each case's row as it finishes ("3/7 cases done"); the report is the
    magic's value. Headless runs (nbval) show only the report. See `evals.evaluation.aevaluate` for
    when reading an answer stops. With ``--baseline FILE`` the first run writes FILE, and a later
    run that did worse on any case shows its report and fails the cell (`evals.baseline`).
    """
    args = parse_options(tools_eval, line, "%tools eval")
    args.no_tools = False
    if args.cases not in session.shell.user_ns:
        raise UsageError(
            f"%tools eval: no variable named {args.cases!r} in the notebook; assign a list of cases."
        )
    limit = TEXT_LIMIT if args.text_limit is None else args.text_limit or None
    if limit is not None and limit < 0:
        raise UsageError(
            f"%tools eval --text-limit: give a number of characters, or 0 to read whole answers; got {limit}"
        )
    if args.concurrency < 1:
        raise UsageError(
            f"%tools eval --concurrency: give a number of cases of at least 1; got {args.concurrency}"
        )
    if args.repeat < 1:
        raise UsageError(
            f"%tools eval --repeat: give a number of runs per case of at least 1; got {args.repeat}"
        )
    from ..views.eval_display import run_eval, watched

    try:
        report = run_eval(
            session.shell.user_ns[args.cases],
            tools=session.select_tools(args, "%tools eval"),
            model=cell_model(session, args),
            protocol=_eval_protocol(args.protocol or session.settings.protocol),
            text_limit=limit,
            live=watched(),
            concurrency=args.concurrency,
            repeat=args.repeat,
        )
    except ValueError as error:
        raise UsageError(f"%tools eval {args.cases}: {error}") from None
    if args.baseline:
        _check_baseline(report, args.baseline)
    return report


def _check_baseline(report: Any, path: str) -> None:
    """Record or compare (`evals.baseline.check_baseline`); a regression shows the report, then
    fails the cell, so "Run All" and nbval stop there."""
    from ...evals.baseline import BaselineError, EvalRegression, check_baseline

    try:
        check_baseline(report, path)
    except BaselineError as error:
        raise UsageError(f"%tools eval --baseline: {error}") from None
    except EvalRegression:
        from IPython.display import display

        display(report)
        raise


def _eval_protocol(protocol: str) -> str:
    """An eval's protocol: the one chosen, or ``xml`` for "auto" (an eval compares descriptions,
    so every model reads them the same way)."""
    return "xml" if protocol == FOLLOW_MODEL else protocol
