"""Every public error of the package is a `MeowgentError` (the contract of meowgent_nb/errors.py).

Public means named in the ``__all__`` of a module of ``meowgent_nb``, a private module's too: a
name exported anywhere can reach a person's ``except``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import meowgent_nb
from meowgent_nb.errors import MeowgentError


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
