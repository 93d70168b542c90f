"""`ServedContext`: a served tool's `ToolContext`, whose progress, logs, forms and sampling go to
the MCP client over the call's own request.

`ToolServer` makes one per call. `progress` and `log` become notifications (`log` at or above the
level the client set, `ClientLevels`); `ask` and `sample` become requests to the client, or on
2026-07-28 questions inside the call's result (`served_rounds`). A client that did not declare
the capability cannot be asked (`ToolContextError`); the call's time limit stands still while it
answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import warnings
from collections.abc import Coroutine, Sequence
from typing import Any

from ...agent.running_call import RUNNING_CALL
from ...tools.context import LEVELS, Answer, ToolContextError
from ..content.elicit import ElicitSchemaError, check_content, form_from_schema
from .served_rounds import ServedCall, session_of

__all__ = ["ClientLevels", "ServedContext"]

_DEFAULT_LEVEL = "info"


class ClientLevels:
    """The log level each connected client asked for (``logging/setLevel``), by MCP session id."""

    def __init__(self) -> None:
        self._levels: dict[str | None, str] = {}
        self._lock = threading.Lock()

    async def set_level(self, ctx: Any, params: Any) -> Any:
        """The ``logging/setLevel`` handler."""
        import mcp_types as types

        with self._lock:
            self._levels[session_of(ctx)] = str(params.level)
        return types.EmptyResult()

    def level(self, ctx: Any) -> str:
        with self._lock:
            return self._levels.get(session_of(ctx), _DEFAULT_LEVEL)


class ServedContext:
    """The backend of a served call's `ToolContext`.

    Args:
        call: The served call (its request, the server's loop, its rounds on the 2026 protocol).
        level: The least severe level the client wants logged.
        tool: The tool's name (the logger's name the client sees).
    """

    def __init__(self, call: ServedCall, level: str, tool: str):
        self.call, self.loop, self.level, self.tool = call, call.loop, level, tool
        self.running = RUNNING_CALL.get()  # made on the call's thread: its agent call

    @property
    def request(self) -> Any:
        return self.call.request  # a retry's, after a round on the 2026 protocol

    def progress(self, done: float, total: float | None, message: str | None) -> None:
        self._run(self.request.session.report_progress(done, total, message))

    def log(self, level: str, message: str) -> None:
        if self.level in LEVELS and LEVELS.index(level) < LEVELS.index(self.level):
            return
        session = self.request.session
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore"
            )  # logging is deprecated in the 2026 protocol, not in the ones clients speak
            sent = session.send_log_message(
                level, message, logger=self.tool, related_request_id=self.request.request_id
            )
        self._run(sent)

    def ask(self, message: str, schema: dict[str, Any]) -> Answer:
        import mcp_types as types

        self._can("elicitation", "ask its person (elicitation)")
        try:  # the form the notebook would show: the same checks, in both worlds
            form = form_from_schema(message, schema)
        except ElicitSchemaError as error:
            raise ToolContextError(f"the tool {self.tool!r} asked for a form, but {error}") from None
        if self.call.back_channel:
            sent = self.request.session.elicit_form(
                message, schema, related_request_id=self.request.request_id
            )
            result = self._run(sent, held=True)
        else:  # 2026-07-28: the question goes inside the call's result
            asked = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            result = _as(types.ElicitResult, self._round(asked))
        content = dict(result.content) if result.action == "accept" and result.content is not None else None
        problems = check_content(form, content) if result.action == "accept" else []
        if problems:  # whatever the client says, the tool gets only what its form allows
            raise ToolContextError(
                f"the tool {self.tool!r} asked for a form, and the client's answer does not fit it: {'; '.join(problems)}"
            )
        return Answer(result.action, content)

    def sample(self, messages: Sequence[tuple[str, str]], system: str | None, max_tokens: int) -> str:
        import mcp_types as types

        self._can("sampling", "use its model (sampling)")
        said = [
            types.SamplingMessage(
                role=role if role in ("user", "assistant") else "user",
                content=types.TextContent(type="text", text=text),
            )
            for role, text in messages
        ]
        if self.call.back_channel:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # sampling is deprecated in the 2026 protocol only
                sent = self.request.session.create_message(
                    said,
                    max_tokens=max_tokens,
                    system_prompt=system,
                    related_request_id=self.request.request_id,
                )
            result = self._run(sent, held=True)
        else:
            params = types.CreateMessageRequestParams(
                messages=said, max_tokens=max_tokens, system_prompt=system
            )
            result = _as(types.CreateMessageResult, self._round(types.CreateMessageRequest(params=params)))
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return "\n".join(getattr(b, "text", f"[{getattr(b, 'type', 'unknown')} content]") for b in blocks)

    def _round(self, asked: Any) -> Any:
        """Ask inside the call's result (2026-07-28) and wait for the client's retry with the answer."""
        self._not_on_loop(None)
        with self.running.hold() if self.running is not None else contextlib.nullcontext():
            try:
                return self.call.question(asked)
            except TimeoutError as error:
                raise ToolContextError(f"the tool {self.tool!r} asked its client, but {error}") from None

    def _can(self, capability: str, what: str) -> None:
        declared = self.request.session.client_capabilities
        if getattr(declared, capability, None) is None:
            raise ToolContextError(
                f"the tool {self.tool!r} asked to {what}, but the MCP client did not declare {capability!r}:"
                f" use a client that offers {capability}"
            )

    def _not_on_loop(self, coroutine: Coroutine[Any, Any, Any] | None) -> None:
        if _running_loop() is self.loop:
            if coroutine is not None:
                coroutine.close()
            raise ToolContextError(
                f"the tool {self.tool!r} is an async def, so it cannot wait for its client here: make it a plain def"
            )

    def _run(self, coroutine: Coroutine[Any, Any, Any], held: bool = False) -> Any:
        """``coroutine`` on the server's loop, from the tool's thread; the client's errors are the tool's."""
        self._not_on_loop(coroutine)
        from mcp import MCPError

        hold = self.running.hold() if held and self.running is not None else contextlib.nullcontext()
        with hold:
            try:
                return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()
            except MCPError as error:
                raise ToolContextError(f"the MCP client refused: {error}") from None


def _as(kind: Any, answer: Any) -> Any:
    """The client's answer as ``kind`` (the SDK may have read it as another arm of the union)."""
    if isinstance(answer, kind):
        return answer
    data = answer.model_dump(by_alias=True, exclude_none=True) if hasattr(answer, "model_dump") else answer
    return kind.model_validate(data)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # a tool's thread: no loop runs there
        return None
