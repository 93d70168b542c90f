"""Hostile cassette files for fuzzing the reader: random JSON-ish documents, and a real cassette's
text mutated (cut short, a value's type swapped, a key given twice, nested deep, numbers huge,
bytes flipped). `read` reads one as a notebook would: load the file, then replay every entry
(keys, usage sums and rates, tool results decoded, MCP values too); anything it raises but a
`CassetteError` is a reader bug. Used by ``benchmarks/fuzz_cassette.py`` (10,000+ examples) and
by the suite (a few hundred)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from meowgent_nb.mcp.content._recorded_values import MCP_VALUES
from meowgent_nb.models.base import Usage
from meowgent_nb.recording._file import Cassette, CassetteError, key_of
from meowgent_nb.recording.tool_tape import ToolTape, _replayed, listed_tool
from meowgent_nb.tools.calls import ToolCall

REAL = (
    '{"model": "m",\n "think": null,\n "options": {"temperature": 0.1, "num_ctx": 4096},\n'
    ' "format": null,\n "offered": ["add"],\n "tools": [],\n "messages": [\n'
    '  {"content": "Hi \\u00e9 \\"x\\"", "role": "user"}\n ],\n "chunks": [\n'
    '  {"text": "Hello"},\n  {"tool_calls": [{"arguments": {"a": 1}, "id": "c1", "name": "add"}]},\n'
    '  {"done": true, "finish_reason": "stop", "usage": {"completion_tokens": 2, "completion_seconds": 0.5,'
    ' "prompt_tokens": 26, "total_seconds": 1.25}}\n ]}\n\n'
    '{"tool": "add",\n "arguments": {"a": 1, "b": 2},\n "result": {"kind": "ok", "output": "3",'
    ' "value": {"json": 3}}}\n\n'
    '{"tool": "get",\n "arguments": {},\n "result": {"kind": "ok", "output": "[bytes]",'
    ' "value": {"bytes": "iVBORw0KGgo="}}}\n\n'
    '{"tool": "chart",\n "arguments": {},\n "result": {"kind": "ok", "output": "A chart:", "value":'
    ' {"text": "A chart:", "media": [{"image": "iVBORw0KGgo=", "mime_type": "image/png"}],'
    ' "links": [{"name": "d", "uri": "file:///d.csv"}]}}}\n\n'
    '{"tool": "census",\n "arguments": {},\n "result": {"kind": "ok", "output": "3", "value":'
    ' {"structured": {"people": 3}, "text": "3"}}}\n\n'
    '{"tool": "slow",\n "arguments": {},\n "result": {"kind": "timeout", "output": "Timed out", "seconds": 0.2}}\n\n'
    '{"toolbox": "demo",\n "instructions": null,\n "listing": [\n'
    '  {"approval": true, "description": "Add.", "examples": [], "name": "demo_add", "output_schema": null,'
    ' "parameters": {"type": "object"}, "remote_name": "add", "timeout": 30, "title": null}\n ],\n'
    ' "skipped": {"m": "bad"}}\n'
)
"""A cassette as the writer writes it: a request, tool calls of every value kind, a listing."""

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
NUMBERS = st.sampled_from(
    [
        "1" * 401,
        "-1",
        "26.5",
        "1e400",
        "-1e400",
        "1e-400",
        "NaN",
        "Infinity",
        "-0",
        '"26"',
        "9" * 5000,
        str(2**63),
        str(2**63 - 1),
        "1e9",
        "1000000001.0",
        "0.0",
        "1E+2",
    ]
)
VALUES = st.sampled_from(['"x"', "5", "null", "true", "[]", "{}", '[1, "a"]', '{"a": 1}', '""', "-3", "1.5"])
DEPTHS = st.sampled_from([150, 199, 200, 201, 1000, 5000, 100_000])
_VALUE = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null')
_PAIR = re.compile(r'"(?:[^"\\]|\\.)*":\s*(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\[\]|\{\})')


KINDS = [
    "cut",
    "swap",
    "twice",
    "twice",
    "deep",
    "deep",
    "number",
    "number",
    "number",
    "flip",
    "splice",
    "ends",
]
"""How the real text is changed; those the reader failed at before are drawn more often."""


@st.composite
def mutated(draw) -> str:
    """The real cassette's text, changed one to three times."""
    text = REAL
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(KINDS))
        if kind == "cut":
            text = text[: draw(st.integers(0, len(text)))]
        elif kind in ("swap", "number", "deep"):
            spans = [
                m.span() for m in _VALUE.finditer(text) if kind != "number" or m.group()[0] in "-0123456789"
            ]
            if not spans:
                continue
            start, end = draw(st.sampled_from(spans))
            if kind == "swap":
                new = draw(VALUES)
            elif kind == "number":
                new = draw(NUMBERS)
            else:
                depth = draw(DEPTHS)
                new = draw(st.sampled_from(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth]))
            text = text[:start] + new + text[end:]
        elif kind == "twice":
            spans = [m.span() for m in _PAIR.finditer(text)]
            if spans:
                start, end = draw(st.sampled_from(spans))
                pair = text[start:end]
                if draw(st.booleans()):  # the same key with another value
                    pair = pair[: pair.index(":") + 1] + " " + draw(VALUES)
                text = text[:end] + ", " + pair + text[end:]
        elif kind == "flip":
            at = draw(st.integers(0, max(len(text) - 1, 0)))
            text = text[:at] + draw(st.sampled_from([*list('{}[],:"\\\n\x00\ufeff\r'), "�"])) + text[at + 1 :]
        elif kind == "splice":
            start = draw(st.integers(0, len(text)))
            end = draw(st.integers(start, min(len(text), start + 200)))
            text = text[:start] + text[end:] + text[start:end]
        else:
            text = draw(
                st.sampled_from(["\ufeff" + text, text.replace("\n", "\r\n"), text.replace("\n", "\r")])
            )
    return text


def _random_document(value: object, allow_nan: bool) -> str:
    try:
        return json.dumps(value, allow_nan=allow_nan)
    except ValueError:
        return json.dumps(value, allow_nan=True)


DOCUMENTS = st.one_of(
    mutated(),
    mutated(),
    st.builds(_random_document, JSON, st.booleans()),
    st.lists(
        st.builds(
            _random_document,
            st.dictionaries(
                st.sampled_from(
                    [
                        "model",
                        "messages",
                        "chunks",
                        "tool",
                        "arguments",
                        "result",
                        "toolbox",
                        "listing",
                        "text",
                        "done",
                    ]
                ),
                JSON,
                max_size=5,
            ),
            st.booleans(),
        ),
        max_size=3,
    ).map("\n".join),
)
"""Cassette texts: mostly broken, some valid."""


def read(text: str, folder: Path | None = None) -> str:
    """Read ``text`` as a cassette file and replay all of it: ``"read"``, ``"refused"`` (a
    `CassetteError`), or the name of the type of anything else raised."""
    with tempfile.TemporaryDirectory(dir=folder) as where:
        path = Path(where) / "fuzz.cassette.json"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        try:
            use(Cassette(path))
        except CassetteError:
            return "refused"
        except BaseException as error:  # noqa: BLE001 - that is what is counted
            return type(error).__name__
    return "read"


def use(cassette: Cassette) -> None:
    """What replay does with every entry (see the module's docstring)."""
    for entry in cassette.entries:
        key_of(entry.request)
        total = Usage()
        for chunk in entry.chunks:
            if chunk.usage is not None:
                total = total + chunk.usage
                _ = chunk.usage.tokens_per_second
                if chunk.usage.prompt_tokens:
                    _ = chunk.usage.prompt_tokens / max(len(key_of(entry.request)), 1)
        _ = total.tokens_per_second
    for entry in cassette.tool_entries:
        for codec in (None, MCP_VALUES):
            _replayed(ToolCall(entry.tool, entry.arguments), entry.result, codec, cassette.path, entry.line)
    for listing in cassette.listings:
        found = ToolTape(cassette, "replay").listing(listing.toolbox)  # checks the tools can be made
        for fields in found.listing:
            listed_tool(fields, handler=None)
