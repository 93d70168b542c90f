"""The agent loop: stream the model, parse calls, validate, approve, run in parallel, feed back.

One turn's request and the reading of its answer are `_turn`'s; running the calls is `call_runner`'s.
The settings the loop and its `CallRunner` share are one `RunSettings`, built when the agent is.
`Agent.stream` is the one implementation; `Agent.arun` and `Agent.run` collect its events. The
agent keeps the conversation (`Agent.messages`) across runs, also after an error or an
interrupt, so the next run continues coherently.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import uuid
import warnings
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

from .._async import keep_awake, run_to_completion
from ..models.base import Model, ModelRequest, ToolsRefused, ToolSupport, describe_model
from ..protocols.base import ToolProtocol
from ..protocols.prompt import DEFAULT_SYSTEM, REQUIRED_NOTICE
from ..protocols.registry import FOLLOW_MODEL, get_protocol
from ..tools.core import Tool, ToolResult
from ..tools.media import McpImage
from ..tools.output import MAX_DEPTH, MAX_ITEMS
from ._images import MAX_IMAGES, accepts_images, attach_images, given_images, result_images
from ._retry import asking
from ._settings import (
    Approve,
    RunSettings,
    agent_problems,
    check_policy,
    check_settings,
    policy_defaults,
    settings_problems,
)
from ._turn import TurnAnswer, name_index, read_turn, turn_request
from .approvals import Approver
from .call_runner import CallRunner
from .events import (
    AgentEvent,
    ContextCompacted,
    FinalAnswer,
    ModelStatus,
    RunStart,
    TurnEnd,
)
from .result import AgentResult
from .rules import Rule, Rules
from .tracing import captures_content, tracer_provider_of
from .window import ContextRecord, ContextUse, ToolsBlock, answer_tokens, context_window, message_text
from .window.compaction import CONTEXT_POLICIES, Compacted, Compaction, ContextPolicy

_CONTEXT_KEPT = 200  # requests whose record an agent keeps (see context_log)
_P = ParamSpec("_P")
_R = TypeVar("_R")


__all__ = ["Agent", "AgentResult"]

ToolChoice = str  # "auto", "none", "required", or a tool name

# The order Agent took its settings in when they could be passed by position (until 0.x).
_POSITIONAL = (
    "tools",
    "approver",
    "protocol",
    "max_turns",
    "max_workers",
    "tool_timeout",
    "system",
    "tool_choice",
    "ask",
    "think",
    "max_output_chars",
    "max_output_items",
    "max_output_depth",
    "repeat_calls",
    "max_repeated_failures",
    "tool_search",
    "always_show",
    "context",
    "rules",
)
_OLD_APPROVE = {"marked": "ask"}

REMOVED_SEARCH = (
    "Agent: tool_search and always_show were removed and are ignored (searching for tools did not"
    " help the embedded model at 50 to 100 tools): every offered tool is described. Leave them out."
)


def _old_spellings(init: Callable[_P, _R]) -> Callable[_P, _R]:
    """``Agent.__init__``, also taking for one more release, with a DeprecationWarning naming the
    new form: settings passed by position after the model, ``ask=``, and ``"marked"``."""

    @functools.wraps(init)
    def accepting(*args: Any, **kwargs: Any) -> Any:
        self, given = args[0], list(args[1:])
        if "model" not in kwargs and given:
            kwargs["model"] = given.pop(0)
        if len(given) > len(_POSITIONAL):
            raise TypeError(f"Agent() takes the model and at most {len(_POSITIONAL)} settings")
        if given:
            names = _POSITIONAL[: len(given)]
            twice = [name for name in names if name in kwargs]
            if twice:
                raise TypeError(f"Agent() got multiple values for argument {twice[0]!r}")
            keywords = ", ".join(f"{'approve' if name == 'ask' else name}=..." for name in names)
            warnings.warn(
                f"Agent's settings after the model are keyword-only: write Agent(model, {keywords});"
                " passing them by position is deprecated.",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs.update(zip(names, given))
        if "ask" in kwargs:
            if "approve" in kwargs:
                raise TypeError("Agent() got both ask= and approve=; pass approve= only")
            ask = kwargs.pop("ask")
            kwargs["approve"] = new = _OLD_APPROVE.get(ask, ask) if isinstance(ask, str) else ask
            warnings.warn(
                f"Agent(ask={ask!r}) is deprecated: write Agent(approve={new!r}).",
                DeprecationWarning,
                stacklevel=2,
            )
        elif isinstance(kwargs.get("approve"), str) and kwargs["approve"] in _OLD_APPROVE:
            new = _OLD_APPROVE[kwargs["approve"]]
            warnings.warn(
                f"Agent(approve={kwargs['approve']!r}) is deprecated: write Agent(approve={new!r}).",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs["approve"] = new
        kwargs.update(policy_defaults(kwargs))  # a site's policy gives the settings not given
        return init(self, **kwargs)  # type: ignore[call-arg]

    return accepting  # type: ignore[return-value]


class _Setting:
    """An `Agent` attribute that reads, and sets, its `RunSettings` field of the same name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, agent: Any, owner: type | None = None) -> Any:
        return self if agent is None else getattr(agent.settings, self.name)

    def __set__(self, agent: Any, value: Any) -> None:
        settings = dataclasses.replace(agent.settings, **{self.name: value})
        check_policy(settings, agent.approver, written="agent.{} = {!r}")  # the policy holds after too
        agent.settings = settings


class Agent:
    """A conversation with a model that can call tools: ``Agent(model, tools=[...], ...)``.

    Every setting after ``model`` is keyword-only; those each run's loop and `CallRunner` share
    are one `RunSettings` (``agent.settings``), which ``agent.max_turns`` and the like read and set.
    docs/guides/agent-cells.md explains each setting.

    Args:
        model: A `Model`, or a name `resolve_model` reads (``"ollama:NAME"``, ``"local"``, ``"auto"``, ...).
        tools: The tools the model may call.
        approver: Decides on calls that need approval; without one they are denied.
        rules: Rules on the calls' arguments (``"delete_file path=scratch/** -> allow"``), asked
            before the approver, besides those of a rules file in the working directory; or a `Rules`.
        protocol: ``"auto"`` (the model's own: ``native`` where its template has tools,
            ``decide`` on the embedded models, else ``xml``; see `choose_protocol`), ``"xml"``,
            ``"native"``, ``"json"``, ``"list"``, ``"decide"``, or a `ToolProtocol`
            (`protocols.registry`).
        max_turns: Model requests per run; the last one offers no tools.
        max_workers: Tool calls of one turn that run at the same time.
        tool_timeout: Seconds a call may take when its tool sets no timeout; None: no limit.
        system: Your instructions, placed before the tool rules in the system prompt.
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` or the one tool name to offer.
        approve: ``"ask"`` (tools marked ``approval=True`` and calls the rules ask about) or
            ``"every"`` call goes to the approver.
        think: Ask a thinking model to think (True) or not (False); None leaves it to the model.
        max_output_chars: Tool output longer than this is cut (start and end kept); None: no limit.
        max_output_items: Entries of a list or object written out at each level of a result.
        max_output_depth: Levels of nesting of a result written out.
        repeat_calls: Whether a call identical to one that succeeded in this run runs again
            (by default the model gets the earlier result, which breaks small models' loops).
        max_repeated_failures: Consecutive identical failures of one call that end the run
            (``result.stopped == "repeated_failure"``); None: never.
        tool_search, always_show: Removed; given, they warn and are ignored.
        context: When a request would not fit the model's window: ``"compact"``, ``"summarize"``,
            ``"error"`` (raise `ContextFull`) or ``"off"``; see `window.compaction`.
        retry_attempts: Times a model request is asked in all when the server fails in a way
            asking again may mend (a cut answer, a busy or restarting server: `RetryCause`) before
            the model began a call; each attempt is a `ModelRetry` event, and what the failed one
            streamed is dropped. 1: never ask again.
        retry_seconds: Seconds a turn may wait in all between its attempts.
        retry_delay: Seconds before the second attempt; each next wait doubles, give or take 50 %
            (a server's ``Retry-After`` instead, where it sends one).
        tracer_provider: An OpenTelemetry ``TracerProvider`` each run's spans go to; None: the
            global one, where a person set one, else runs are not traced (see `agent.tracing`).
        trace_content: Whether prompts, answers, tool arguments and results go into the spans
            (masked); None: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` decides.
        trace_mask: Regular expressions of secrets never put in a span (the cassettes' `Mask`);
            a cassette model's own mask applies too.
    """

    approve = _Setting()
    max_turns = _Setting()
    max_workers = _Setting()
    tool_timeout = _Setting()
    max_output_chars = _Setting()
    max_output_items = _Setting()
    max_output_depth = _Setting()
    repeat_calls = _Setting()
    max_repeated_failures = _Setting()
    retry_attempts = _Setting()
    retry_seconds = _Setting()
    retry_delay = _Setting()

    @_old_spellings
    def __init__(
        self,
        model: Model | str | None,
        *,
        tools: Iterable[Tool] = (),
        approver: Approver | None = None,
        protocol: str | ToolProtocol = FOLLOW_MODEL,
        max_turns: int = 8,
        max_workers: int = 8,
        tool_timeout: float | None = 30.0,
        system: str | None = None,
        tool_choice: ToolChoice = "auto",
        approve: Approve = "ask",
        think: bool | None = None,
        max_output_chars: int | None = 4000,
        max_output_items: int = MAX_ITEMS,
        max_output_depth: int = MAX_DEPTH,
        repeat_calls: bool = False,
        max_repeated_failures: int | None = 3,
        tool_search: object = None,
        always_show: object = None,
        context: ContextPolicy = "compact",
        rules: Rules | Iterable[str | Rule] = (),
        retry_attempts: int = 8,
        retry_seconds: float = 120.0,
        retry_delay: float = 1.0,
        tracer_provider: Any = None,
        trace_content: bool | None = None,
        trace_mask: Iterable[str] = (),
    ):
        if model is None or isinstance(model, str):  # "ollama:NAME", "local", "local:PATH", a name
            from ..models.resolve import resolve_model

            model = resolve_model(model)
        self.model = model
        self.tools = list(tools)
        self._approver = approver
        self.rules = (
            rules if isinstance(rules, Rules) else Rules(rules, folders=["."], source="Agent(rules=...)")
        )
        """What rules decide calls before the approver; ``agent.rules.add("TOOL ARG=... -> allow")``."""
        self.settings = RunSettings(
            approve=approve,
            max_turns=max_turns,
            max_workers=max_workers,
            tool_timeout=tool_timeout,
            max_output_chars=max_output_chars,
            max_output_items=max_output_items,
            max_output_depth=max_output_depth,
            repeat_calls=repeat_calls,
            max_repeated_failures=max_repeated_failures,
            retry_attempts=retry_attempts,
            retry_seconds=retry_seconds,
            retry_delay=retry_delay,
        )
        """What each run's loop and `CallRunner` share; ``agent.max_turns`` and the like read and set it."""
        self.system = system
        self.tool_choice = tool_choice
        self.think = think
        if tool_search is not None or always_show is not None:
            warnings.warn(REMOVED_SEARCH, stacklevel=3)  # past _old_spellings, to the caller
        self.context: ContextPolicy = context
        problems = []
        if context not in CONTEXT_POLICIES:
            problems.append(
                f"context must be one of {', '.join(map(repr, CONTEXT_POLICIES))}, got {context!r}"
            )
        try:
            self.protocol = protocol
        except ValueError as error:
            problems.append(str(error))
        problems += settings_problems(self.settings)
        problems += agent_problems(self.tools, tool_choice)
        given = [rule for _, rule, source in self.rules.numbered() if source == "Agent(rules=...)"]
        for warning in self.rules.unknown_tools(self.tools, given):
            warnings.warn(f"Agent: {warning}", stacklevel=3)  # past _old_spellings, to the caller
        check_settings(problems)
        check_policy(self.settings, approver, self.rules, self.tools)
        self.messages: list[dict[str, Any]] = []
        """The whole conversation, without the system prompt (which is rebuilt each turn)."""
        self._call_count = 0
        self.last_result: AgentResult | None = None
        """The latest run's result; also when it was interrupted or failed (``stopped`` then says
        ``"interrupted"`` or ``"error"``, ``text`` holds the answer as far as it got)."""
        self._progress: tuple[TurnAnswer, int] = (TurnAnswer(), 0)
        self.context_log: deque[ContextRecord] = deque(maxlen=_CONTEXT_KEPT)
        """What each request of the conversation sent and got back (the last 200), for
        `context_use` and ``%agent context``; measured only when looked at."""
        self.compaction = Compaction()
        """Which of `messages` are sent shortened or not at all, to fit the window (see `compaction`)."""
        self.tracer_provider = tracer_provider
        """Where each run's spans go (an OpenTelemetry ``TracerProvider``); None: the global one, if set."""
        self.trace_content = trace_content
        """Whether content goes into spans; None: the conventions' environment variable decides."""
        self.trace_mask = [trace_mask] if isinstance(trace_mask, str) else list(trace_mask)
        """Regular expressions of secrets masked in spans (``***``), besides a cassette's mask."""
        self.conversation_id = uuid.uuid4().hex
        """``gen_ai.conversation.id`` of this conversation's spans (the notebook's session sets its own)."""

    @property
    def approver(self) -> Approver | None:
        """Decides on calls that need approval; set another one (the site's policy is checked)."""
        return self._approver

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        check_policy(self.settings, approver, written="agent.{} = {!r}")
        self._approver = approver

    @property
    def protocol(self) -> str:
        """The tool protocol's name (``"xml"``, ``"native"``, ``"json"``); set a name or a protocol.

        Set ``"auto"``, it is ``"xml"`` until `choose_protocol` (the first run) hears the model's."""
        return self._protocol.name

    @protocol.setter
    def protocol(self, protocol: str | ToolProtocol) -> None:
        follows = isinstance(protocol, str) and protocol == FOLLOW_MODEL
        self._protocol = get_protocol("xml" if follows else protocol)
        self._follows_model = follows
        self.tool_support: ToolSupport | None = None
        """What the model said of its template (`choose_protocol`); None: not asked, or it says nothing."""

    async def choose_protocol(self) -> ToolSupport | None:
        """With ``protocol="auto"``: ask the model (once) which protocol suits its template, and use it.

        A model with a ``tool_support()`` (`OllamaModel`, `OpenAIModel`, the embedded models, a
        cassette that recorded one) answers a `ToolSupport`; others (a scripted model) keep ``xml``. A
        server that refuses the native tools (`ToolsRefused`) is asked the same turn with ``xml``.
        Where the template opens a think block and the agent leaves thinking to the model
        (``think=None``), the answer is read as thinking up to ``</think>``. Each run calls it
        first; a notebook cell calls it earlier, to show the choice in its model line.

        Returns:
            What the model said, or None: the protocol was chosen (not ``"auto"``), no tools are
            offered, or the model says nothing.
        """
        if not self._follows_model or not self._offered():  # no tools: no protocol to choose
            return None
        ask: Callable[[], Awaitable[ToolSupport | None]] | None = getattr(self.model, "tool_support", None)
        if self.tool_support is None and callable(ask):
            support = await ask()
            if support is None:  # a replay of answers recorded before models were asked
                return None
            # A server that reads thinking itself (think set) sends none of it in the text.
            opened = support.thinking_first and self.think is None
            self._protocol = get_protocol(support.protocol, thinking_first=opened)
            self.tool_support = support
        return self.tool_support

    def reset(self) -> None:
        """Forget the conversation."""
        self.messages.clear()
        self.context_log.clear()
        self.compaction.reset()

    def context_use(self, turn: int = -1) -> ContextUse | None:
        """What a request put in the model's context window (the last one by default), counted with
        the model's tokenizer where it has one; None before the first request. See `agent.window`."""
        if not self.context_log:
            return None
        return self.context_log[turn].measure(self.model)

    def system_prompt(self) -> str:
        """The system prompt the model is sent (the same bytes on every turn)."""
        offered = self._offered()
        return self._protocol.system_prompt(offered, self.system)

    @property
    def ask(self) -> str:
        """Deprecated: `approve` (``"marked"`` is now ``"ask"``)."""
        warnings.warn("Agent.ask is deprecated: read Agent.approve.", DeprecationWarning, stacklevel=2)
        return "marked" if self.approve == "ask" else self.approve

    def _call_runner(self) -> CallRunner:
        return CallRunner(self.settings, approver=self.approver, model=self.model, rules=self.rules)

    def _offered(self) -> list[Tool]:
        if self.tool_choice == "none":
            return []
        if self.tool_choice not in ("auto", "required"):
            return [t for t in self.tools if t.name == self.tool_choice]
        return list(self.tools)

    # --- running --------------------------------------------------------------------------------

    def run(self, prompt: str, *, images: Sequence[McpImage] = ()) -> AgentResult:
        """Run one request to its answer (for scripts and tests); see `stream`."""
        return run_to_completion(self.arun(prompt, images=images))

    async def arun(self, prompt: str, *, images: Sequence[McpImage] = ()) -> AgentResult:
        """Run one request to its answer; see `stream`."""
        async for event in self.stream(prompt, images=images):
            if isinstance(event, FinalAnswer):
                return event.result
        raise AssertionError("the event stream ended without a final answer")  # pragma: no cover

    async def stream(
        self, prompt: str, *, images: Sequence[McpImage] = ()
    ) -> AsyncGenerator[AgentEvent, None]:
        """Send ``prompt`` and yield events until the model answers without calling a tool.

        ``images`` go with the prompt to a model that can look at them (the prompt holds their
        placeholders, ``[image: image/png]``, for one that cannot).

        The conversation is kept: the next call continues it. A model error propagates (after
        the history records what happened); a tool's failure never does, it becomes a result.
        Cancelling the run (an interrupt) ends it at once, also while a tool runs.
        """
        start, finished = len(self.messages), False
        events = self._stream(prompt, images)
        provider = tracer_provider_of(self.tracer_provider)
        if provider is not None:  # only now is OpenTelemetry imported
            from .tracing.spans import traced

            events = traced(events, self, provider, prompt, captures_content(self.trace_content))
        try:
            async with keep_awake():
                async for event in events:
                    finished = isinstance(event, FinalAnswer)
                    yield event
        except BaseException as exc:  # what was done so far stays readable as a result
            partial = self.last_result
            if partial is not None and not finished:
                answer, partial.turns = self._progress
                stopped = isinstance(exc, (GeneratorExit, KeyboardInterrupt, asyncio.CancelledError))
                partial.text, partial.stopped = answer.text, "interrupted" if stopped else "error"
                partial.messages = self.messages[start:]
            if provider is not None:  # the run's spans end now, not when it is collected
                await events.aclose()  # type: ignore[attr-defined]
            raise

    async def _stream(self, prompt: str, prompt_images: Sequence[McpImage]) -> AsyncIterator[AgentEvent]:
        await self.choose_protocol()
        runnable = self._offered()
        yield RunStart(describe_model(self.model), len(runnable))
        start = len(self.messages)
        self.messages.append({"role": "user", "content": prompt})
        given = given_images(prompt_images)
        if given and await accepts_images(self.model):
            self.messages[-1]["images"] = given[:MAX_IMAGES]
        result = self.last_result = AgentResult(text="")
        reminded = False
        # Identical successful calls count within one run only.
        calls = self._call_runner()
        names = name_index(tool.name for tool in runnable)  # what a written name may mean
        for turn in range(1, self.settings.max_turns + 1):
            # The same bytes every turn, unless a server refused native tools (`_falling_back`).
            system = {"role": "system", "content": self._protocol.system_prompt(runnable, self.system)}
            block = ToolsBlock(self._protocol, runnable)
            offered = runnable
            last = turn == self.settings.max_turns and bool(offered)
            compacted = self._fit(system, offered, start)
            if compacted is not None:
                if self.compaction.summarizing:
                    n = compacted.left_out
                    yield ModelStatus(
                        f"summarizing the {n} oldest exchange{'s' * (n != 1)} to fit the context window"
                    )
                    compacted = await self.compaction.summarize(self.model, compacted)
                yield ContextCompacted(turn, compacted)
            request = self._request(system, offered, last)
            answer = TurnAnswer(names=names)
            self._progress = (answer, turn)
            try:
                read = functools.partial(self._read, request, offered, answer, turn, last)
                async for event in asking(read, answer, turn, self.settings):
                    yield event
            except BaseException as exc:  # an error or an interrupt: keep what was said, then re-raise
                stopped = isinstance(exc, (GeneratorExit, KeyboardInterrupt, asyncio.CancelledError))
                answer.cut_off_by = "interrupted" if stopped else type(exc).__name__
                raise
            finally:
                self.messages.append(answer.message(self._protocol))
                self.context_log.append(
                    ContextRecord(
                        (self.context_log[-1].turn if self.context_log else 0) + 1,
                        request,
                        DEFAULT_SYSTEM if self.system is None else self.system,
                        block,
                        self.compaction.sent_at(start),
                        message_text(self.messages[-1]),
                        answer.usage,
                    )
                )
                if answer.usage is not None:
                    self.compaction.calibrate(request.messages, answer.usage.prompt_tokens)
            result.turns = turn
            if answer.usage is not None:
                result.usage = answer.usage if result.usage is None else result.usage + answer.usage
            if not answer.calls:
                if self.tool_choice == "required" and offered and not reminded and not last:
                    reminded = True
                    self.messages.append({"role": "user", "content": REQUIRED_NOTICE})
                    yield TurnEnd(turn, answer.usage, 0, answer.finish_reason)
                    continue
                result.text = answer.text
                yield TurnEnd(turn, answer.usage, 0, answer.finish_reason)
                break
            done: dict[int, ToolResult] = {}
            try:
                async for event in calls.run(answer.calls, runnable, last, done):
                    yield event
            finally:  # also on an interrupt: every call gets a result, so the history stays coherent
                results = [
                    done.get(i) or ToolResult(call, "Error: interrupted before it finished.", kind="error")
                    for i, (call, _) in enumerate(answer.calls)
                ]
                carried = self._protocol.result_messages(results)
                self.messages.extend(carried)
                result.tool_results.extend(results)
                # After the history is whole: asking the model may meet an interrupt.
                images = [result_images(r) for r in results]
                if any(images) and await accepts_images(self.model):
                    attach_images(carried, images)
            yield TurnEnd(turn, answer.usage, len(results), answer.finish_reason)
            if last:
                result.text, result.stopped = answer.text, "max_turns"
                break
            if calls.repeated is not None:  # told not to repeat it, the model did: asking again is futile
                result.text, result.stopped, result.repeated_failure = (
                    answer.text,
                    "repeated_failure",
                    calls.repeated,
                )
                break
        result.messages = self.messages[start:]
        yield FinalAnswer(result)

    def _fit(self, system: dict[str, Any], offered: list[Tool], start: int) -> Compacted | None:
        """Make this turn's request fit the model's window by `context` (see `compaction`)."""
        window = context_window(self.model)
        if window is None or self.context == "off":
            return None
        # Native tools are sent beside the messages (the other protocols' are in the system prompt).
        tools = offered if self._protocol.name == "native" else ()
        extra = sum(len(json.dumps(t.to_json_schema())) for t in tools) // 4
        return self.compaction.fit(
            system,
            self.messages,
            start,
            window=window,
            answer=answer_tokens(self.model),
            policy=self.context,
            extra=extra,
        )

    def _request(self, system: dict[str, Any], offered: list[Tool], last: bool) -> ModelRequest:
        return turn_request(
            self._protocol, [system, *self.compaction.view(self.messages)], offered, last, self.think
        )

    def _read(
        self, request: ModelRequest, offered: list[Tool], answer: TurnAnswer, turn: int, last: bool = False
    ) -> AsyncIterator[AgentEvent]:
        """One attempt at a turn's request, read into ``answer`` by a fresh parser."""
        parser = self._protocol.parser(offered)
        events = read_turn(self.model, request, parser, answer, turn, self._next_call_id)
        return self._falling_back(events, offered, answer, turn, last)

    async def _falling_back(
        self,
        events: AsyncIterator[AgentEvent],
        offered: list[Tool],
        answer: TurnAnswer,
        turn: int,
        last: bool,
    ) -> AsyncIterator[AgentEvent]:
        """``events``; where the server refuses the native tools the model was given by ``auto``,
        the same turn asked again with ``xml``, which the rest of the conversation keeps."""
        try:
            async for event in events:
                yield event
            return
        except ToolsRefused as refused:
            if not self._follows_model or answer.raw or answer.calls:
                raise
            self._protocol = get_protocol("xml")
            self.tool_support = ToolSupport("xml", f"the server refuses tools: {refused.words}")
        system = {"role": "system", "content": self._protocol.system_prompt(offered, self.system)}
        parser = self._protocol.parser(offered)
        request = self._request(system, offered, last)
        async for event in read_turn(self.model, request, parser, answer, turn, self._next_call_id):
            yield event

    def _next_call_id(self) -> str:
        self._call_count += 1
        return f"call_{self._call_count}"

    def __repr__(self) -> str:
        names = [t.name for t in self.tools]
        return f"Agent(model={self.model!r}, tools={names!r}, protocol={self.protocol!r})"
