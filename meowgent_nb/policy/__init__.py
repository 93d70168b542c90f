"""A site's policy: defaults every kernel starts with, and limits a person's settings cannot pass.

`files` finds and reads the policy files (`current_policy`, read once per process); `policy`
holds `Policy`, what they say together with each value's file, and how files combine (by the
strictest limit); `levels` the approval settings from loosest to strictest and the backends;
`_schema` one file's tables as pydantic checks them. docs/guides/teaching-a-class.md shows a file.
"""

from __future__ import annotations

from .files import POLICY_ENV, current_policy, load_policy, policy_locations, reload_policy
from .levels import APPROVALS, BACKENDS
from .policy import Policy, PolicyError, Secret, Sourced, combine

__all__ = [
    "APPROVALS",
    "BACKENDS",
    "POLICY_ENV",
    "Policy",
    "PolicyError",
    "Secret",
    "Sourced",
    "combine",
    "current_policy",
    "load_policy",
    "policy_locations",
    "reload_policy",
]
