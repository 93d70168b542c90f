"""Every public error of the package is a `MeowgentError` (the contract of meowgent_nb/errors.py).

Public means named in the ``__all__`` of a module of ``meowgent_nb``, a private module's too: a
name exported anywhere can reach a person's ``except``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import meowgent_nb
from meowgent_nb import Agent, EvalCase, MeowgentError, ScriptedModel, SettingsError, evaluate
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.notebook.approvals import PolicyApprover


def public_errors() -> dict[str, type[BaseException]]:
    """Every exception class named in a module's ``__all__``, by its defining module and name."""
    found = {}
    for info in pkgutil.walk_packages(meowgent_nb.__path__, "meowgent_nb."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, BaseException):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_public_error_is_a_meowgent_error():
    errors = public_errors()
    assert "meowgent_nb.tools.context.ToolContextError" in errors  # the walk reaches the wings
    assert [name for name, error in sorted(errors.items()) if not issubclass(error, MeowgentError)] == []


@pytest.mark.parametrize(
    ("wrong", "message"),
    [
        (
            lambda: Agent(ScriptedModel(), max_turns=0),
            "Invalid Agent settings:\n- max_turns must be a whole number of at least 1, got 0",
        ),
        (
            lambda: evaluate([EvalCase("Hi", None)], tools=[], model=ScriptedModel(), concurrency=0),
            "concurrency must be a whole number of at least 1; got 0",
        ),
        (
            lambda: McpToolbox("notes"),
            "McpToolbox 'notes': give either a command (stdio) or url= (streamable HTTP)",
        ),
        (
            lambda: PolicyApprover("maybe", "why"),
            "PolicyApprover mode must be 'allow' or 'deny', got 'maybe'",
        ),
    ],
    ids=["Agent", "evaluate", "McpToolbox", "PolicyApprover"],
)
def test_a_wrong_setting_is_a_settings_error_that_except_value_error_still_catches(wrong, message):
    with pytest.raises(ValueError) as caught:
        wrong()
    assert (type(caught.value), str(caught.value)) == (SettingsError, message)
    assert isinstance(caught.value, MeowgentError)
