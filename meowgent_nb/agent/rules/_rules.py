"""`Rules`: an agent's ordered rules, numbered from 1, and the verdict on a call.

The rules file's rules come first, then those added in Python or with ``%agent allow`` / ``%agent
deny``. Of the matching rules the strictest decides (deny over ask over allow, whatever their
order), so no rule can allow what another denies. The file's allow rules decide only while it is
trusted (`trust`); until then `Rules.on_untrusted` is told once about each content.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._file import MAX_RULES, RulesFile
from ._rule import Action, Rule, RuleError
from .trust import UntrustedRules, untrusted_file

__all__ = ["STRICTNESS", "UNTRUSTED_MARK", "RuleVerdict", "Rules", "shown_source", "warn_untrusted"]

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
_VERBS = {"allow": "allowed", "ask": "asked", "deny": "denied"}
UNTRUSTED_MARK = "(not trusted: %agent trust)"
"""After an allow rule of an untrusted rules file in a listing."""
_warned: set[tuple[Path, str]] = set()  # the untrusted files this process said so about on stderr


def warn_untrusted(untrusted: UntrustedRules) -> None:
    """Say once per process, on stderr, that an untrusted file's allow rules are ignored (the
    default `Rules.on_untrusted`: a script, a headless run)."""
    if (untrusted.path, untrusted.sha256) not in _warned:
        _warned.add((untrusted.path, untrusted.sha256))
        print(untrusted.headless_line, file=sys.stderr)


@dataclass(frozen=True)
class RuleVerdict:
    """What the rules decided about a call, and which rule decided it."""

    action: Action
    number: int
    """The rule's number in `Rules` (from 1), as ``%agent rules`` lists it."""
    rule: Rule

    @property
    def text(self) -> str:
        return self.rule.text

    @property
    def reason(self) -> str:
        """For the record: ``allowed by rule 2 (delete_file path=scratch/**)``."""
        return f"{_VERBS[self.action]} by rule {self.number} ({self.rule.condition})"


class Rules:
    """Rules on tool calls, numbered from 1: those of the rules file first, then the added ones.

    Args:
        rules: Rules as text (or `Rule` objects), added in order.
        folders: Where to look for a rules file (``approvals.toml``, or pyproject.toml's
            ``[tool.meowgent_nb.approvals]``); it is read now and again whenever it changes. Its
            allow rules decide only once the file is trusted (see `trust`).
        source: Where ``rules`` come from, for the listing.

    Raises:
        RuleError: A rule, or the rules file, cannot be used; the message names it.
    """

    def __init__(
        self,
        rules: Iterable[str | Rule] = (),
        *,
        folders: Sequence[str | Path] = (),
        source: str = "Rules(...)",
    ):
        self.file = RulesFile(folders)
        self.on_untrusted: Callable[[UntrustedRules], None] = warn_untrusted
        """Told, once per content, about a rules file whose allow rules are ignored (not trusted)."""
        self.on_ignored: Callable[[UntrustedRules], None] | None = None
        """Told each time an ignored allow rule would have allowed a call that is asked instead
        (`untrusted_allow` found one); None: nothing more is said."""
        self._told: set[tuple[Path, str]] = set()
        self._added: list[tuple[Rule, str]] = []
        if isinstance(rules, (str, Rule)):
            rules = [rules]
        for rule in rules:
            self.add(rule, source=source)
        self.refresh()

    @property
    def path(self) -> Path | None:
        """The rules file in use, or None."""
        return self.file.path

    def refresh(self) -> list[Rule]:
        """The rules file's rules, read again if it changed; a file with allow rules that is not
        trusted is told to `on_untrusted` (once per content).

        Raises:
            RuleError: The file cannot be used; the message names it.
        """
        rules = self.file.refresh()
        untrusted = self.untrusted()
        if untrusted is not None and (untrusted.path, untrusted.sha256) not in self._told:
            self._told.add((untrusted.path, untrusted.sha256))
            try:
                self.on_untrusted(untrusted)
            except Exception:  # noqa: BLE001 - a notice that cannot be shown (no display): one line instead
                warn_untrusted(untrusted)
        return rules

    @property
    def trusted(self) -> bool:
        """Whether the rules file's allow rules decide: it is trusted, or has none (or there is none)."""
        return self.untrusted() is None

    def untrusted(self) -> UntrustedRules | None:
        """The rules file as last read, when it has allow rules and is not trusted (they decide
        nothing; their numbers are ``.allow``'s), else None."""
        return untrusted_file(self.file.path, self.file.sha256, self.file.rules)

    def add(self, rule: str | Rule, *, action: Action | None = None, source: str = "added") -> Rule:
        """Add a rule at the end (its number is then ``len(rules)``); returns it.

        Args:
            rule: ``"TOOL ARG=PATTERN ... -> allow|ask|deny"``, or a `Rule`.
            action: The action a rule without ``-> ...`` takes (``%agent allow`` gives "allow").
            source: Where it came from, for the listing (``%agent allow``, ``Agent(rules=...)``).

        Raises:
            RuleError: The rule is malformed (see `Rule.parse`), or there are already `MAX_RULES`.
        """
        parsed = rule if isinstance(rule, Rule) else Rule.parse(rule, action)
        if len(self._added) >= MAX_RULES:
            raise RuleError(
                f"Cannot add the rule {parsed.text!r}: an agent may have at most {MAX_RULES:,} rules."
            )
        self._added.append((parsed, source))
        return parsed

    def remove(self, number: int) -> Rule:
        """Remove rule ``number`` (as listed, from 1); the rules after it move up one.

        Raises:
            RuleError: There is no such rule, or it is the rules file's (edit the file instead).
        """
        from_file = self.refresh()
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= len(self):
            count = len(self)
            raise RuleError(
                f"There is no rule {number!r}: "
                + (f"the rules are numbered 1 to {count}." if count else "there are no rules.")
                + " List them with %agent rules."
            )
        if number <= len(from_file):
            raise RuleError(
                f"Rule {number} ({from_file[number - 1].text}) comes from {self.file.path}; remove it there"
                " (the file is read again when it changes)."
            )
        return self._added.pop(number - len(from_file) - 1)[0]

    def numbered(self) -> list[tuple[int, Rule, str]]:
        """Each rule with its number and where it came from (the rules file's path, or the source)."""
        from_file = [(rule, str(self.file.path)) for rule in self.refresh()]
        return [(n, rule, source) for n, (rule, source) in enumerate([*from_file, *self._added], 1)]

    def __iter__(self) -> Iterator[Rule]:
        return iter([rule for _, rule, _ in self.numbered()])

    def __len__(self) -> int:
        return len(self.refresh()) + len(self._added)

    def decide(self, tool_name: str, arguments: Mapping[str, Any]) -> RuleVerdict | None:
        """The strictest matching rule's verdict on a call (deny over ask over allow; of equals,
        the first), or None when no rule is about it. Give the validated arguments (defaults
        filled in): that is what runs. The allow rules of an untrusted rules file are left out.

        Raises:
            RuleError: The rules file changed and cannot be used now.
        """
        return self._verdict(tool_name, arguments, ignored=self._ignored())

    def untrusted_allow(self, tool_name: str, arguments: Mapping[str, Any]) -> RuleVerdict | None:
        """The verdict of an untrusted rules file's allow rule that would decide this call if
        the file were trusted (for the call's card: "a rule in approvals.toml would allow this"),
        else None. A verdict found is told to `on_ignored`.

        Raises:
            RuleError: The rules file changed and cannot be used now.
        """
        ignored = self._ignored()
        if not ignored:
            return None
        verdict = self._verdict(tool_name, arguments, ignored=set())
        if verdict is None or verdict.number not in ignored:
            return None
        untrusted = self.untrusted()
        if self.on_ignored is not None and untrusted is not None:
            self.on_ignored(untrusted)
        return verdict

    def _ignored(self) -> set[int]:
        """The numbers of the rules that decide nothing now: an untrusted rules file's allow rules."""
        self.refresh()
        untrusted = self.untrusted()
        return {number for number, _ in untrusted.allow} if untrusted is not None else set()

    def _verdict(self, tool_name: str, arguments: Mapping[str, Any], ignored: set[int]) -> RuleVerdict | None:
        found: RuleVerdict | None = None
        for number, rule, _ in self.numbered():
            if number not in ignored and rule.matches(tool_name, arguments):
                if found is None or STRICTNESS[rule.action] > STRICTNESS[found.action]:
                    found = RuleVerdict(rule.action, number, rule)
        return found

    def unknown_tools(self, tools: Iterable[Any], rules: Iterable[Rule] | None = None) -> list[str]:
        """What to warn about: each rule (of ``rules``, by default all) naming no tool of ``tools``
        (names, or tools, whose parameters are checked too), with the names it may have meant; and
        each rule naming an argument its tool does not take (it would never match)."""
        params = {getattr(t, "name", t): _parameters(t) for t in tools}
        known = list(params)
        warnings = []
        for rule in self if rules is None else rules:
            if rule.tool not in params:
                near = difflib.get_close_matches(rule.tool, known, n=3, cutoff=0.6)
                hint = (
                    f"; did you mean {' or '.join(near)}?"
                    if near
                    else f" (the tools are: {', '.join(known) or 'none'})"
                )
                warnings.append(
                    f"the rule {rule.text!r} names no tool here: there is no tool {rule.tool!r}{hint}"
                )
                continue
            taken = params[rule.tool]
            if taken is None:  # a tool given by name: its parameters are not known
                continue
            for name, _ in rule.patterns:
                if name not in taken:
                    near = difflib.get_close_matches(name, taken, n=1, cutoff=0.6)
                    hint = (
                        f"; did you mean {near[0]}?"
                        if near
                        else f" (it takes: {', '.join(taken) or 'nothing'})"
                    )
                    warnings.append(
                        f"the rule {rule.text!r} never matches: {rule.tool} takes no argument {name!r}{hint}"
                    )
        return warnings

    def __repr__(self) -> str:
        return f"Rules({[rule.text for rule in self]!r})"

    def __str__(self) -> str:
        ignored = self._ignored()
        lines = [
            f"{n:>3}. {rule.text}   ({shown_source(source)})" + f" {UNTRUSTED_MARK}" * (n in ignored)
            for n, rule, source in self.numbered()
        ]
        return "\n".join(lines) or "(no rules)"


def _parameters(tool: Any) -> list[str] | None:
    """The names a tool's rules may match: its arguments and its facts (``risk``), or None when
    only its name is known."""
    properties = (
        (getattr(tool, "parameters", None) or {}).get("properties") if not isinstance(tool, str) else None
    )
    facts = getattr(tool, "facts", None) or {}
    return [*properties, *facts] if isinstance(properties, dict) else None


def shown_source(source: str) -> str:
    """Where a rule came from, for people: a rules file's path relative to the working directory
    when it is inside it (the same on every machine), else as it is."""
    path = Path(source)
    if not path.is_absolute():
        return source
    try:
        return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else source
    except (OSError, ValueError):
        return source
