"""One rule: ``TOOL ARG=PATTERN [ARG=PATTERN ...] -> allow|ask|deny``, read from its text.

`Rule.parse` reads a rule and raises `RuleError` naming the rule, what is wrong and how to write
it. `rule_text_for` writes the rule that matches exactly one call (its values quoted), for a
person to widen or narrow.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..._visible import visible
from ...errors import MeowgentError
from ._patterns import Pattern, RuleSyntaxError, plain_value, read_pattern, value_text

__all__ = ["ACTIONS", "MAX_RULE_CHARS", "Action", "Rule", "RuleError", "rule_text_for"]

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
MAX_RULE_CHARS = 2000
_TOOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_HOW = "write a rule as TOOL ARG=PATTERN ... -> allow|ask|deny, e.g. delete_file path=scratch/** -> allow"


class RuleError(MeowgentError, ValueError):
    """A rule (or a rules file) that cannot be used: names the rule, what is wrong and how to fix it."""


@dataclass(frozen=True)
class Rule:
    """A parsed rule. ``str(rule)`` is its text, which `Rule.parse` reads back to the same rule."""

    tool: str
    """The tool's name, exactly (rules never match a look-alike)."""
    patterns: tuple[tuple[str, Pattern], ...]
    """Each argument's pattern; a call matches when every one matches its value."""
    action: Action

    @classmethod
    def parse(cls, text: str, action: Action | None = None) -> Rule:
        """Read ``text``; ``action`` is the implied ``-> allow|deny`` of ``%agent allow`` / ``deny``.

        Raises:
            RuleError: The rule is malformed; the message names it and says how to write it.
        """
        if not isinstance(text, str):
            raise RuleError(f"a rule must be text ({_HOW}), got a {type(text).__name__}: {text!r}")
        shown = text if len(text) <= 120 else text[:117] + "..."
        try:
            return _parse(text, action)
        except RuleSyntaxError as error:
            raise RuleError(f"Cannot read the rule '{visible(shown)}': {error}.") from None

    @property
    def condition(self) -> str:
        """The rule without its action: ``delete_file path=scratch/**``."""
        return " ".join([self.tool, *(f"{name}={pattern.source}" for name, pattern in self.patterns)])

    @property
    def text(self) -> str:
        return f"{self.condition} -> {self.action}"

    def __str__(self) -> str:
        return self.text

    def matches(self, tool_name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether a call of ``tool_name`` with these (validated) arguments is one this rule is about.

        A deny or ask rule is about every spelling of the values it names (``./keep/a.txt`` and
        ``keep%2fa.txt`` are ``keep/a.txt``); an allow rule only about spellings that mean what it
        says whichever way they are read (see `_patterns`).
        """
        if tool_name != self.tool:
            return False
        allow = self.action == "allow"
        return all(name in arguments and p.matches(arguments[name], allow=allow) for name, p in self.patterns)

    def missed(self, tool_name: str, arguments: Mapping[str, Any]) -> str | None:
        """Why a call of ``tool_name`` with these arguments is not one this rule is about
        (``path 'draft4.txt' is not under other/``); None when `matches` says it is."""
        if tool_name != self.tool:
            return f"the rule is about {self.tool}, not {tool_name}"
        allow, why = self.action == "allow", []
        for name, pattern in self.patterns:
            if name not in arguments:
                why.append(f"{tool_name} has no argument {name}")
            elif not pattern.matches(arguments[name], allow=allow):
                value = visible(repr(arguments[name]))
                if (
                    pattern.kind == "glob"
                    and pattern.source.endswith("/**")
                    and "*" not in pattern.source[:-3]
                ):
                    why.append(f"{name} {value} is not under {pattern.source[:-2]}")
                else:
                    why.append(f"{name} {value} does not match {pattern.source}")
        return "; ".join(why) or None


def _parse(text: str, implied: Action | None) -> Rule:
    if len(text) > MAX_RULE_CHARS:
        raise RuleSyntaxError(
            f"it is {len(text):,} characters long; a rule may have at most {MAX_RULE_CHARS:,}"
        )
    i = _skip(text, 0)
    if i >= len(text):
        raise RuleSyntaxError(f"it is empty; {_HOW}")
    end = i
    while end < len(text) and not text[end].isspace() and not text.startswith("->", end):
        end += 1
    tool = text[i:end]
    _check_name(tool, "tool", _TOOL)
    patterns: dict[str, Pattern] = {}
    i = _skip(text, end)
    action: Action | None = None
    while i < len(text):
        if text.startswith("->", i):
            word = text[_skip(text, i + 2) :].strip()
            if word not in ACTIONS:
                raise RuleSyntaxError(f"after '->' comes allow, ask or deny, not {word!r}; {_HOW}")
            action = word  # type: ignore[assignment]
            break
        equals = text.find("=", i)
        name_end = _bare_end(text, i)
        if equals == -1 or equals > name_end:
            raise RuleSyntaxError(
                f"{text[i:name_end]!r} is not ARG=PATTERN; each argument is written as its name, '=' and a pattern"
                f" (a glob like scratch/**, re:REGEX, a set {{a,b}}, or a quoted exact value); {_HOW}"
            )
        name = text[i:equals]
        _check_name(name, "argument", _ARGUMENT)
        if name in patterns:
            raise RuleSyntaxError(f"the argument {name!r} has two patterns; give each argument one")
        patterns[name], i = read_pattern(text, equals + 1, name)
        if i < len(text) and not text[i].isspace() and not text.startswith("->", i):
            raise RuleSyntaxError(
                f"the pattern of {name}= is followed by {text[i : i + 20]!r}; put a space between patterns"
            )
        i = _skip(text, i)
    if action is not None and implied is not None and action != implied:
        raise RuleSyntaxError(
            f"it says '-> {action}' where only {implied} rules are added (%agent {implied}); drop the '-> {action}'"
            f" or use %agent {action}"
        )
    action = action or implied
    if action is None:
        raise RuleSyntaxError(f"it does not say what to do; end it with -> allow, -> ask or -> deny ({_HOW})")
    return Rule(tool, tuple(patterns.items()), action)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _bare_end(text: str, i: int) -> int:
    while i < len(text) and not text[i].isspace() and not text.startswith("->", i):
        i += 1
    return i


def _check_name(name: str, what: str, shape: re.Pattern[str]) -> None:
    strange = [c for c in name if not c.isascii() or unicodedata.category(c).startswith("C")]
    if strange:
        described = ", ".join(
            f"'{visible(c)}' (U+{ord(c):04X} {unicodedata.name(c, 'unnamed')})"
            for c in dict.fromkeys(strange)
        )
        raise RuleSyntaxError(
            f"the {what} name '{visible(name)}' has {described}; {what} names are plain ASCII, so a look-alike letter"
            f" would make a rule that matches nothing. Type the name again in ASCII"
        )
    if not shape.fullmatch(name):
        raise RuleSyntaxError(
            f"{name!r} is not a {what} name (letters, digits, '_', '-' and '.', starting with a letter or '_'); {_HOW}"
        )


def rule_text_for(tool_name: str, arguments: Mapping[str, Any], action: Action = "allow") -> str:
    """The text of a rule that matches exactly this call: each value quoted (a JSON string for a
    text, ``json:`` for anything else), so that `Rule.parse` of it matches these arguments and
    no others. A person widens it by replacing a value with a glob (``"scratch/a.txt"`` ->
    ``scratch/**``).
    """
    parts = [tool_name]
    for name, value in arguments.items():
        text = value_text(value)
        if isinstance(text, str) and not isinstance(value, (bool, int, float)) and value is not None:
            parts.append(f"{name}={json.dumps(text)}")
        else:
            parts.append(f"{name}=json:{json.dumps(plain_value(value), separators=(',', ':'), default=repr)}")
    return f"{' '.join(parts)} -> {action}"
