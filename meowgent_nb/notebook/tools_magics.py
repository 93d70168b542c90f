"""``%tools``: what the model sees of the notebook's tools, and ``%tools eval``.

`AgentMagics.tools` (the registered line magic, which shares the agent magics' settings and
tools) hands its line to `tools`; ``%tools mcp ...`` and ``%tools serve ...`` go on to
`mcp_magics`, loaded only then (it imports the MCP client).
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments

from ..protocols.registry import PROTOCOLS
from ..tools.view import ToolsView
from ._options import parse_options

__all__ = ["tools", "tools_eval"]


def tools(magics: Any, line: str) -> Any:
    """%tools [xml | json | text | NAME] | eval ... | mcp ... | serve ...: the body of `AgentMagics.tools`."""
    word = line.strip()
    command, _, rest = word.partition(" ")
    if command == "eval":
        return tools_eval(magics, rest)
    if command in ("mcp", "serve"):
        from . import mcp_magics

        return (mcp_magics.tools_mcp if command == "mcp" else mcp_magics.tools_serve)(magics, rest)
    available = magics.available_tools()
    if word in ("", "xml", "json", "text"):
        return ToolsView(available, mode=word or "all")
    by_name = {t.name: t for t in available}
    if word not in by_name:
        known = ", ".join(by_name) or "none (define one with @tool)"
        raise UsageError(f"%tools: no tool named {word!r}; use xml, json, text or one of: {known}")
    return ToolsView([by_name[word]], mode="all")


@magic_arguments()
@argument("cases", metavar="VAR", help="A notebook variable holding a list of cases.")
@argument("-m", "--model", help="Model name (as for %%agent); default: AgentMagics.model.")
@argument("--model-object", metavar="VAR", help="Use a model object from the notebook (e.g. a ScriptedModel).")
@argument("--tools", metavar="A,B", help="Offer only these tools (comma-separated names).")
@argument("--protocol", choices=list(PROTOCOLS), help="How tools reach the model.")
def tools_eval(magics: Any, line: str) -> Any:
    """%tools eval VAR [-m MODEL | --model-object VAR] [--tools A,B] [--protocol P]

    Runs the cases in VAR against the notebook's tools, one model turn each; no tool runs.
    """
    args = parse_options(tools_eval, line, "%tools eval")
    args.no_tools = False
    if args.cases not in magics.shell.user_ns:
        raise UsageError(f"%tools eval: no variable named {args.cases!r} in the notebook; assign a list of cases.")
    from ..agent.evaluation import evaluate

    try:
        return evaluate(
            magics.shell.user_ns[args.cases],
            tools=magics.select_tools(args),
            model=magics.resolve_model(args),
            protocol=args.protocol or magics.protocol,
        )
    except ValueError as error:
        raise UsageError(f"%tools eval {args.cases}: {error}") from None
