"""Rules a person sets on tool calls: ``TOOL ARG=PATTERN [ARG=PATTERN ...] -> allow|ask|deny``.

A rule names a tool and, per argument, a pattern: a path glob (``scratch/**``; a deny or ask
rule matches every spelling of a place, an allow rule none that leaves it), a regex
(``re:[a-z]+\\.txt``, run on RE2: linear time), a set (``{a,b}``), a quoted exact value
(``"my file.txt"``) or an exact JSON value (``json:[1,2]``).
The agent asks its `Rules` about every call before its approver (see `agent.approvals`), with
the validated arguments; the strictest matching rule decides (deny over ask over allow).

A rules file found in a folder (``approvals.toml``) may raise approval at once; its allow rules
decide only once the person trusted that file's content (see `trust`).
"""

from __future__ import annotations

from ._file import MAX_FILE_BYTES, MAX_RULES, RulesFile
from ._rule import Rule, RuleError, rule_text_for
from ._rules import UNTRUSTED_MARK, Rules, RuleVerdict, shown_source, warn_untrusted
from .trust import (
    CONFIG_ENV,
    TRUST_ENV,
    TrustedRules,
    UntrustedRules,
    is_trusted,
    rules_file_key,
    trust_rules,
    trust_store,
    trusted_rules,
    untrust_rules,
    untrusted_file,
)

__all__ = [
    # trust in a rules file
    "CONFIG_ENV",
    # rules
    "MAX_FILE_BYTES",
    "MAX_RULES",
    "TRUST_ENV",
    "UNTRUSTED_MARK",
    "Rule",
    "RuleError",
    "RuleVerdict",
    "Rules",
    "RulesFile",
    "TrustedRules",
    "UntrustedRules",
    "is_trusted",
    "rule_text_for",
    "rules_file_key",
    "shown_source",
    "trust_rules",
    "trust_store",
    "trusted_rules",
    "untrust_rules",
    "untrusted_file",
    "warn_untrusted",
]
