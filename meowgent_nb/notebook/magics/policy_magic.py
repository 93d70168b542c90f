"""``%agent policy``: the site's policy that applies, each value with the file it came from.

``%agent policy reload`` reads the policy files again (they are read once per process otherwise).
In a notebook it shows as a table; elsewhere as text. A server's key is never shown.
"""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any

from IPython.core.error import UsageError

from ..._html import escape
from ...policy import Policy, Secret, Sourced, current_policy, reload_policy

__all__ = ["PolicyView", "policy_command"]

# The order a person reads them in, and each as written in a file: what a kernel starts with,
# then what cannot be passed.
_SHOWN = {
    "model": "[defaults] model",
    "server_url": "[defaults] server_url",
    "ollama_host": "[defaults] ollama_host",
    "api_key": "[defaults] api_key",
    "api_key_env": "[defaults] api_key_env",
    "approve": "[defaults] approve",
    "tool_timeout": "[defaults] tool_timeout",
    "max_turns": "[defaults] max_turns",
    "approve_limit": "[limits] approve",
    "backends": "[limits] backends",
    "max_tool_timeout": "[limits] tool_timeout",
    "always_tool_rules": "[limits] allow_rules_on_always_tools",
    "trust_rules_files": "[limits] trust_rules_files",
    "shared_local": "[local] shared",
}


class PolicyView:
    """The policy as a person reads it: text (``repr``) or an HTML table in a notebook."""

    def __init__(self, policy: Policy):
        self.policy = policy

    def rows(self) -> list[tuple[str, str, str]]:
        """Each value that applies: its key as written in a file, the value (a key shown as ``***``),
        and the file (with the limit's key, for a default a limit set)."""
        found = {f.name: getattr(self.policy, f.name) for f in fields(self.policy)}
        rows = []
        for name, key in _SHOWN.items():
            value = found[name]
            if isinstance(value, Sourced):
                shown = value.where.split(" = ", 1)[1].rsplit(")", 1)[0]
                if isinstance(value.value, Secret) or name == "api_key":
                    shown = "*** (set; never shown)"
                elif name == "api_key_env":  # whether this kernel has the key, never the key itself
                    here = "set" if os.environ.get(str(value.value)) else "not set"
                    shown = f"{shown} ({here} in this kernel's environment)"
                rows.append((key, shown, value.file if value.key == key else f"{value.file}, {value.key}"))
        return rows

    def _looked(self) -> str:
        return "\n".join(f"  {path}" for path in self.policy.looked)

    def __repr__(self) -> str:
        if not self.policy.applies:
            return f"No site policy applies. Looked for policy files at:\n{self._looked()}"
        width = max(len(key) for key, _, _ in self.rows())
        lines = [f"{key:<{width}}  {value}   ({file})" for key, value, file in self.rows()]
        files = "\n".join(f"  {file}" for file in self.policy.files)
        return f"The site policy from:\n{files}\n" + "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.policy.applies:
            looked = "".join(f"<li><code>{escape(path)}</code></li>" for path in self.policy.looked)
            return f"<div class='meowgent-policy'>No site policy applies. Looked for policy files at:<ul>{looked}</ul></div>"
        left = "style='text-align:left'"  # JupyterLab right-aligns table cells; a key reads from the left
        rows = "".join(
            f"<tr><td {left}><code>{escape(key)}</code></td><td {left}><code>{escape(value)}</code></td>"
            f"<td {left}><code>{escape(file)}</code></td></tr>"
            for key, value, file in self.rows()
        )
        return (
            f"<div class='meowgent-policy'><b>The site policy</b><table><thead><tr><th {left}>Key</th>"
            f"<th {left}>Value</th><th {left}>From</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )


def policy_command(rest: str) -> Any:
    """``%agent policy`` (show it) or ``%agent policy reload`` (read the files again, then show it).

    Raises:
        UsageError: Other words.
        PolicyError: A policy file cannot be used.
    """
    if rest not in ("", "reload"):
        raise UsageError(
            f"%agent policy: unknown options {rest!r}; use %agent policy, or %agent policy reload."
        )
    return PolicyView(reload_policy() if rest == "reload" else current_policy())
