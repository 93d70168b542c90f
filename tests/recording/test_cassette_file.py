"""Cassette files as people leave them: every field given a hostile value, broken and cut-off
files, other encodings and line ends. Each is one `CassetteError` naming the file, the line,
what was wrong and how to fix it; what an editor does to a good file still loads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from meowgent_nb.models import ModelChunk, ModelRequest, Usage
from meowgent_nb.recording.cassette import Cassette, CassetteError, ReplayModel

FIX_LINE = " Fix that line, or delete the file and record again."
FIX_ENTRY = " Fix the entry, or delete the file and record again."

HEAD = (
    '{"model": "m",\n'
    ' "think": null,\n'
    ' "options": {},\n'
    ' "format": null,\n'
    ' "offered": [],\n'
    ' "tools": [],\n'
    ' "messages": [\n'
    '  {"content": "Hi", "role": "user"}\n'
    " ],\n"
)
"""An entry as it is written, up to its chunks (which begin on line 11)."""


def entry(second_chunk: str = '{"text": " there"}') -> str:
    """A written entry whose second chunk, on line 12, is ``second_chunk`` as raw text."""
    return (
        HEAD
        + ' "chunks": [\n'
        + '  {"text": "Hello"},\n'
        + f"  {second_chunk},\n"
        + '  {"done": true, "finish_reason": "stop", "usage": {"completion_tokens": 2}}\n'
        + " ]}\n"
    )


REQUEST = ModelRequest(messages=[{"role": "user", "content": "Hi"}])
REPLAYED = [
    ModelChunk(text="Hello"),
    ModelChunk(text=" there"),
    ModelChunk(done=True, usage=Usage(completion_tokens=2), finish_reason="stop"),
]


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "c.cassette.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))  # bytes: no newline translation on any platform
    return path


def load_error(path: Path) -> str:
    with pytest.raises(CassetteError) as caught:
        Cassette(path)
    return str(caught.value)


def replayed(path: Path) -> list[ModelChunk]:
    async def run() -> list[ModelChunk]:
        return [chunk async for chunk in ReplayModel(path).stream(REQUEST)]

    return asyncio.run(run())


USAGE_FIELDS = (
    "prompt_tokens, completion_tokens, total_seconds, load_seconds, prompt_seconds, completion_seconds,"
    " waited_seconds"
)
U = "chunks[1].usage."


@pytest.mark.parametrize(
    ("chunk", "problem"),
    [
        ('{"text": 5}', "chunks[1].text must be a string, found 5"),
        ('{"text": null}', "chunks[1].text must be a string, found null"),
        ('{"text": ["a", "b"]}', 'chunks[1].text must be a string, found ["a", "b"]'),
        ('{"thinking": {"t": 1}}', 'chunks[1].thinking must be a string, found {"t": 1}'),
        ('{"done": "true"}', 'chunks[1].done must be true or false, found "true"'),
        ('{"done": 1}', "chunks[1].done must be true or false, found 1"),
        ('{"done": null}', "chunks[1].done must be true or false, found null"),
        ('{"finish_reason": 5}', "chunks[1].finish_reason must be a string, found 5"),
        ('{"finish_reason": ["length"]}', 'chunks[1].finish_reason must be a string, found ["length"]'),
        ('{"usage": "fast"}', 'chunks[1].usage must be an object, found "fast"'),
        ('{"usage": [12]}', "chunks[1].usage must be an object, found [12]"),
        ('{"usage": {"prompt_tokens": "12"}}', U + 'prompt_tokens must be a whole number, found "12"'),
        ('{"usage": {"prompt_tokens": 1.5}}', U + "prompt_tokens must be a whole number, found 1.5"),
        ('{"usage": {"prompt_tokens": true}}', U + "prompt_tokens must be a whole number, found true"),
        ('{"usage": {"completion_tokens": -3}}', U + "completion_tokens must not be negative, found -3"),
        ('{"usage": {"total_seconds": "2s"}}', U + 'total_seconds must be a number, found "2s"'),
        ('{"usage": {"total_seconds": 1e999}}', U + "total_seconds must be a finite number, found Infinity"),
        (
            '{"usage": {"tokens": 3}}',
            f'chunks[1].usage has an unknown field "tokens"; a usage has {USAGE_FIELDS}',
        ),
        ('{"tool_calls": [{"name": 5}]}', "chunks[1].tool_calls[0].name must be a string, found 5"),
        ('{"tool_calls": [{"name": null}]}', "chunks[1].tool_calls[0].name must be a string, found null"),
        ('{"tool_calls": [{"arguments": {}}]}', 'chunks[1].tool_calls[0] has no "name"'),
        ('{"tool_calls": "add"}', 'chunks[1].tool_calls must be a list, found "add"'),
        ('{"tool_calls": {"name": "add"}}', 'chunks[1].tool_calls must be a list, found {"name": "add"}'),
        ('{"tool_calls": null}', "chunks[1].tool_calls must be a list, found null"),
        ('{"tool_calls": ["add"]}', 'chunks[1].tool_calls[0] must be an object, found "add"'),
        (
            '{"tool_calls": [{"name": "add", "arguments": "{\\"a\\": 1}"}]}',
            'chunks[1].tool_calls[0].arguments must be an object, found "{\\"a\\": 1}"',
        ),
        (
            '{"tool_calls": [{"name": "add", "arguments": [1, 2]}]}',
            "chunks[1].tool_calls[0].arguments must be an object, found [1, 2]",
        ),
        (
            '{"tool_calls": [{"name": "add", "arguments": null}]}',
            "chunks[1].tool_calls[0].arguments must be an object, found null",
        ),
        (
            '{"tool_calls": [{"name": "add", "id": 3}]}',
            "chunks[1].tool_calls[0].id must be a string, found 3",
        ),
        (
            '{"tool_calls": [{"name": "add", "args": {}}]}',
            'chunks[1].tool_calls[0] has an unknown field "args"; a tool call has name, arguments, id',
        ),
        (
            '{"txt": "a"}',
            (
                'chunks[1] has an unknown field "txt"; a chunk has text, thinking, tool_calls, done, usage,'
                " finish_reason, retry"
            ),
        ),
        ('"there"', 'chunks[1] must be an object, found "there"'),
        ("null", "chunks[1] must be an object, found null"),
        ("[]", "chunks[1] must be an object, found []"),
    ],
)
def test_a_chunk_field_with_a_hostile_value_names_its_line_and_field(tmp_path, chunk, problem):
    path = write(tmp_path, entry(chunk))
    assert load_error(path) == f"Cassette {path}, line 12: {problem}.{FIX_LINE}"


@pytest.mark.parametrize(
    ("field", "value", "line", "problem"),
    [
        ("model", "5", 1, "model must be a string, found 5"),
        ("think", '"yes"', 2, 'think must be true or false, found "yes"'),
        ("options", "[]", 3, "options must be an object, found []"),
        ("format", '"json"', 4, 'format must be an object, found "json"'),
        ("offered", '"add"', 5, 'offered must be a list, found "add"'),
        ("offered", "[1]", 5, "offered[0] must be a string, found 1"),
        ("tools", "{}", 6, "tools must be a list, found {}"),
        ("messages", '"Hi"', 7, 'messages must be a list, found "Hi"'),
        ("messages", '["Hi"]', 7, 'messages[0] must be an object, found "Hi"'),
        ("chunks", '{"text": "Hello"}', 10, 'chunks must be a list, found {"text": "Hello"}'),
        ("chunks", "null", 10, "chunks must be a list, found null"),
    ],
)
def test_a_request_field_with_a_hostile_value_names_its_line_and_field(tmp_path, field, value, line, problem):
    text = entry()
    lines = text.split("\n")
    index = next(i for i, row in enumerate(lines) if row.lstrip(" {").startswith(f'"{field}"'))
    if field in ("messages", "chunks"):  # the list's own lines go; the value takes their place
        end = next(i for i in range(index, len(lines)) if lines[i].startswith(" ]"))
        lines[index : end + 1] = [f' "{field}": {value}' + ("}" if field == "chunks" else ",")]
    else:
        lines[index] = lines[index].split(":")[0] + f": {value},"
    path = write(tmp_path, "\n".join(lines))
    assert load_error(path) == f"Cassette {path}, line {line}: {problem}.{FIX_LINE}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '{"model": "m",\n "messages": [],\n "chunks": [}\n',
            "line 3 column 13: not valid JSON (Expecting value).",
        ),
        ("Hello, cassette\n", "line 1 column 1: not valid JSON (Expecting value)."),
        (entry() + "\n[1]\n", "line 16: expected a JSON object per request, found an array."),
        (entry() + '\n"chunks"\n', "line 16: expected a JSON object per request, found a string."),
        ("42", "line 1: expected a JSON object per request, found a number."),
        ("null", "line 1: expected a JSON object per request, found null."),
    ],
)
def test_a_file_that_is_not_a_sequence_of_objects_names_the_line(tmp_path, text, problem):
    path = write(tmp_path, text)
    fix = FIX_LINE if "JSON object" in problem or "valid JSON" in problem else FIX_ENTRY
    assert load_error(path) == f"Cassette {path}, {problem}{fix}"


def test_an_unknown_or_missing_entry_field_says_what_an_entry_has(tmp_path):
    path = write(tmp_path, '\n{"model": "m", "messages": [], "chunks": [], "headers": {}}')
    assert load_error(path) == (
        f'Cassette {path}, line 2: the entry has an unknown field "headers"; an entry has model, think,'
        f" options, format, offered, tools, messages, chunks.{FIX_LINE}"
    )
    path = write(tmp_path, '{"model": "m", "messages": []}')
    assert load_error(path) == f'Cassette {path}, line 1: the entry has no "chunks".{FIX_LINE}'


def test_a_chunk_before_any_request_is_named_as_one(tmp_path):
    path = write(tmp_path, '{"text": "Hello"}\n' + entry())
    assert load_error(path) == (
        f'Cassette {path}, line 1: a chunk outside any request: a chunk goes in the "chunks" list of its'
        " request's entry. Move it there, or delete the file and record again."
    )


def test_several_mistakes_in_an_entry_are_listed_with_their_lines(tmp_path):
    path = write(tmp_path, entry('{"text": 5, "done": "no"}').replace('"model": "m"', '"model": 7'))
    assert load_error(path) == (
        f"Cassette {path}, the entry on line 1 has 3 mistakes:\n"
        "line 1: model must be a string, found 7.\n"
        "line 12: chunks[1].text must be a string, found 5.\n"
        'line 12: chunks[1].done must be true or false, found "no".\n'
        "Fix those lines, or delete the file and record again."
    )


@pytest.mark.parametrize(
    ("cut", "line", "column"),
    [(len(entry()) - 4, 14, 1), (len(entry()) - 60, 13, 18)],
    ids=["between-values", "inside-a-string"],
)
def test_a_file_cut_off_says_so(tmp_path, cut, line, column):
    path = write(tmp_path, entry() + "\n" + entry()[:cut])
    assert load_error(path) == (
        f"Cassette {path}, line {line + 15} column {column}: the file ends inside the entry that begins"
        " on line 16 (it was cut off, or a closing bracket is missing). Complete or delete that entry,"
        " or delete the file and record again."
    )


@pytest.mark.parametrize(
    ("number", "problem"),
    [
        ("NaN", "NaN, which is not JSON (write a number, or null)"),
        ("Infinity", "Infinity, which is not JSON (write a number, or null)"),
        ("-Infinity", "-Infinity, which is not JSON (write a number, or null)"),
        ("1" * 5000, "a number too long to read (over 4300 digits)"),
    ],
)
def test_numbers_json_cannot_hold_name_the_entry(tmp_path, number, problem):
    path = write(tmp_path, entry() + "\n" + entry(f'{{"usage": {{"prompt_seconds": {number}}}}}'))
    assert load_error(path) == f"Cassette {path}, line 16: the entry has {problem}.{FIX_ENTRY}"


def test_a_token_count_loads_as_it_is_up_to_what_a_backend_can_count(tmp_path):
    path = write(tmp_path, entry(f'{{"usage": {{"prompt_tokens": {2**63 - 1}}}}}'))
    assert Cassette(path).entries[0].chunks[1] == ModelChunk(usage=Usage(prompt_tokens=2**63 - 1))
    path = write(tmp_path, entry('{"usage": {"prompt_tokens": 100000000000000000000000}}'))
    assert load_error(path) == (
        f"Cassette {path}, line 12: chunks[1].usage.prompt_tokens must be at most 9223372036854775807,"
        f" found 100000000000000000000000.{FIX_LINE}"
    )


def test_a_file_in_another_encoding_or_not_a_file_is_named(tmp_path):
    path = write(tmp_path, entry('{"text": " caf\u00e9"}').encode("latin-1"))
    assert load_error(path) == (
        f"Cassette {path}, line 12: not UTF-8 text (byte 0xe9). Save it as UTF-8, or delete the file and"
        " record again."
    )
    folder = tmp_path / "folder.cassette.json"
    folder.mkdir()
    assert load_error(folder) == f"Cannot read the cassette {folder}: Is a directory."


def test_an_empty_file_loads_with_no_recordings_and_replay_says_so(tmp_path):
    for content in ("", "\n\n  \n"):
        path = write(tmp_path, content)
        assert Cassette(path).entries == []
        with pytest.raises(CassetteError) as caught:
            replayed(path)
        assert str(caught.value).splitlines()[:2] == [
            f"The cassette {path} has no recording of request 1; nothing was sent to a model.",
            "The cassette has no recordings at all.",
        ]


def test_a_bom_and_windows_or_old_mac_line_ends_still_load_with_the_same_lines(tmp_path):
    two = entry() + "\n" + entry().replace('" there"', '" again"')
    for content in ("\ufeff" + two, two.replace("\n", "\r\n"), two.replace("\n", "\r")):
        path = write(tmp_path, content)
        assert [entry.line for entry in Cassette(path).entries] == [1, 16]
        assert replayed(path) == REPLAYED
    # And a mistake in such a file is on the line an editor shows.
    path = write(tmp_path, ("\ufeff" + entry() + "\n" + entry("5")).replace("\n", "\r\n"))
    assert load_error(path) == f"Cassette {path}, line 27: chunks[1] must be an object, found 5.{FIX_LINE}"


def test_what_an_editor_does_to_a_good_file_still_loads(tmp_path):
    # Reindented, keys reordered, optional fields left out, all on one line: the same recording.
    text = (
        '{"chunks": [{"text": "Hello"}, {"text": " there"},\n'
        '\t\t{"usage": {"completion_tokens": 2}, "finish_reason": "stop", "done": true}],\n'
        '   "messages": [ {"role": "user", "content": "Hi"} ], "model": "m"}'
    )
    path = write(tmp_path, text)
    assert replayed(path) == REPLAYED
    assert Cassette(path).entries[0].request == Cassette(write(tmp_path, entry())).entries[0].request
