"""Assertions on what a model was sent: the system prompt, the tools offered, the person's message.

They read the requests a `ScriptedModel` or `FunctionModel` records (``model.requests``), and a
failure shows what was actually sent, so the fix is visible in the test's output.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import SettingsError
from ..models.base import ModelRequest
from ..tools.calls import is_tool_result

__all__ = ["assert_last_user_message", "assert_system_prompt", "assert_tools_offered", "sent_request"]


def sent_request(model: Any, request: int = -1) -> tuple[ModelRequest, str]:
    """One request ``model`` received, and how a message names it ("request 2 of 3").

    Args:
        model: A model that records its requests (``.requests``), or one `ModelRequest`.
        request: Which request, as a list index: -1 (the default) is the last, 0 the first.

    Raises:
        TypeError: ``model`` keeps no list of requests.
        AssertionError: It was sent no request, or fewer than ``request`` asks for.
    """
    if isinstance(model, ModelRequest):
        return model, "the request"
    requests = getattr(model, "requests", None)
    if not isinstance(requests, Sequence):
        raise TypeError(
            f"{model!r} keeps no list of the requests it was sent; use a ScriptedModel or a"
            " FunctionModel (meowgent_nb.testing.scripted_model), which record them in .requests"
        )
    if not requests:
        raise AssertionError(f"{model!r} was sent no request")
    if (
        not isinstance(request, int)
        or isinstance(request, bool)
        or not -len(requests) <= request < len(requests)
    ):
        raise AssertionError(
            f"{model!r} was sent {len(requests)} request(s); there is no request index {request!r}"
        )
    number = request % len(requests) + 1
    return requests[request], f"request {number} of {len(requests)}"


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in str(text).splitlines()) or "    (empty)"


def assert_system_prompt(
    model: Any, contains: str | None = None, *, equals: str | None = None, request: int = -1
) -> None:
    """The system prompt of a request contains ``contains`` (or is exactly ``equals``).

    Raises:
        AssertionError: It does not; the message shows the whole system prompt that was sent.
        SettingsError: Neither ``contains`` nor ``equals`` was given.
    """
    if contains is None and equals is None:
        raise SettingsError("assert_system_prompt: say what to look for, contains=... or equals=...")
    sent, which = sent_request(model, request)
    first = sent.messages[0] if sent.messages else {}
    system = first.get("content", "") if first.get("role") == "system" else None
    if system is None:
        raise AssertionError(f"{which} has no system prompt; its first message is {dict(first)!r}")
    if equals is not None and system != equals:
        raise AssertionError(
            f"the system prompt of {which} is not the one expected; it was:\n{_indented(system)}"
        )
    if contains is not None and contains not in system:
        raise AssertionError(
            f"the system prompt of {which} does not contain {contains!r}; it was:\n{_indented(system)}"
        )


def assert_tools_offered(model: Any, names: Iterable[str], *, request: int = -1) -> None:
    """A request offered exactly these tools (by name, in any order), whatever the protocol.

    Raises:
        AssertionError: It offered others; the message lists what was offered, missing and extra.
    """
    if isinstance(names, str):
        raise TypeError(
            f"assert_tools_offered: give the tool names as a list, e.g. [{names!r}], not one string"
        )
    sent, which = sent_request(model, request)
    offered = [tool.name for tool in sent.offered]
    wanted = list(names)
    if sorted(offered) != sorted(wanted):
        missing = [name for name in wanted if name not in offered]
        extra = [name for name in offered if name not in wanted]
        raise AssertionError(
            f"{which} offered the tools {offered!r}, not {wanted!r}"
            + (f"; missing: {missing!r}" if missing else "")
            + (f"; not expected: {extra!r}" if extra else "")
        )


def assert_last_user_message(model: Any, text: str, *, request: int = -1) -> None:
    """The last message the person wrote in a request is exactly ``text``.

    Tool results that go back to the model as user messages (``<tool_response>`` blocks, in the
    ``xml`` and ``json`` protocols) are not the person's and are passed over (known by how they
    were made, `is_tool_result`, not by their text).

    Raises:
        AssertionError: It differs, or there is none; the message shows the one that was sent.
    """
    sent, which = sent_request(model, request)
    users = [
        str(m.get("content", "")) for m in sent.messages if m.get("role") == "user" and not is_tool_result(m)
    ]
    if not users:
        roles = [m.get("role") for m in sent.messages]
        raise AssertionError(f"{which} has no message from the person; roles sent: {roles!r}")
    if users[-1] != text:
        raise AssertionError(
            f"the last user message of {which} is not {text!r}; it was:\n{_indented(users[-1])}"
        )
