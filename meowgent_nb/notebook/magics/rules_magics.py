"""``%agent allow``, ``%agent deny`` and ``%agent rules``: the notebook's approval rules.

The notebook has one `Rules` for the session (`session_rules`), given to every ``%%agent`` cell's
agent (``agent.rules``) and to ``%tools serve``: the rules of its rules file first (``approvals.toml``
beside the notebook, else in the working directory, or pyproject.toml's
``[tool.meowgent_nb.approvals]``; read when a cell makes its agent and again whenever the file
changes), then those added with ``%agent allow`` / ``%agent deny`` (until the kernel restarts).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..._visible import visible
from ...agent.rules import RuleError, Rules
from ...agent.rules._file import RulesFile
from ...agent.rules._rules import shown_source

__all__ = ["RULE_WORDS", "notebook_folder", "rules_command", "session_rules"]

RULE_WORDS = ("allow", "deny", "rules")
_USAGE = (
    "%agent allow TOOL ARG=PATTERN ... | %agent deny TOOL ARG=PATTERN ... | %agent rules [--remove N]"
    " (e.g. %agent allow delete_file path=scratch/**)"
)


def notebook_folder(shell: Any) -> Path | None:
    """The folder of the running notebook, where the frontend says (JupyterLab and Notebook 7 set
    ``__session__``, VS Code ``__vsc_ipynb_file__``), else None."""
    for name in ("__vsc_ipynb_file__", "__session__"):
        value = shell.user_ns.get(name)
        if isinstance(value, str) and value.endswith(".ipynb") and Path(value).is_file():
            return Path(value).resolve().parent
    return None


def session_rules(magics: Any, what: str = "%%agent") -> Rules:
    """The notebook's `Rules`, its rules file read again if it changed; a file that cannot be
    used is a `UsageError` saying which and why (the rules added in the notebook are kept)."""
    rules = getattr(magics, "_rules", None)
    if rules is None:
        rules = magics._rules = Rules()
        folder = notebook_folder(magics.shell)
        rules.file = RulesFile([*([folder] if folder else []), Path.cwd()])
    try:
        rules.file.refresh()
    except RuleError as error:
        raise UsageError(f"{what}: {error}") from None
    return rules


def rules_command(magics: Any, command: str) -> None:
    """Run ``%agent allow ...``, ``%agent deny ...`` or ``%agent rules [--remove N]``."""
    word, _, rest = command.partition(" ")
    rest = rest.strip()
    rules = session_rules(magics, f"%agent {word}")
    if word == "rules":
        if not rest:
            print(listing(rules, magics.available_tools("%agent rules")))
            return
        parts = rest.split()
        if len(parts) != 2 or parts[0] != "--remove" or not parts[1].isdigit():
            raise UsageError(f"%agent rules: unknown options {rest!r}; use %agent rules, or %agent rules --remove N.")
        try:
            removed = rules.remove(int(parts[1]))
        except RuleError as error:
            raise UsageError(f"%agent rules --remove: {error}") from None
        print(f"Removed rule {parts[1]}: {visible(removed.text)}")
        return
    if not rest:
        raise UsageError(f"%agent {word}: say which calls; {_USAGE}")
    try:
        rule = rules.add(rest, action=word, source=f"%agent {word}")  # type: ignore[arg-type]
    except RuleError as error:
        meant = _look_alike(rest.split()[0], [t.name for t in magics.available_tools(f"%agent {word}")])
        raise UsageError(f"%agent {word}: {error}" + (f" Did you mean {meant}?" if meant else "")) from None
    print(f"Rule {len(rules)}: {visible(rule.text)}")
    for warning in rules.unknown_tools(magics.available_tools(f"%agent {word}"), [rule]):
        print(f"Warning: {visible(warning)}; the rule is kept, for a tool defined later.", file=sys.stderr)


def listing(rules: Rules, tools: list[Any]) -> str:
    """The numbered rules, where each came from, and which name no tool of the notebook."""
    numbered = rules.numbered()
    if not numbered:
        return (
            "No approval rules. Add one with %agent allow TOOL ARG=PATTERN (or %agent deny), or in"
            " approvals.toml beside the notebook: rules = [\"TOOL ARG=PATTERN -> allow\"]."
        )
    lines = ["Approval rules (of those that match a call, deny wins, then ask, then allow):"]
    for number, rule, source in numbered:
        lines.append(f"{number:>3}. {visible(rule.text)}   ({shown_source(source)})")
    lines.extend(f"  Note: {visible(w)}" for w in rules.unknown_tools(tools))
    return "\n".join(lines)


def _look_alike(written: str, names: list[str]) -> str | None:
    """The tool ``written`` looks like when it has letters that are not ASCII (a Cyrillic 'е'): the
    one name of the same length that agrees on every ASCII letter of it."""
    if written.isascii():
        return None
    alike = [
        name for name in names
        if len(name) == len(written) and all(w == n for w, n in zip(written, name) if w.isascii())
    ]
    return alike[0] if len(alike) == 1 else None
