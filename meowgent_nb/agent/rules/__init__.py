"""Rules a person sets on tool calls: ``TOOL ARG=PATTERN [ARG=PATTERN ...] -> allow|ask|deny``.

The agent asks its `Rules` about every validated call before its approver; the strictest
matching rule decides (deny over ask over allow). `_rule`: one `Rule`, parsed from its text.
`_rules`: `Rules`, the ordered list and its verdict. `_patterns`: what one ``ARG=PATTERN``
matches (glob, ``re:``, set, quoted or ``json:`` value). `_spellings`: a place's spellings and
their normal form. `_file`: the rules file (``approvals.toml`` or pyproject.toml). `trust`: a
rules file's allow rules decide only once its content is trusted.
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
    trust_forbidden,
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
    "trust_forbidden",
    "trust_rules",
    "trust_store",
    "trusted_rules",
    "untrust_rules",
    "untrusted_file",
    "warn_untrusted",
]
