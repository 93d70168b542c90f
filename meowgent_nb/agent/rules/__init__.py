"""Rules a person sets on tool calls: ``TOOL ARG=PATTERN [ARG=PATTERN ...] -> allow|ask|deny``.

A rule names a tool and, per argument, a pattern: a path glob (``scratch/**``; a deny or ask
rule matches every spelling of a place, an allow rule none that leaves it), a regex
(``re:[a-z]+\\.txt``, run on RE2: linear time), a set (``{a,b}``), a quoted exact value
(``"my file.txt"``) or an exact JSON value (``json:[1,2]``).
The agent asks its `Rules` about every call before its approver (see `agent.approvals`), with
the validated arguments; the strictest matching rule decides (deny over ask over allow).
"""

from __future__ import annotations

from ._file import MAX_FILE_BYTES, MAX_RULES
from ._rule import Rule, RuleError, rule_text_for
from ._rules import RuleVerdict, Rules

__all__ = ["MAX_FILE_BYTES", "MAX_RULES", "Rule", "RuleError", "RuleVerdict", "Rules", "rule_text_for"]
