"""Tools a model can call: `Tool` and the `@tool` decorator.

A `Tool` is made from a Python function (``@tool``), from a config dict with declared arguments,
or from a name, a description and a JSON Schema (the shape MCP servers publish). All three
render, validate and run the same way. `ToolCall` and `ToolResult`, the values a run passes
around, live in `calls`; they are imported here too, where the other wings and the tests name them.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar, cast, overload

from .._async import run_to_completion
from ..errors import ToolDefinitionError, UnknownKeywordError
from ._foreign_schema import object_schema
from ._validation import validated
from .calls import ResultKind, ToolCall, ToolResult
from .context import call_with_context
from .examples import check_examples, split_examples, usable_examples
from .render import tool_json_schema, tool_string, tool_xml

if TYPE_CHECKING:
    from ._schema import ArgumentsModel

__all__ = ["ResultKind", "Tool", "ToolCall", "ToolResult", "tool"]

_T = TypeVar("_T", bound="Tool")  # a subclass's `from_schema` makes one of its own (an `McpTool`)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _keywords_checked(shown: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Make a misspelled keyword of the decorated function one `UnknownKeywordError` naming the
    nearest keyword, instead of Python's bare `TypeError` (``shown``: the function as people call it)."""

    def decorate(function: Callable[_P, _R]) -> Callable[_P, _R]:
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        parameters = inspect.signature(function).parameters.values()
        known = [p.name for p in parameters if p.kind in kinds and p.name != "self"]

        @functools.wraps(function)
        def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for keyword in kwargs:
                if keyword not in known:
                    raise UnknownKeywordError(shown, keyword, known)
            return function(*args, **kwargs)

        return checked

    return decorate


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_NAME_RULE = "use letters, digits, '_', '-' and '.', starting with a letter or '_', at most 64 characters"


class Tool:
    """A callable the model can ask for, with the schema it is described and validated by.

    Calling the tool calls the wrapped function unchanged: ``get_weather("Paris")`` still works.

    Attributes:
        name: What the model calls it.
        description: What it does, for the model (the docstring without its Args section).
        parameters: The JSON Schema of the arguments (treat as read-only).
        approval: Whether a person must approve each call before it runs, or a function of the
            validated arguments (a dict) that says "allow", "ask" or "deny" (or True: ask; False:
            allow); an error in it denies the call (see `agent.approvals.tool_verdict`).
            ``"always"``: every call is put to a person, or decided by a rule the person set; a
            policy (``AutoApprove``, ``MEOWGENT_APPROVE=allow``) never runs it.
        timeout: Seconds a call may take, or None for the agent's default.
        returns: What the tool returns ("type: description"), or None when unknown.
        output_type: The name of the returned type, or None when unknown.
        examples: Example arguments shown to the model, a read-only tuple of dicts (see
            ``@tool(examples=...)``).
        read_only: Whether the tool only reads (``@tool(read_only=...)``); None when not said.
            `ToolServer` publishes it as the MCP ``readOnlyHint``.
        record: Whether its calls are recorded in the cell's cassette and replayed from it
            (``@tool(record=True)``); without a cassette the tool runs as any other.
        facts: Values the tool derives from a call's validated arguments, by name, for the
            approval rules to match beside the arguments (``@tool(facts=...)``); a read-only
            mapping, empty for most tools. See `facts_of`.
        code_argument: The name of the one ``str`` parameter that holds code
            (``@tool(code_argument=...)``), shown highlighted on the approval card and edited
            there as text; None for most tools.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any]
    timeout: float | None
    returns: str | None
    output_type: str | None
    function: Callable[..., Any]
    read_only: bool | None = None
    record: bool = False
    facts: Mapping[str, Callable[[dict[str, Any]], Any]] = MappingProxyType({})
    code_argument: str | None = None
    _context: str | None = None  # the parameter that takes a ToolContext (see `context`)

    @_keywords_checked("Tool()")
    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = False,
        timeout: float | None = None,
        examples: Sequence[Mapping[str, Any]] | None = None,
        read_only: bool | None = None,
        record: bool = False,
        facts: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None,
        code_argument: str | None = None,
    ):
        if isinstance(function, Tool):
            function = function.function
        target = _qualname(function)
        problems = []
        if not callable(function):
            raise ToolDefinitionError(target, [f"{function!r} is not callable"])
        if name is None:
            name = getattr(function, "__name__", None)
            if name == "<lambda>":
                problems.append("a lambda has no name; pass one: tool(lambda ..., name='...')")
                name = None
            elif name is None:
                problems.append("it has no __name__; pass one with name='...'")
        from ._schema import describe_function  # pydantic loads when the first tool is made

        described = describe_function(function)
        problems.extend(described.problems)
        if read_only is not None and not isinstance(read_only, bool):
            problems.append(f"read_only must be True, False or None, got {read_only!r}")
        if not isinstance(record, bool):
            problems.append(f"record must be True or False, got {record!r}")
        taken = {p.name for p in described.arguments.params} if described.arguments is not None else set()
        problems.extend(_fact_problems(facts, taken))
        schema = described.arguments.schema if described.arguments is not None else None
        problems.extend(_code_argument_problems(code_argument, schema))
        self._setup(
            target,
            problems,
            name=name,
            description=described.description if description is None else description,
            approval=approval,
            timeout=timeout,
        )
        self.function = function
        self.read_only = read_only
        self.record = record
        self.facts = MappingProxyType(dict(facts or {}))
        self.code_argument = code_argument
        self.returns = described.returns
        self.output_type = described.output_type
        # _setup raised if there were problems; without them the arguments model was built.
        arguments = cast("ArgumentsModel", described.arguments)
        self._arguments, self._context = arguments, described.context
        self._positional = tuple(p.name for p in arguments.params if p.positional_only)
        self._schema_validator = None
        self.parameters = arguments.schema
        functools.update_wrapper(self, function, updated=())
        self._check_examples(target, examples)

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = False,
        timeout: float | None = None,
    ) -> Tool:
        """A tool described by a config dict rather than a Python signature.

        Args:
            config: ``{"name", "description", "arguments": [{"name", "type", "description"}]}``.
                ``arguments`` is optional; an argument may also give ``default``, ``required``
                (default: true unless a default is given) and ``enum`` (the allowed values).
                Types: string, integer, number, boolean, array, object (or str, int, float,
                bool, list, dict). ``examples`` (optional) is a list of example arguments
                dicts, checked as ``@tool(examples=...)`` checks them.
            handler: Called with the validated arguments as keyword arguments.
            approval: Whether each call needs a person's approval.
            timeout: Seconds a call may take, or None for the agent's default.
        """
        from ._config_tools import config_params  # its pydantic models cost time to build

        name, description, params, problems = config_params(config)
        arguments = None
        if not problems:
            try:
                from ._schema import ArgumentsModel

                arguments = ArgumentsModel.build(params)
            except ValueError as exc:
                problems.extend(exc.args)
        self = cls.__new__(cls)
        self._setup(f"config {name!r}", problems, name, description, approval, timeout, handler)
        self.function = handler
        self.returns = self.output_type = None
        arguments = cast("ArgumentsModel", arguments)  # _setup raised where it was not built
        self._arguments, self._positional, self._schema_validator = arguments, (), None
        self.parameters = arguments.schema
        self._check_examples(f"config {name!r}", config.get("examples"))
        return self

    @classmethod
    def from_schema(
        cls: type[_T],
        name: str,
        description: str,
        schema: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = False,
        timeout: float | None = None,
        examples: Sequence[Mapping[str, Any]] | None = None,
    ) -> _T:
        """A tool whose arguments are given as a JSON Schema (the shape MCP servers publish).

        Arguments are validated with `jsonschema` (draft 2020-12). Unknown arguments are errors
        unless the schema sets ``additionalProperties`` itself. ``$schema``, ``$comment`` and titles
        that restate a name are left out of `parameters` (see `meowgent_nb.tools._foreign_schema`).
        The schema's own top-level ``examples`` keyword (a list of argument objects) gives the
        tool's `examples` when ``examples=`` is not given; it is not kept in `parameters`.

        Args:
            name: What the model calls it.
            description: What it does.
            schema: A JSON Schema of ``"type": "object"``.
            handler: Called with the validated arguments as keyword arguments.
            approval: Whether each call needs a person's approval.
            timeout: Seconds a call may take, or None for the agent's default.
            examples: Example arguments dicts for the model (see ``@tool(examples=...)``).
        """
        schema, published = split_examples(schema)
        if published is not None and examples is not None:
            problems = ['examples are given twice, as examples= and as the schema\'s "examples"; keep one']
            raise ToolDefinitionError(f"schema tool {name!r}", problems)
        parameters, problems = object_schema(schema)
        self = cls.__new__(cls)
        self._setup(f"schema tool {name!r}", problems, name, description, approval, timeout, handler)
        self.function = handler
        self.returns = self.output_type = None
        self._arguments, self._positional = None, ()
        import jsonschema  # only tools given as JSON Schema need it

        self._schema_validator = jsonschema.Draft202012Validator(parameters)
        self.parameters = parameters
        self._check_examples(f"schema tool {name!r}", published if examples is None else examples)
        return self

    def _setup(
        self,
        target: str,
        problems: list[str],
        name: str | None,
        description: str,
        approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any],
        timeout: float | None,
        handler: Callable[..., Any] | None = None,
    ) -> None:
        """Check what every kind of tool shares; raise one error naming every problem."""
        if name is not None and not (isinstance(name, str) and _NAME.fullmatch(name)):
            problems.append(f"the name {name!r} is not a valid tool name; {_NAME_RULE}")
        if not isinstance(description, str):
            problems.append(f"the description must be a string, got {type(description).__name__}")
        if not (isinstance(approval, bool) or callable(approval) or approval == "always"):
            problems.append(
                f'approval must be True, False, "always" or a function of the arguments, got {approval!r}'
            )
        valid_timeout = timeout is None or (
            isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
        )
        if not valid_timeout:
            problems.append(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        if handler is not None and not callable(handler):
            problems.append(f"the handler {handler!r} is not callable")
        if problems:
            raise ToolDefinitionError(target, problems)
        self.name = cast(str, name)  # a missing name is one of the problems raised above
        self.description = description.replace("\r\n", "\n").strip()
        self.approval = approval
        self.timeout = None if timeout is None else float(timeout)
        self._xml: str | None = None
        self._examples: tuple[str, ...] = ()

    def _check_examples(self, target: str, examples: Any) -> None:
        """Keep ``examples`` once each passes the tool's own validation; else raise naming each."""
        schema = None if self._schema_validator is not None else self.parameters  # pydantic coerces
        texts, problems = check_examples(examples, self.validate, schema)
        if problems:
            raise ToolDefinitionError(target, problems, action="add the examples to")
        self._examples = texts

    def _adopt_examples(self, examples: Any) -> list[str]:
        """Keep those of ``examples`` (from an outside source) that pass; return why the rest did not."""
        schema = None if self._schema_validator is not None else self.parameters
        self._examples, problems = usable_examples(examples, self.validate, schema)
        self.__dict__.pop("_xml_element", None)  # the rendering cache, if it was made already
        return problems

    @property
    def examples(self) -> tuple[dict[str, Any], ...]:
        """Example arguments, each a call the tool accepts, shown to the model with the tool.

        Read-only: a new copy each time, so the XML the model was given cannot drift from them.
        """
        return tuple(json.loads(text) for text in self._examples)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        names = list(self.parameters.get("properties", {}))
        return f"Tool(name={self.name!r}, arguments={names!r}, approval={self.approval!r})"

    @property
    def is_async(self) -> bool:
        """Whether calling the tool returns a coroutine (an ``async def``)."""
        return inspect.iscoroutinefunction(self.function)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Check a call's arguments against the tool's parameters.

        Strings are coerced where pydantic allows it (``"17"`` -> ``17``); unknown arguments are
        errors.

        Returns:
            The validated arguments by name, defaults filled in.

        Raises:
            ToolArgumentsError: One line per problem, naming the argument.
        """
        return validated(self.name, self.parameters, arguments, self._schema_validator, self._arguments)

    def facts_of(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The tool's `facts` about a call: each fact's function called with a copy of the
        validated arguments. The model cannot set them: they are not arguments.

        Raises:
            Exception: What a fact's function raised (the agent denies the call).
        """
        return {name: derive(dict(values)) for name, derive in self.facts.items()}

    def invoke(self, values: Mapping[str, Any]) -> Any:
        """Call the tool with already validated values; an ``async def`` is run to completion.

        Safe to call from any thread, also one whose event loop is running (the notebook's).
        """
        result = self._call(values)
        if inspect.isawaitable(result):
            return run_to_completion(result)
        return result

    async def ainvoke(self, values: Mapping[str, Any]) -> Any:
        """Like `invoke`, awaiting an ``async def`` and running a plain function in a thread."""
        if self.is_async:
            return await self._call(values)
        result = await asyncio.to_thread(self._call, values)
        return await result if inspect.isawaitable(result) else result

    def run(self, arguments: Any) -> Any:
        """Validate ``arguments`` (as a model sent them), then call the tool; returns its value."""
        return self.invoke(self.validate(arguments))

    async def arun(self, arguments: Any) -> Any:
        """Validate ``arguments``, then await the tool."""
        return await self.ainvoke(self.validate(arguments))

    def _call(self, values: Mapping[str, Any]) -> Any:
        return call_with_context(self.function, values, self._positional, self._context, self.name)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # Shown as a cell result: the table row and the exact XML the model reads.
        from .view import tool_mimebundle  # loaded when first shown

        return tool_mimebundle(self)

    def to_xml(self) -> str:
        """The ``<tool>`` element the model reads (see `render_tools_xml`)."""
        return tool_xml(self)

    def to_json_schema(self) -> dict[str, Any]:
        """The ``{"type": "function", "function": {...}}`` form Ollama's ``tools=`` takes."""
        return tool_json_schema(self)

    def to_string(self) -> str:
        """The one-line form: ``Tool Name: add, Description: ..., Arguments: a: int, Outputs: int``."""
        return tool_string(self)


def _qualname(function: Any) -> str:
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    module = getattr(function, "__module__", None)
    if name is None:
        return repr(function)
    return f"{module}.{name}" if module and module not in ("__main__", "builtins") else name


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    function: Callable[..., Any],
    /,
    *,
    name: str | None = ...,
    description: str | None = ...,
    approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = ...,
    timeout: float | None = ...,
    examples: Sequence[Mapping[str, Any]] | None = ...,
    read_only: bool | None = ...,
    record: bool = ...,
    facts: Mapping[str, Callable[[dict[str, Any]], Any]] | None = ...,
    code_argument: str | None = ...,
) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = ...,
    description: str | None = ...,
    approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = ...,
    timeout: float | None = ...,
    examples: Sequence[Mapping[str, Any]] | None = ...,
    read_only: bool | None = ...,
    record: bool = ...,
    facts: Mapping[str, Callable[[dict[str, Any]], Any]] | None = ...,
    code_argument: str | None = ...,
) -> Callable[[Callable[..., Any]], Tool]: ...
@_keywords_checked("tool()")
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    approval: bool | Literal["always"] | Callable[[dict[str, Any]], Any] = False,
    timeout: float | None = None,
    examples: Sequence[Mapping[str, Any]] | None = None,
    read_only: bool | None = None,
    record: bool = False,
    facts: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None,
    code_argument: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function (plain, ``async def``, or a bound method) a tool the model can call.

    Use as ``@tool`` or ``@tool(name=..., description=..., approval=True, timeout=10.0,
    examples=[{"city": "Paris", "days": 2}])``. The function keeps working as before when called
    directly.

    Args:
        function: The function; omitted when options are given.
        name: What the model calls it (default: the function's name).
        description: What it does (default: the docstring without its Args section).
        approval: Whether a person must approve each call before it runs; or a function called
            with the validated arguments as a dict, returning "allow", "ask" or "deny", or a bool
            (True: ask, as ``approval=True`` does; False: allow). An error in it denies the call.
            The notebook's rules (`agent.rules`) are asked first; a deny from either wins.
            ``"always"``: every call is put to a person (the buttons, ``input()``) unless a rule
            the person set allows it; a policy never approves it (``AutoApprove``,
            ``approve="allow"``, ``MEOWGENT_APPROVE=allow`` deny it, saying how to allow it),
            and a cassette's replay with no one to ask follows the decision recorded in it.
        timeout: Seconds a call may take, or None for the agent's default.
        examples: Example arguments, one dict per call, shown to the model inside the tool's
            description (``<example>{"city":"Paris","days":2}</example>``). Each must be a call
            the tool accepts, written as the model should write it (``2``, not ``"2"``, for an
            integer); at most 5, of at most 300 characters of JSON each, since every example is
            in the prompt on every turn.
        read_only: Whether the tool only reads, and changes nothing (None: not said). It is
            published to other MCP clients by ``%tools serve`` (``readOnlyHint``); unsaid, the
            hint follows ``approval`` (a tool that needs no approval reads as read-only).
        record: Record its calls in the ``%%agent`` cell's cassette, beside the model's answers,
            and replay them from it: in replay the function is not called (for a tool that
            reaches a server or the network). Keyed by the validated arguments; see
            `meowgent_nb.recording.tool_tape`. Without a cassette it runs as any tool.
        facts: Values derived from each call's validated arguments, by name, that the approval
            rules match as if they were arguments: ``facts={"risk": lambda args: scan(args["code"])}``
            lets a rule say ``run_code risk=read-only -> allow``. The model cannot set them (they
            are not arguments); a name may not be a parameter's; an error in one denies the call.
        code_argument: The name of the one ``str`` parameter holding code (``"code"``): the
            approval card shows it highlighted and edits it as text, not as JSON.

    Raises:
        ToolDefinitionError: The function cannot be described to a model; names every problem.
            Bad examples raise it too, naming each by its index (``examples[1]``).
        UnknownKeywordError: A keyword it does not take (``aproval=True``), with the nearest one.
    """
    options = {
        "name": name,
        "description": description,
        "approval": approval,
        "timeout": timeout,
        "examples": examples,
        "read_only": read_only,
        "record": record,
        "facts": facts,
        "code_argument": code_argument,
    }
    if function is None:
        return lambda function: Tool(function, **options)
    return Tool(function, **options)


def _fact_problems(facts: Any, taken: set[str]) -> list[str]:
    """What is wrong with ``@tool(facts=...)``: a mapping of names to functions, none a parameter's."""
    if facts is None:
        return []
    if not isinstance(facts, Mapping):
        return [f"facts must be a dict of names to functions of the arguments, got {type(facts).__name__}"]
    problems = []
    for name, derive in facts.items():
        if not (isinstance(name, str) and name.isidentifier()):
            problems.append(f"the fact name {name!r} is not an identifier; a rule names it as NAME=PATTERN")
        elif name in taken:
            problems.append(f"the fact {name!r} is also a parameter; rename one, or the model could set it")
        if not callable(derive):
            problems.append(f"the fact {name!r} must be a function of the arguments, got {derive!r}")
    return problems


def _code_argument_problems(name: Any, schema: Mapping[str, Any] | None) -> list[str]:
    """What is wrong with ``@tool(code_argument=...)``: it must name a ``str`` parameter."""
    if name is None:
        return []
    if not isinstance(name, str):
        return [f"code_argument must be the name of a str parameter, got {name!r}"]
    if schema is None:
        return []  # the parameters could not be described: that is the problem already named
    properties = schema.get("properties", {})
    if name not in properties:
        names = ", ".join(properties) or "none"
        return [f"code_argument {name!r} is not a parameter (the parameters are: {names})"]
    if properties[name].get("type") != "string":
        return [f"code_argument {name!r} must be a str parameter; annotate it `{name}: str`"]
    return []
