"""Expected calls: what a run should have done, written as Python calls, and the check of a run.

    get_weather(city='Par*') then delete_file(path='old.txt') -> ok, ... then answered

`language`: `parse_expectation` and the syntax; `_bounds`: the limits on untrusted text;
`values`: the argument values (literals, globs, regexes, any); `check`: `check_expectation`,
which compares an expectation with an `AgentResult` and shows how they differ.
"""

from __future__ import annotations

from ._bounds import MAX_CHARS, MAX_NESTING
from .check import Act, ExpectationNotMet, Verdict, acts_of, check_expectation
from .language import SYNTAX, Expectation, ExpectationError, ExpectedCall, parse_expectation
from .values import ANY, Regex, value_matches

__all__ = [
    "ANY",
    "MAX_CHARS",
    "MAX_NESTING",
    "SYNTAX",
    "Act",
    "Expectation",
    "ExpectationError",
    "ExpectationNotMet",
    "ExpectedCall",
    "Regex",
    "Verdict",
    "acts_of",
    "check_expectation",
    "parse_expectation",
    "value_matches",
]
