"""``%agent allow``, ``%agent deny``, ``%agent rules`` and ``%agent trust``: the notebook's approval rules.

`session_rules` gives the session's one `Rules` (to every ``%%agent`` cell and ``%tools serve``):
the rules file's rules, read again when the file changes, then those added in the notebook. The
file's allow rules decide only once the person trusts its content (`trust_panel`).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from IPython.core.error import UsageError

from ..._visible import visible
from ...agent.rules import (
    TRUST_ENV,
    UNTRUSTED_MARK,
    RuleError,
    Rules,
    RulesFile,
    is_trusted,
    rules_file_key,
    shown_source,
    trust_store,
    trusted_rules,
    untrust_rules,
    untrusted_file,
)

if TYPE_CHECKING:
    from .session import NotebookSession

__all__ = ["RULE_WORDS", "notebook_folder", "rules_command", "session_rules"]

RULE_WORDS = ("allow", "deny", "rules", "trust")
_USAGE = (
    "%agent allow TOOL ARG=PATTERN ... | %agent deny TOOL ARG=PATTERN ... | %agent rules [--remove N]"
    " (e.g. %agent allow delete_file path=scratch/**)"
)
_TRUST_USAGE = "%agent trust [PATH] | %agent trust --list | %agent trust --remove [PATH]"


def notebook_folder(shell: Any) -> Path | None:
    """The folder of the running notebook, where the frontend says (JupyterLab and Notebook 7 set
    ``__session__``, VS Code ``__vsc_ipynb_file__``), else None."""
    for name in ("__vsc_ipynb_file__", "__session__"):
        value = shell.user_ns.get(name)
        if isinstance(value, str) and value.endswith(".ipynb") and Path(value).is_file():
            return Path(value).resolve().parent
    return None


def session_rules(session: NotebookSession, what: str = "%%agent", tell: bool = True) -> Rules:
    """The notebook's `Rules`, its rules file read again if it changed.

    Args:
        session: The notebook's session.
        what: The magic asking, for messages.
        tell: Whether to announce a file whose allow rules wait for trust.

    Raises:
        UsageError: The rules file cannot be used (the rules added in the notebook are kept).
    """
    rules = session.loaded_rules
    if rules is None:
        from ..approvals.trust_panel import tell_ignored, tell_untrusted

        rules = session.loaded_rules = Rules()
        folder = notebook_folder(session.shell)
        rules.file = RulesFile([*([folder] if folder else []), Path.cwd()])
        rules.on_untrusted = tell_untrusted  # the first cell that meets the file says so
        rules.on_ignored = tell_ignored  # a headless run says so when a call is asked because of it
    told, rules.on_untrusted = rules.on_untrusted, (rules.on_untrusted if tell else lambda untrusted: None)
    try:
        rules.refresh()
    except RuleError as error:
        raise UsageError(f"{what}: {error}") from None
    finally:
        rules.on_untrusted = told
    return rules


def rules_command(session: NotebookSession, command: str) -> None:
    """Run ``%agent allow ...``, ``%agent deny ...``, ``%agent rules [--remove N]`` or ``%agent trust``."""
    word, _, rest = command.partition(" ")
    rest = rest.strip()
    if word == "trust":
        trust_command(session, rest)
        return
    rules = session_rules(session, f"%agent {word}")
    if word == "rules":
        if not rest:
            named = [rule.tool for _, rule, _ in rules.numbered()]
            print(listing(rules, session.rule_tools("%agent rules", named)))
            return
        parts = rest.split()
        if len(parts) != 2 or parts[0] != "--remove" or not parts[1].isdigit():
            raise UsageError(
                f"%agent rules: unknown options {rest!r}; use %agent rules, or %agent rules --remove N."
            )
        try:
            removed = rules.remove(int(parts[1]))
        except RuleError as error:
            raise UsageError(f"%agent rules --remove: {error}") from None
        print(f"Removed rule {parts[1]}: {visible(removed.text)}")
        return
    if not rest:
        raise UsageError(f"%agent {word}: say which calls; {_USAGE}")
    if word == "allow":
        _check_policy(session, rest)
    try:
        rule = rules.add(rest, action=word, source=f"%agent {word}")  # type: ignore[arg-type]
    except RuleError as error:
        meant = _look_alike(rest.split()[0], [t.name for t in session.available_tools(f"%agent {word}")])
        raise UsageError(f"%agent {word}: {error}" + (f" Did you mean {meant}?" if meant else "")) from None
    print(f"Rule {len(rules)}: {visible(rule.text)}")
    for warning in rules.unknown_tools(session.rule_tools(f"%agent {word}", [rule.tool]), [rule]):
        print(f"Warning: {visible(warning)}; the rule is kept, for a tool defined later.", file=sys.stderr)


def _check_policy(session: NotebookSession, rest: str) -> None:
    """Refuse an allow rule for a tool marked ``approval="always"`` where the site's policy forbids it."""
    from ...policy import current_policy

    forbidden = current_policy().always_tool_rules
    name = rest.split()[0]
    if forbidden is None or forbidden.value:
        return
    if any(t.name == name and t.approval == "always" for t in session.available_tools("%agent allow")):
        raise UsageError(
            f"%agent allow {rest} is refused by {forbidden.where}: {name} runs only with a person's"
            " approval here; approve its calls when asked."
        )


def listing(rules: Rules, tools: list[Any]) -> str:
    """The numbered rules, where each came from, and which name no tool of the notebook."""
    numbered = rules.numbered()
    if not numbered:
        return (
            "No approval rules. Add one with %agent allow TOOL ARG=PATTERN (or %agent deny), or in"
            ' approvals.toml beside the notebook: rules = ["TOOL ARG=PATTERN -> allow"].'
        )
    untrusted = rules.untrusted()
    ignored = {number for number, _ in untrusted.allow} if untrusted is not None else set()
    lines = ["Approval rules (of those that match a call, deny wins, then ask, then allow):"]
    for number, rule, source in numbered:
        mark = f" {UNTRUSTED_MARK}" if number in ignored else ""
        lines.append(f"{number:>3}. {visible(rule.text)}   ({shown_source(source)}){mark}")
    lines.extend(f"  Note: {visible(w)}" for w in rules.unknown_tools(tools))
    return "\n".join(lines)


def trust_command(session: NotebookSession, rest: str) -> None:
    """``%agent trust [PATH]`` (ask to trust the rules file: the session's, or PATH's, a file or a
    folder), ``%agent trust --list``, ``%agent trust --remove [PATH]``."""
    try:
        words = shlex.split(rest)
    except ValueError as error:
        raise UsageError(f"%agent trust: {error}; {_TRUST_USAGE}") from None
    option = words[0] if words and words[0].startswith("-") else None
    paths = words[1:] if option else words
    if option not in (None, "--list", "--remove") or len(paths) > 1 or (option == "--list" and paths):
        raise UsageError(f"%agent trust: unknown options {rest!r}; use {_TRUST_USAGE}.")
    if option == "--list":
        print(_trust_listing())
        return
    file = _rules_file(session, paths[0] if paths else None, f"%agent trust{' --remove' if option else ''}")
    if option == "--remove":
        # _rules_file found a file, so it was read: it has a path and a sha256.
        path, sha256 = cast(Path, file.path), cast(str, file.sha256)
        try:
            removed = untrust_rules(path)
        except OSError as error:
            raise UsageError(f"%agent trust --remove: the trust store cannot be written: {error}") from None
        by_run = is_trusted(path, sha256)  # the store no longer says so: the environment may
        still = f" ({TRUST_ENV} still trusts it for this run)" if by_run else ""
        print(
            f"No longer trusted: {file.path}{still}."
            if removed
            else f"{file.path} was not trusted by you{still}; %agent trust --list shows what is."
        )
        return
    untrusted = untrusted_file(file.path, file.sha256, file.rules)
    if untrusted is None:
        has_allow = any(rule.action == "allow" for rule in file.rules)
        print(
            f"{file.path} is trusted: its allow rules apply."
            if has_allow
            else f"{file.path} has no allow rules: its ask and deny rules apply without trust."
        )
        return
    from ..approvals.trust_panel import ask_to_trust

    try:
        ask_to_trust(untrusted)
    except (RuntimeError, OSError) as error:
        raise UsageError(f"%agent trust: {error}.") from None


def _rules_file(session: NotebookSession, given: str | None, what: str) -> RulesFile:
    """The session's rules file, or the one at ``given`` (a rules file, or a folder: its rules file)."""
    if given is None:
        file = session_rules(session, what, tell=False).file
        if file.path is None:
            raise UsageError(
                f"{what}: there is no rules file here (approvals.toml, or pyproject.toml with"
                " [tool.meowgent_nb.approvals], beside the notebook or in the working directory); name one:"
                f" {what} PATH."
            )
        return file
    path = Path(given).expanduser()
    folder = path if path.is_dir() else path.parent
    file = RulesFile([folder])
    try:
        file.refresh()
    except RuleError as error:
        raise UsageError(f"{what}: {error}") from None
    if file.path is None or (not path.is_dir() and str(file.path) != rules_file_key(path)):
        in_use = f"its rules file is {file.path}" if file.path is not None else "it has no rules file"
        raise UsageError(
            f"{what}: {given} is not the rules file of its folder ({in_use}); a rules file is approvals.toml,"
            " or pyproject.toml with [tool.meowgent_nb.approvals] (approvals.toml wins)."
        )
    return file


def _trust_listing() -> str:
    """The rules files the person trusted (and whether each still holds), and what the run trusts."""
    entries = trusted_rules()
    lines = [
        f"Rules files you trusted (kept in {trust_store()}):"
        if entries
        else f"You trusted no rules file (they would be kept in {trust_store()})."
    ]
    for entry in entries:
        try:
            file = RulesFile([Path(entry.path).parent])
            file.refresh()
            now = (
                "in use, trusted"
                if (str(file.path) == entry.path and file.sha256 == entry.sha256)
                else (
                    "changed since: not trusted" if str(file.path) == entry.path else "not in use there now"
                )
            )
        except RuleError:
            now = "cannot be read now"
        lines.append(f"  {entry.path}   sha256 {entry.sha256[:16]}...   {entry.trusted_at}   ({now})")
    named = [e for e in os.environ.get(TRUST_ENV, "").split(os.pathsep) if e.strip()]
    if named:
        lines.append(f"{TRUST_ENV} trusts for this run: {', '.join(named)}")
    return "\n".join(lines)


def _look_alike(written: str, names: list[str]) -> str | None:
    """The tool ``written`` looks like when it has letters that are not ASCII (a Cyrillic 'е'): the
    one name of the same length that agrees on every ASCII letter of it."""
    if written.isascii():
        return None
    alike = [
        name
        for name in names
        if len(name) == len(written) and all(w == n for w, n in zip(written, name) if w.isascii())
    ]
    return alike[0] if len(alike) == 1 else None
