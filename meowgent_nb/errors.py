"""The errors of more than one wing, and the rule every error of the package keeps.

Every error says what failed, for what, the detail, and how to fix it. Every exported exception
derives from `MeowgentError`, so ``except MeowgentError`` catches anything the package raises on
purpose, and keeps its Python base where it is also one (``except ValueError`` still works). Here:
`SettingsError`, `ToolDefinitionError`, `UnknownKeywordError`, `ToolArgumentsError`,
`RunInterrupted` and `ApprovalMissing`; each wing defines its own beside the code that raises them (`ModelError` in
``models``, `McpServerError` in ``mcp``...). tests/test_errors.py checks the rule.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = [
    "ApprovalMissing",
    "MeowgentError",
    "RunInterrupted",
    "SettingsError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "UnknownKeywordError",
]


class MeowgentError(Exception):
    """Base class of every error meowgent raises on purpose.

    In IPython (a notebook, the terminal) it shows as its message, which says what to do, and one
    line telling where the full traceback is, instead of a traceback through the package's insides
    and the libraries below it. The cell still fails, so nbval and papermill see the error.
    """

    def _render_traceback_(self) -> list[str]:
        """The lines IPython shows for this error (IPython calls this when it exists)."""
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}", "(the full traceback: %agent traceback)"]


class SettingsError(MeowgentError, ValueError):
    """A setting a person gave is not one meowgent accepts: a constructor argument (``Agent``,
    ``McpToolbox``, ``ToolServer``), an option of a function (``evaluate``), an environment variable
    (``MEOWGENT_APPROVE``). Raised before anything runs; the message names the setting, what was
    given and what is allowed. It is a `ValueError`, as these checks raised before it existed.
    """


class ToolDefinitionError(MeowgentError, TypeError):
    """A tool cannot be described to a model; raised when the tool is defined.

    Attributes:
        target: What was being turned into a tool (a function's qualified name, or a tool name).
        problems: Every problem found, one sentence each.
    """

    def __init__(self, target: str, problems: Sequence[str], action: str = "make a tool from"):
        self.target = target
        self.problems = tuple(problems)
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"Cannot {action} {target}:\n{lines}")


class UnknownKeywordError(MeowgentError, TypeError):
    """A keyword the function does not take (``@tool(aproval=True)``), named with the nearest one.

    It shows as one line ("tool() got an unknown keyword 'aproval': did you mean 'approval'?"):
    the mistake is in the line the person just wrote, so no traceback is needed to find it. It
    is a `TypeError`, as Python's own error for an unknown keyword is.

    Attributes:
        function: The function as a person calls it (``"tool()"``).
        keyword: The keyword given.
        known: The keywords the function takes.
    """

    def __init__(self, function: str, keyword: str, known: Sequence[str]):
        self.function = function
        self.keyword = keyword
        self.known = tuple(known)
        close = difflib.get_close_matches(keyword, self.known, n=1, cutoff=0.6)
        fix = f"did you mean {close[0]!r}?" if close else f"it takes {', '.join(self.known)}."
        super().__init__(f"{function} got an unknown keyword {keyword!r}: {fix}")

    def _render_traceback_(self) -> list[str]:
        """One line: the message names the fix."""
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class ToolArgumentsError(MeowgentError, ValueError):
    """The arguments of a tool call do not fit the tool's parameters.

    The message is written for the model that made the call: one line per problem, naming the
    argument, what was wrong and what is allowed.

    Attributes:
        tool_name: The tool that was called.
        problems: One ``"argument: what was wrong"`` line per problem.
    """

    def __init__(self, tool_name: str, problems: Sequence[str]):
        self.tool_name = tool_name
        self.problems = tuple(problems)
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"Invalid arguments for tool '{tool_name}':\n{lines}")


class RunInterrupted(MeowgentError):
    """A ``%%agent`` cell was interrupted (Kernel > Interrupt, Ctrl-C) before the run ended.

    It shows as one line saying how far the run got; the cell fails, so "Run All" stops there.
    The conversation keeps what was said, and the next ``%%agent`` cell continues it.
    """

    def _render_traceback_(self) -> list[str]:
        """One line: an interrupt's traceback says nothing a person needs."""
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class ApprovalMissing(MeowgentError):
    """A tool found, as it was about to reach outside, that its call needed a person's approval
    that was not asked for (a recorded MCP tool whose cassette said it needs none, while its live
    server says it does). The tool did nothing; the agent then asks, and runs it only if approved."""
