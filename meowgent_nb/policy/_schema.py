"""One policy file as pydantic reads it: its three tables, every key's type, and the error a wrong one gives."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from .levels import APPROVALS, BACKENDS

__all__ = ["PolicyFile", "parse_policy"]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Defaults(_Table):
    """``[defaults]``: what every kernel starts with; a person may change each within the limits."""

    model: str | None = Field(default=None, min_length=1)
    server_url: str | None = Field(default=None, min_length=1)
    ollama_host: str | None = Field(default=None, min_length=1)
    api_key_env: str | None = Field(default=None, min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    api_key: SecretStr | None = None
    approve: Literal["ask", "every", "allow", "deny"] | None = None
    tool_timeout: float | None = Field(default=None, gt=0)
    max_turns: int | None = Field(default=None, ge=1)


class Limits(_Table):
    """``[limits]``: what a person's settings cannot pass."""

    approve: Literal["ask", "every", "deny"] | None = None
    backends: list[Literal["ollama", "openai", "local"]] | None = None
    tool_timeout: float | None = Field(default=None, gt=0)
    allow_rules_on_always_tools: bool | None = None
    trust_rules_files: bool | None = None


class Local(_Table):
    """``[local]``: the embedded model."""

    shared: bool | None = None


class PolicyFile(_Table):
    """A whole policy file."""

    defaults: Defaults = Field(default_factory=Defaults)
    limits: Limits = Field(default_factory=Limits)
    local: Local = Field(default_factory=Local)


# What each key takes, as the error says it.
_TAKES = {
    (
        "defaults",
    ): "a table of model, server_url, ollama_host, api_key_env, api_key, approve, tool_timeout, max_turns",
    ("limits",): "a table of approve, backends, tool_timeout, allow_rules_on_always_tools, trust_rules_files",
    ("local",): "a table of shared",
    ("defaults", "model"): 'a model spec as %%agent -m takes it, e.g. "openai:qwen2.5-7b-instruct"',
    ("defaults", "server_url"): 'the OpenAI-compatible server\'s URL, e.g. "http://llm.hub:8000/v1"',
    ("defaults", "ollama_host"): 'the Ollama server\'s address, e.g. "http://llm.hub:11434"',
    (
        "defaults",
        "api_key_env",
    ): 'the name of an environment variable holding the server\'s key, e.g. "CLASS_LLM_KEY"',
    ("defaults", "api_key"): "the server's key as a string",
    ("defaults", "approve"): f"one of {', '.join(map(repr, APPROVALS))}",
    ("defaults", "tool_timeout"): "seconds, a number above 0",
    ("defaults", "max_turns"): "a whole number of at least 1",
    ("limits", "approve"): "the loosest approval a person may choose: 'ask', 'every' or 'deny'",
    ("limits", "backends"): f"a list of the backends allowed, of {', '.join(map(repr, BACKENDS))}",
    ("limits", "tool_timeout"): "the largest tool time limit in seconds, a number above 0",
    (
        "limits",
        "allow_rules_on_always_tools",
    ): 'true or false (false: no allow rule for tools marked approval="always")',
    ("limits", "trust_rules_files"): "true or false (false: no folder's rules file is trusted)",
    ("local", "shared"): "true or false (true: the kernels of one machine share one embedded model process)",
}
_TOP = ("defaults", "limits", "local")


def parse_policy(data: dict[str, Any]) -> tuple[PolicyFile | None, list[str]]:
    """A file's TOML as a `PolicyFile`, or None and each problem in one line ("[limits] approve: ...")."""
    try:
        return PolicyFile.model_validate(data), []
    except ValidationError as error:
        return None, sorted({_problem(e) for e in error.errors()})


def _problem(error: Any) -> str:
    loc: tuple[str, ...] = tuple(str(part) for part in error["loc"] if isinstance(part, str))
    table = loc[0] if loc else "the file"
    key = f"[{table}] {'.'.join(loc[1:])}" if len(loc) > 1 else table
    if error["type"] == "extra_forbidden":
        if len(loc) == 1:
            return f"unknown table or key {table!r}: a policy file has the tables {', '.join(_TOP)}"
        return f"unknown key {key}: [{table}] is {_TAKES.get(loc[:1], '')}"
    takes = _TAKES.get(loc[:2], "another value")
    given = error.get("input")
    shown = "(the key)" if loc[:2] == ("defaults", "api_key") else repr(given)
    return f"{key} takes {takes}, got {shown}"
