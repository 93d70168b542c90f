"""``list_variables`` and ``look_at``: the person's variables, listed and looked at one by one.

``list_variables`` gives each variable's name, type and shape or length, never its value.
``look_at(name)`` shows one variable the way a ``{name}`` in a ``%%agent`` cell shows it
(`meowgent_nb.tools.values.value_view`: bounded, inert), found by its name alone: no expression,
attribute or item is evaluated, so the model cannot make it run code.

What is listed: every name of the namespace that does not begin with ``_`` (which also leaves
out IPython's ``_``, ``__``, ``___``, ``_i*``, ``_oh``...), is not IPython's own (``In``,
``Out``, ``exit``, ``quit``, ``get_ipython``), and holds data: modules, classes and anything
callable (functions, methods, tools) are left out. In the namespace's order, at most ``limit``.

Reading a value never runs its code: the type comes from ``type(value)`` through `type`'s own
descriptors (a metaclass cannot intervene), ``len`` is called only on builtin containers of
exactly their type, and ``.shape`` is read only when the value's type and the class that
defines ``shape`` both come from numpy or pandas.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ...tools import Tool, tool
from ...tools.values import VIEW_TOKENS, value_view

__all__ = [
    "IPYTHON_NAMES",
    "LIMIT",
    "describe_value",
    "list_variables_tool",
    "look_at_tool",
    "variable_view",
    "variables_listing",
]

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in a person's namespace (besides those beginning with ``_``)."""
LIMIT = 50
"""Variables listed at most, by default."""
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray, range, collections.deque)
_SHAPED = frozenset({"numpy", "pandas"})
# type's own getters: read through them, a metaclass's properties never run.
_TYPE_GET = {
    name: type.__dict__[name].__get__ for name in ("__qualname__", "__module__", "__mro__", "__dict__")
}


def _type_attr(cls: type, name: str) -> Any:
    return _TYPE_GET[name](cls, type)


def _from_shaped_library(cls: type) -> bool:
    module = _type_attr(cls, "__module__")
    return isinstance(module, str) and module.split(".")[0] in _SHAPED


def _shape(value: Any) -> tuple[int, ...] | None:
    cls = type(value)
    if not _from_shaped_library(cls):
        return None
    for klass in _type_attr(cls, "__mro__"):
        found = _type_attr(klass, "__dict__").get("shape")
        if found is None:
            continue
        if not _from_shaped_library(klass) or not hasattr(type(found), "__get__"):
            return None
        shape = found.__get__(value, cls)
        if type(shape) is tuple and all(type(n) is int for n in shape):
            return shape
        return None
    return None


def describe_value(value: Any) -> str:
    """What ``list_variables`` says of one value: ``DataFrame, shape (3, 2)``, ``list, len 4``, ``int``.

    Args:
        value: The value; none of its own code is run.

    Returns:
        Its type's name, with its shape (numpy and pandas) or length (builtin containers).
    """
    cls = type(value)
    name = _type_attr(cls, "__qualname__")
    if cls in _SIZED:
        return f"{name}, len {len(value)}"
    shape = _shape(value)
    if shape is not None:
        return f"{name}, shape ({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
    return name


def _listed(name: Any, value: Any) -> bool:
    if not isinstance(name, str) or name.startswith("_") or name in IPYTHON_NAMES:
        return False
    cls = type(value)
    return not (issubclass(cls, (ModuleType, type)) or callable(value))


def variables_listing(namespace: Mapping[str, Any], *, limit: int = LIMIT) -> str:
    """The text ``list_variables`` returns: one line per variable, ``name: description``.

    Args:
        namespace: The person's names (``get_ipython().user_ns``, or ``globals()``).
        limit: Variables listed at most; a last line says how many more there are.

    Returns:
        The lines, or ``No variables.`` when there is none to list.
    """
    listed = [(name, value) for name, value in dict(namespace).items() if _listed(name, value)]
    lines = [f"{name}: {describe_value(value)}" for name, value in listed[:limit]]
    if len(listed) > limit:
        lines.append(f"... and {len(listed) - limit} more, not listed (at most {limit} are)")
    return "\n".join(lines) or "No variables."


def _check_namespace(tool_name: str, namespace: object) -> None:
    if not isinstance(namespace, Mapping):
        raise TypeError(
            f"{tool_name} needs the namespace as a mapping of names to values, not"
            f" {type(namespace).__name__}; pass get_ipython().user_ns or globals()"
        )


def list_variables_tool(namespace: Mapping[str, Any], *, limit: int = LIMIT) -> Tool:
    """The ``list_variables`` tool over ``namespace``: no arguments, read only, no approval.

    Args:
        namespace: The person's names (``get_ipython().user_ns``, or ``globals()``); read at
            each call, so it lists what is there then.
        limit: Variables listed at most (at least 1).

    Returns:
        The tool.

    Raises:
        TypeError: ``namespace`` is not a mapping.
        ValueError: ``limit`` is below 1.
    """
    _check_namespace("list_variables", namespace)
    if type(limit) is not int or limit < 1:
        raise ValueError(f"list_variables' limit must be a whole number of at least 1, not {limit!r}")

    def list_variables() -> str:
        """List the variables in the person's notebook: each one's name, type, and shape or length.

        Values are not shown. Modules, functions, classes and names beginning with _ are left out.

        Returns:
            One line per variable, like "df: DataFrame, shape (1000, 3)" or "xs: list, len 12".
        """
        return variables_listing(namespace, limit=limit)

    return tool(list_variables, read_only=True)


def variable_view(namespace: Mapping[str, Any], name: str, *, tokens: int = VIEW_TOKENS) -> str:
    """The text ``look_at(name)`` returns: the variable's view, or why there is none.

    Args:
        namespace: The person's names.
        name: A variable's name as ``list_variables`` lists it; nothing else is read (``df.x``,
            ``xs[0]`` or ``f()`` are not variables and are refused).
        tokens: The view's budget (see `value_view`).

    Returns:
        ``name (kind):`` and the view, or a one-line ``Error:`` naming the variables there are.
    """
    shown = dict(namespace)
    if not isinstance(name, str) or name not in shown or not _listed(name, shown[name]):
        there = [n for n, value in shown.items() if _listed(n, value)]
        listing = ", ".join(there[:LIMIT]) + (f" and {len(there) - LIMIT} more" if len(there) > LIMIT else "")
        what = "is not a variable's name" if not str(name).isidentifier() else "is not a variable"
        return f"Error: {str(name)[:80]!r} {what} of the notebook; the variables are: {listing or 'none'}."
    view = value_view(shown[name], tokens=tokens)
    return f"{name} ({view.kind}):\n{view.text}"


def look_at_tool(namespace: Mapping[str, Any], *, tokens: int = VIEW_TOKENS) -> Tool:
    """The ``look_at`` tool over ``namespace``: one variable's bounded view, read only, no approval.

    Args:
        namespace: The person's names, read at each call.
        tokens: The budget of each view (at least 50).

    Returns:
        The tool.

    Raises:
        TypeError: ``namespace`` is not a mapping.
        ValueError: ``tokens`` is below 50.
    """
    _check_namespace("look_at", namespace)
    if type(tokens) is not int or tokens < 50:
        raise ValueError(f"look_at's budget must be a whole number of at least 50 tokens, not {tokens!r}")

    def look_at(name: str) -> str:
        """Look at one variable of the person's notebook: its type, size and a sample of its values.

        Args:
            name: The variable's name, exactly as list_variables gives it (a name, not an expression).

        Returns:
            A bounded view: a table's shape, columns and first and last rows; a list's length and
            first items; or the value's text.
        """
        return variable_view(namespace, name, tokens=tokens)

    return tool(look_at, read_only=True)
