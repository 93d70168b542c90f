"""Expected calls: what a run should have done, written as Python calls, read with `ast` (never run).

    get_weather(city='Par*') then delete_file(path='old.txt') -> ok, ... then answered

`parse_expectation` reads the text into an `Expectation` or raises `ExpectationError` pointing
at the part it cannot read. The syntax (``then``, ``,``, ``, ...``, ``-> ok|error|denied|...``,
``then answered|stopped``, globs and ``'re:...'`` values) is docs/guides/recording-and-testing.md's.
The text may come from a notebook's metadata, so it is bounded (`_bounds`) and its patterns run
on RE2.
"""

from __future__ import annotations

import ast
import io
import itertools
import reprlib
import tokenize
import warnings
from dataclasses import dataclass
from typing import Any

from ...errors import MeowgentError
from ..patterns import compile_glob, is_glob
from ..regex import RegexError
from ._bounds import MAX_CHARS, MAX_NESTING, TOO_DEEP, deeper_than, too_long
from .values import ANY, Regex, value_matches, written

__all__ = [
    "ANY",
    "ENDS",
    "MAX_CHARS",
    "MAX_NESTING",
    "OUTCOMES",
    "SYNTAX",
    "Expectation",
    "ExpectationError",
    "ExpectedCall",
    "Regex",
    "parse_expectation",
    "value_matches",
    "written",
]

SYNTAX = (
    "Syntax: tool(arg=value, ...) for each call (a value is a literal; a string may be a glob 'Par*'"
    " or 're:REGEX'; * is any value); 'A then B' in this order; 'A, B' both, in any order; end the"
    " calls with ', ...' to allow calls not named; 'A -> ok|error|denied' for an outcome; 'then"
    " answered' or 'then stopped' last for how the run ended."
)
OUTCOMES = ("ok", "error", "denied", "timeout", "invalid_arguments", "unknown_tool", "parse_error")
"""What ``-> NAME`` may say of a call."""
ENDS = ("answered", "stopped", "max_turns", "repeated_failure", "interrupted")
"""What ``then NAME`` may say, last, of how the run ended."""


class ExpectationError(MeowgentError, ValueError):
    """An expectation that cannot be read: what is wrong, the text with the part marked, the syntax."""

    def __init__(self, problem: str, text: str, start: int, end: int):
        self.problem, self.text, self.start, self.end = problem, text, start, end
        shown = text.replace("\n", " ").replace("\r", " ")
        marks = " " * start + "^" * max(1, end - start)
        super().__init__(f"{problem}\n  {shown}\n  {marks}\n{SYNTAX}")


@dataclass(frozen=True)
class ExpectedCall:
    """One call of an expectation."""

    tool: Any
    """The tool's name: a string (exact or a glob), a `Regex`, or `ANY`."""
    arguments: tuple[tuple[str, Any], ...] = ()
    """The arguments it must have, by name; each value a literal, a glob string, a `Regex` or `ANY`."""
    outcome: str | None = None
    """One of `OUTCOMES`, or None: any outcome."""
    source: str = ""
    """As written."""


@dataclass(frozen=True)
class Expectation:
    """What a run should have done, as `parse_expectation` reads it."""

    steps: tuple[tuple[ExpectedCall, ...], ...]
    """The calls, step by step: each step's calls in any order, the steps in order."""
    others: bool = False
    """Whether calls not named are allowed (the calls end with ``, ...``)."""
    end: str | None = None
    """One of `ENDS`, or None: however the run ended."""
    source: str = ""
    """The text it was read from."""

    @property
    def calls(self) -> tuple[ExpectedCall, ...]:
        return tuple(call for step in self.steps for call in step)


# --- reading -------------------------------------------------------------------------------------

_OPEN, _CLOSE = "([{", ")]}"


def parse_expectation(text: str) -> Expectation:
    """Read an expectation written in the syntax `SYNTAX` sums up.

    Raises:
        ExpectationError: The text cannot be read; the message marks the part and shows the syntax.
    """
    if not isinstance(text, str):
        got = f"{type(text).__name__} {reprlib.repr(text)}"
        raise ExpectationError(f"An expectation is text, got {got}.", "", 0, 0)
    long = too_long(text)
    if long is not None:
        raise ExpectationError(long[0], long[1], 0, len(long[1]))
    line = text.replace("\r", " ").replace("\n", " ")  # one line: offsets are columns
    if not line.strip():
        raise ExpectationError(
            "The expectation is empty: name the calls the run should make.", line, 0, len(line)
        )
    steps: list[list[tuple[int, int]]] = [[]]
    tokens = _tokens(line)
    depth, start = [], 0
    separators: list[tuple[int, int]] = []
    for token in tokens:
        at = token.start[1]
        if token.type == tokenize.COMMENT:
            raise ExpectationError(
                "'#' has no place in an expectation (quote a value that has one).", line, at, len(line)
            )
        if token.string and token.string in _OPEN:
            depth.append((token.string, at))
        elif token.string and token.string in _CLOSE:
            if not depth or _OPEN.index(depth[-1][0]) != _CLOSE.index(token.string):
                raise ExpectationError(f"An unmatched {token.string!r}.", line, at, at + 1)
            depth.pop()
        elif not depth and (token.string == "," or (token.type == tokenize.NAME and token.string == "then")):
            separators.append((at, token.end[1]))
            steps[-1].append((start, at))
            start = token.end[1]
            if token.string == "then":
                steps.append([])
    if depth:
        raise ExpectationError(f"{depth[-1][0]!r} is never closed.", line, depth[-1][1], len(line))
    if tokens and tokens[-1].type == tokenize.ERRORTOKEN:
        raise ExpectationError(
            "Cannot read the end of the expectation.", line, max(0, len(line) - 1), len(line)
        )
    steps[-1].append((start, len(line)))
    for number, (begin, stop) in enumerate(item for step in steps for item in step):
        if not line[begin:stop].strip():
            raise _empty_part(line, number, separators)
    return _assemble(line, steps, tokens)


def _empty_part(line: str, number: int, separators: list[tuple[int, int]]) -> ExpectationError:
    """The error for the ``number``th part, which is empty, marking the separator next to it."""
    if number == 0:
        return ExpectationError(
            "The expectation begins with a separator: name a call first.", line, *separators[0]
        )
    if number == len(separators):
        return ExpectationError(
            "The expectation ends with a separator: name a call after it, or remove it.",
            line,
            *separators[-1],
        )
    return ExpectationError("Nothing between two separators: name a call there.", line, *separators[number])


def _tokens(line: str) -> list[tokenize.TokenInfo]:
    """The tokens of ``line``; brackets nested deeper than `MAX_NESTING` are refused as they come
    (before Python's tokenizer reaches its own limit, which says less)."""
    skip = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    found = []
    level = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.lstrip()).readline):
            if token.type in skip:
                continue
            shift = len(line) - len(line.lstrip())
            token = token._replace(start=(1, token.start[1] + shift), end=(1, token.end[1] + shift))
            if token.type == tokenize.ERRORTOKEN and token.string.strip():
                at = token.start[1]
                what = "a string that is never closed" if token.string in "'\"" else f"{token.string!r}"
                raise ExpectationError(
                    f"Cannot read {what} here.", line, at, len(line) if what[0] == "a" else at + 1
                )
            if token.type == tokenize.OP and token.string in _OPEN:
                level += 1
                if level > MAX_NESTING:
                    raise ExpectationError(TOO_DEEP, line, token.start[1], token.end[1])
            elif token.type == tokenize.OP and token.string in _CLOSE:
                level = max(0, level - 1)
            found.append(token)
    except tokenize.TokenError:  # an open bracket (or string) at the end: the caller says which
        found.append(tokenize.TokenInfo(tokenize.ERRORTOKEN, "", (1, len(line)), (1, len(line)), line))
    except (SyntaxError, IndentationError) as error:
        at = max(0, (error.offset or 1) - 1)
        raise ExpectationError(f"Cannot read the expectation: {error.msg}.", line, at, at + 1) from None
    return found


def _assemble(line: str, steps: list[list[tuple[int, int]]], tokens: list[tokenize.TokenInfo]) -> Expectation:
    end = None
    last = steps[-1]
    if len(last) == 1 and line[last[0][0] : last[0][1]].strip() in ENDS:
        end = line[last[0][0] : last[0][1]].strip()
        steps = [] if len(steps) == 1 else steps[:-1]
    others = False
    read: list[tuple[ExpectedCall, ...]] = []
    for number, step in enumerate(steps):
        calls = []
        for position, (start, stop) in enumerate(step):
            part = line[start:stop].strip()
            at = start + len(line[start:stop]) - len(line[start:stop].lstrip())
            if part == "...":
                if number != len(steps) - 1 or position != len(step) - 1 or (len(step) == 1 and number > 0):
                    raise ExpectationError(
                        "'...' allows calls not named anywhere in the run: write it once, last, as ', ...'"
                        " (A then B, ...).",
                        line,
                        at,
                        at + 3,
                    )
                others = True
                continue
            if part in ENDS:
                raise ExpectationError(
                    f"{part!r} says how the run ended: put it last, alone (A then {part}); a tool named"
                    f" so is written {part}().",
                    line,
                    at,
                    at + len(part),
                )
            calls.append(_call(line, at, part, tokens))
        if calls:
            read.append(tuple(calls))
    return Expectation(tuple(read), others, end, line.strip())


def _call(line: str, at: int, part: str, tokens: list[tokenize.TokenInfo]) -> ExpectedCall:
    """One ``tool(arg=value) -> outcome`` starting at column ``at`` of ``line``."""
    outcome = None
    inside = [t for t in tokens if at <= t.start[1] < at + len(part)]
    arrows = [t for t in inside if t.string == "->" and _depth_at(inside, t) == 0]
    if len(arrows) > 1:
        second = arrows[1].start[1]
        raise ExpectationError("A call has one outcome: write tool(...) -> ok.", line, second, second + 2)
    if arrows:
        arrow = arrows[0].start[1]
        outcome = line[arrow + 2 : at + len(part)].strip()
        if outcome not in OUTCOMES:
            where = arrow + 2 + len(line[arrow + 2 :]) - len(line[arrow + 2 :].lstrip())
            raise ExpectationError(
                f"Unknown outcome {outcome!r}: write -> ok, -> error or -> denied"
                " (or timeout, invalid_arguments, unknown_tool, parse_error).",
                line,
                where,
                max(where + 1, at + len(part)),
            )
        part = line[at:arrow].rstrip()
    # `*` where a value goes (before `,` `)` `]` `}`) is no Python: read it as `_` (same width).
    stars = {
        t.start[1]
        for t, nxt in itertools.pairwise(inside)
        if t.string == "*" and nxt.string in (",", ")", "]", "}") and nxt.start[1] < at + len(part)
    }
    source = "".join("_" if at + i in stars else c for i, c in enumerate(part))
    try:
        with warnings.catch_warnings():  # 're:\d' is a regex, not a string escape gone wrong
            warnings.simplefilter("ignore")
            node = ast.parse(source, mode="eval").body
    except SyntaxError as error:
        offset = at + max(0, (error.offset or 1) - 1)
        hint = " (two calls are joined by ', ' or ' then ')" if _a_call(source[: offset - at]) else ""
        raise ExpectationError(
            f"Cannot read {part!r} as a call: {error.msg}{hint}.", line, offset, offset + 1
        ) from None
    except (MemoryError, RecursionError):  # Python's parser gave up: nested too deep for its stack
        raise ExpectationError(TOO_DEEP, line, at, at + len(part)) from None
    where = _Where(line, at, stars, source.encode())
    deep = deeper_than(node, MAX_NESTING)
    if deep is not None:
        raise ExpectationError(TOO_DEEP, line, where.col(deep), where.col(deep) + 1)
    if isinstance(node, ast.Call):
        tool = where.name(node.func)
        if node.args:
            first = node.args[0]
            raise ExpectationError(
                "Name each argument: write tool(name=value); a value without its name is not read.",
                line,
                where.col(first),
                where.end(first),
            )
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ExpectationError(
                    "Write each argument as name=value (no **).", line, where.col(keyword), where.end(keyword)
                )
            if keyword.arg in arguments:
                raise ExpectationError(
                    f"{keyword.arg!r} is given twice.", line, where.col(keyword), where.end(keyword)
                )
            arguments[keyword.arg] = where.value(keyword.value)
        return ExpectedCall(tool, tuple(arguments.items()), outcome, line[at : at + len(part)].strip())
    return ExpectedCall(where.name(node), (), outcome, part.strip())


def _a_call(text: str) -> bool:
    """Whether ``text`` is a whole call (what precedes a second call written without a separator)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return isinstance(ast.parse(text.strip() or "(", mode="eval").body, (ast.Call, ast.Name))
    except (SyntaxError, MemoryError, RecursionError):
        return False


def _depth_at(tokens: list[tokenize.TokenInfo], target: tokenize.TokenInfo) -> int:
    depth = 0
    for token in tokens:
        if token is target:
            return depth
        depth += bool(token.string) and token.string in _OPEN
        depth -= bool(token.string) and token.string in _CLOSE
    return depth


@dataclass
class _Where:
    """Columns in the expectation of the nodes of one call, and how its parts are read."""

    line: str
    at: int
    stars: set[int]
    source: bytes
    """The call as `ast` read it (its offsets count UTF-8 bytes)."""

    def col(self, node: ast.AST) -> int:
        return self.at + len(self.source[: node.col_offset].decode(errors="replace"))  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        stop = node.end_col_offset or node.col_offset + 1  # type: ignore[attr-defined]
        return self.at + len(self.source[:stop].decode(errors="replace"))

    def name(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            if self.col(node) in self.stars:
                return ANY
            return node.id
        if isinstance(node, ast.Attribute):
            return f"{self.name(node.value)}.{node.attr}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
            return self._text(node.value, node)
        raise ExpectationError(
            "A call begins with the tool's name: get_weather(city='Paris'), or 'read-file'(path='a') for"
            " a name that is no Python name.",
            self.line,
            self.col(node),
            self.end(node),
        )

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name) and self.col(node) in self.stars:
            return ANY
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.value(item) for item in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            keys = []
            for key in node.keys:
                if key is None or not isinstance(key, ast.Constant):
                    spot = key if key is not None else node
                    raise ExpectationError(
                        "A dict's keys are literals.", self.line, self.col(spot), self.end(spot)
                    )
                keys.append(key.value)
            return {k: self.value(v) for k, v in zip(keys, node.values)}
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ExpectationError(
                f"{self.line[self.col(node) : self.end(node)]} is not a value: write a"
                " literal ('Paris', 3, True, None, [1, 2], {'a': 1}) or * for any value.",
                self.line,
                self.col(node),
                self.end(node),
            ) from None
        return self._text(value, node) if isinstance(value, str) else value

    def _text(self, value: str, node: ast.AST) -> Any:
        if value == "*":
            return ANY
        if value.startswith("re:"):
            try:
                return Regex(value[3:])
            except RegexError as error:
                raise ExpectationError(
                    f"The regular expression {value[3:]!r} cannot be run: {error}.",
                    self.line,
                    self.col(node),
                    self.end(node),
                ) from None
        if is_glob(value):
            try:
                compile_glob(value)  # compiled once here (cached), so checking a run cannot fail on it
            except RegexError as error:
                raise ExpectationError(
                    f"The glob {value!r} cannot be run: {error}.", self.line, self.col(node), self.end(node)
                ) from None
        return value
