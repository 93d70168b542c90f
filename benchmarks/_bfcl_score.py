"""BFCL's AST rules for a first turn's calls, without bfcl-eval's imports.

bfcl-eval's own checker (``bfcl_eval/eval_checker/ast_eval/ast_checker.py``) imports the model
registry, and with it every provider's client, so this module follows its published rules
instead, for Python-style categories:

- The call names the expected function (a ``.`` in a BFCL name is written ``_``, as BFCL does
  for OpenAI-style tools, so both sides are compared that way).
- Every required parameter is present; no parameter outside the function's schema or the
  possible answer; a parameter the answer lists without ``""`` (its "may be left out") must be
  given.
- Types as BFCL checks them (``type(value)``, so ``True`` is no integer): an int is accepted for
  a float; arrays are checked one level deep; a possible answer of another type than the schema
  says (a variable name written as a string) is compared as is.
- Values: each among the possible answers. Strings (also inside lists and dicts) are compared
  after BFCL's normalisation: lower case, without spaces and ``,./-_*^``, ``'`` read as ``"``.
  Dicts key by key, lists of dicts dict by dict in order.
- ``simple`` / ``multiple`` categories: exactly one call. ``parallel`` ones: as many calls as
  expected, each expected call matched by a different call in any order. Irrelevance: pass iff
  no call; relevance: pass iff at least one.

A case's result is ``""`` when it passes, else one failure kind (`KINDS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KINDS", "bfcl_name", "score", "standardize"]

KINDS = (
    "no call",
    "unreadable call",
    "wrong tool",
    "missing argument",
    "extra argument",
    "wrong type",
    "wrong value",
    "extra calls",
    "too few calls",
)
"""Why a case fails, in the order the report lists them."""

_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_NESTED = ("array", "tuple")
_PUNCTUATION = re.compile(r"[ ,./\-_*^]")

Call = tuple[str, Mapping[str, Any]]
"""A call as the model wrote it: the tool's name and its arguments."""


def bfcl_name(name: str) -> str:
    """A BFCL function name as an OpenAI-style tool has it: ``math.gcd`` becomes ``math_gcd``."""
    return name.replace(".", "_")


def standardize(text: str) -> str:
    """BFCL's string normalisation: "April 1, 2024" and "april 1 2024" compare equal."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


def score(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[Call],
    answers: Sequence[Mapping[str, Mapping[str, list]]] | None,
    *,
    unreadable: bool = False,
) -> str:
    """Why the first turn's calls fail the case under BFCL's AST rules; ``""`` when they pass.

    Args:
        category: The BFCL category, e.g. ``"live_simple"``, ``"parallel"``, ``"irrelevance"``.
        functions: The case's function documents, as BFCL gives them.
        calls: The calls the model's first turn made that could be read, in order.
        answers: The case's ``ground_truth``: one ``{name: {param: [possible values]}}`` per
            expected call; None for the irrelevance and relevance categories.
        unreadable: The turn also wrote a call that could not be read. BFCL counts an answer
            it cannot decode as no call, so irrelevance still passes; elsewhere it fails so.
    """
    if "irrelevance" in category:
        return "extra calls" if calls else ""
    if "relevance" in category:
        return "" if calls else ("unreadable call" if unreadable else "no call")
    if answers is None:
        raise ValueError(f"category {category!r} needs the possible answers")
    if not calls:
        return "unreadable call" if unreadable else "no call"
    if unreadable:
        return "unreadable call"
    if len(calls) > len(answers):
        return "extra calls"
    if len(calls) < len(answers):
        return "too few calls"
    by_name = {bfcl_name(f["name"]): f for f in functions}
    if "parallel" not in category:
        return _check_call(calls[0], answers[0], by_name)
    unmatched = list(range(len(calls)))
    for answer in answers:
        kinds = [_check_call(calls[i], answer, by_name) for i in unmatched]
        if "" in kinds:
            unmatched.pop(kinds.index(""))
            continue
        # Say how the closest call failed: one to the right tool if there is one.
        return next((k for k in kinds if k != "wrong tool"), "wrong tool")
    return ""


def _check_call(call: Call, answer: Mapping[str, Mapping[str, list]], by_name: Mapping[str, Any]) -> str:
    """BFCL's ``simple_function_checker`` for one call against one expected call."""
    ((expected, possible),) = answer.items()
    name = bfcl_name(expected)
    called, arguments = call
    if bfcl_name(called) != name:
        return "wrong tool"
    parameters = by_name[name]["parameters"]
    details = parameters.get("properties", {})
    if any(p not in arguments for p in parameters.get("required", [])):
        return "missing argument"
    for param, value in arguments.items():
        if param not in details or param not in possible:
            return "extra argument"
        kind = _check_value(value, details[param], possible[param])
        if kind:
            return kind
    if any(p not in arguments and "" not in values for p, values in possible.items()):
        return "missing argument"
    return ""


def _check_value(value: Any, detail: Mapping[str, Any], possible: list) -> str:
    type_name = detail.get("type", "string")
    expected = _TYPES.get(type_name, str)
    nested = _TYPES.get(detail.get("items", {}).get("type", "string"), str) if type_name in _NESTED else None
    if type_name == "float" and type(value) is int:
        value = float(value)  # BFCL allows Python's int-to-float conversion
    valid, is_variable = _type_ok(value, possible, expected, nested)
    if not valid:
        return "wrong type"
    if not is_variable:
        if expected is dict:
            return "" if _dict_ok(value, possible) else "wrong value"
        if expected is list and nested is dict:
            return "" if _list_dict_ok(value, possible) else "wrong value"
        if expected is str:
            strings = [standardize(p) for p in possible if type(p) is str]
            return "" if standardize(value) in strings else "wrong value"
        if expected is list:
            lists = [_normal(p) for p in possible if type(p) is list]
            return "" if _normal(value) in lists else "wrong value"
    return "" if value in possible else "wrong value"


def _answer_type(possible: list) -> type | None:
    return next((type(p) for p in possible if p != ""), None)


def _type_ok(value: Any, possible: list, expected: type, nested: type | None) -> tuple[bool, bool]:
    """BFCL's ``type_checker``: (valid, the answer is a variable rather than a value)."""
    answer_type = _answer_type(possible)
    is_variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for item in possible:
            if type(item) is not list or all(_type_ok(v, item, nested, None)[0] for v in value):
                return True, is_variable
        return False, is_variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, is_variable


def _normal(items: list) -> list:
    return [standardize(i) if type(i) is str else i for i in items]


def _dict_ok(value: dict, possible: list) -> bool:
    for answer in possible:
        if answer == "":
            continue
        keys_ok = all(
            key in answer and (standardize(v) if type(v) is str else v) in _normal(answer[key])
            for key, v in value.items()
        )
        if keys_ok and all(key in value or "" in options for key, options in answer.items()):
            return True
    return False


def _list_dict_ok(value: list, possible: list) -> bool:
    return any(
        len(value) == len(answer) and all(_dict_ok(v, [a]) for v, a in zip(value, answer))
        for answer in possible
        if type(answer) is list
    )
