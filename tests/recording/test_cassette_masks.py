"""Masks hold for every value a cassette stores: strings, numbers, bytes, keys, nested values, MCP
media, errors and listings, in every form the writer gives them (plain, JSON-escaped, base64, a
number's digits). Recorded through real agent runs and a real MCP server; a property test writes
random values holding a secret and reads the file's bytes."""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent_nb import Agent, AgentResult, AutoApprove, ScriptedModel, tool
from meowgent_nb.mcp import McpToolbox
from meowgent_nb.models import ModelChunk, ModelRequest
from meowgent_nb.recording._file import chunk_json, request_fields
from meowgent_nb.recording.cassette import Cassette, RecordingModel, ReplayModel, ToolTape
from meowgent_nb.tools.calls import ToolCall, ToolResult
from tests.support.tool_calls import call

CARD = 4111111111111111
"""A secret that is a number: an account number passed as an int."""
TOKEN = "sk-Live0123456789"
ODD_SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "odd_server.py")


def run(path: Path, tools: list, turns: list, mask: list[str], prompt: str = "Go.") -> AgentResult:
    return Agent(RecordingModel(ScriptedModel(turns), path, mask=mask), tools=tools).run(prompt)


def replay(path: Path, tools: list, mask: list[str], prompt: str = "Go.") -> AgentResult:
    return Agent(ReplayModel(path, mask=mask), tools=tools).run(prompt)


def results(result: AgentResult) -> list:
    return result.tool_results


def forms(secret: str | bytes) -> list[bytes]:
    """The secret as the writer could write it: as it is, and JSON-escaped."""
    text = secret.decode("utf-8", "surrogateescape") if isinstance(secret, bytes) else secret
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    return [f.encode("utf-8", "backslashreplace") for f in {text, escaped}]


def stored_bytes(value):
    """Every base64 text the cassette stores bytes as (a value's ``bytes``, a medium's data), decoded."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("bytes", "image", "audio") and isinstance(item, str):
                yield base64.b64decode(item)
            else:
                yield from stored_bytes(item)
    elif isinstance(value, list):
        for item in value:
            yield from stored_bytes(item)


def decodable(value):
    """Every string of ``value`` that is base64 (bytes in a call's arguments are), decoded."""
    if isinstance(value, str):
        try:
            yield base64.b64decode(value, validate=True)
        except ValueError:
            pass
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from decodable(key)
            yield from decodable(item)
    elif isinstance(value, list):
        for item in value:
            yield from decodable(item)


@tool(record=True)
def account(owner: str) -> dict:
    """An owner's account."""
    return {"owner": owner, "number": CARD, "limit": float(CARD), "digits": [CARD, -CARD]}


def test_a_number_that_is_a_secret_is_masked_in_results_and_replays_as_a_string(tmp_path):
    path = tmp_path / "account.cassette.json"
    live = run(path, [account], [call("account", owner="Ada"), "Found."], [str(CARD)])
    assert results(live)[0].value == {
        "owner": "Ada",
        "number": CARD,
        "limit": float(CARD),
        "digits": [CARD, -CARD],
    }
    assert str(CARD) not in path.read_text()
    entry = Cassette(path).tool_entries[0]
    # A masked number is a string: its text as written with the match as *** (the float: 4111111111111111.0).
    masked = {"owner": "Ada", "number": "***", "limit": "***.0", "digits": ["***", "-***"]}
    assert entry.result.value.json_value == masked
    assert entry.result.output == '{"owner": "Ada", "number": ***, "limit": ***.0, "digits": [***, -***]}'
    assert results(replay(path, [account], [str(CARD)]))[0].value == masked


def test_a_number_in_a_calls_arguments_is_masked_and_the_masked_call_still_replays(tmp_path):
    path = tmp_path / "pay.cassette.json"
    tape = ToolTape(Cassette(path, fresh=True, mask=[str(CARD)]), "record")
    values = {"account": CARD, "amount": 12.5, "limit": float(CARD)}
    tape.record(values, ToolResult(ToolCall("pay", values), "paid", value=None))
    assert str(CARD) not in path.read_text()
    assert Cassette(path).tool_entries[0].arguments == {"account": "***", "amount": 12.5, "limit": "***.0"}
    replayed = ToolTape(Cassette(path, mask=[str(CARD)]), "replay").replay(ToolCall("pay", values), values)
    assert (replayed.output, replayed.value) == ("paid", None)


def test_a_whole_float_written_with_an_exponent_is_masked_by_its_digits():
    from meowgent_nb.recording import Mask

    mask = Mask(["10000000000000000", r"\b4242\b"])
    assert mask([1e16, 1e15, 4242, 4242.0, 14242, True, None]) == [
        "***",
        1e15,
        "***",
        "***.0",
        14242,
        True,
        None,
    ]
    assert mask({"4242": 1}) == {"***": 1}


@tool(record=True)
def download(name: str) -> bytes:
    """Download a file."""
    return b"\x89PNG\r\n\x1a\n" + f"token={TOKEN};".encode() + bytes(range(256))


def test_bytes_holding_a_secret_are_masked_before_they_are_base64_encoded(tmp_path):
    path = tmp_path / "bytes.cassette.json"
    run(path, [download], [call("download", name="a.png"), "Done."], [r"sk-Live\w+"])
    raw = path.read_bytes()
    assert TOKEN.encode() not in raw and b"sk-Live" not in raw
    stored = Cassette(path).tool_entries[0].result.value.bytes
    masked = b"\x89PNG\r\n\x1a\ntoken=***;" + bytes(range(256))
    assert base64.b64decode(stored) == masked  # bytes stay bytes, with *** in place of the match
    assert results(replay(path, [download], [r"sk-Live\w+"]))[0].value == masked


def test_a_match_only_in_the_base64_text_stars_the_bytes_it_encodes(tmp_path):
    # b"\xff\xff\xff" is "////" in base64: the mask never sees it in the bytes, only in what is written.
    from meowgent_nb.recording import Mask

    mask = Mask(["////"])
    written = mask(b"ab\xff\xff\xff\xff\xffcd")
    assert "////" not in written
    assert base64.b64decode(written) == b"ab****\xffcd"  # the bytes behind the match, starred
    assert Mask(["K"]).bytes(b"***") == ""  # nothing can be written without a match: no bytes at all


@tool(record=True)
def vault(entry: str) -> dict:
    """Read a vault entry."""
    if entry == "broken":
        raise PermissionError(f"vault refused key {TOKEN}")
    return {TOKEN: {"nested": [[{"deep": f"x{TOKEN}x", "n": CARD}]]}, "quote": 'say "sk-Live0"'}


def test_keys_nested_values_and_error_messages_are_masked(tmp_path):
    path = tmp_path / "vault.cassette.json"
    turns = [call("vault", entry="ok") + call("vault", entry="broken"), "Done."]
    run(path, [vault], turns, [r"sk-Live\w+", str(CARD)])
    text = path.read_text()
    assert "sk-Live" not in text and str(CARD) not in text
    ok, broken = Cassette(path).tool_entries
    assert ok.result.value.json_value == {
        "***": {"nested": [[{"deep": "x***", "n": "***"}]]},
        "quote": 'say "***"',
    }
    assert (broken.result.output, broken.result.exception) == (
        "Error: PermissionError: vault refused key ***",
        "PermissionError",
    )


def test_a_mask_matching_only_the_json_escaped_text_is_masked_too(tmp_path):
    # The value holds a newline; written, it is backslash-n: a mask for "a\nb" as typed must hold.
    from meowgent_nb.recording import Mask

    mask = Mask([re.escape("key\\nvalue"), re.escape('\\"q\\"')])
    assert mask("key\nvalue and key\\nvalue") == "*** and ***"
    assert mask('a "q" b') == "a *** b"
    assert mask({"x\ud800": "lone"}) == {"x\ud800": "lone"}


def test_an_mcp_image_is_masked_in_its_bytes_and_in_its_base64(tmp_path):
    path = tmp_path / "chart.cassette.json"
    # The chart's image is b"\x89PNG\r\n\x1a\n" ("iVBORw0KGgo="): one mask for its bytes, one for its base64.
    masks = ["PNG", "Gg"]
    with McpToolbox("odd", [sys.executable, ODD_SERVER], record=True) as box:
        model = RecordingModel(ScriptedModel([call("odd_chart"), "A chart."]), path, mask=masks)
        box.use_tape(model.tool_tape)
        Agent(model, tools=list(box), approver=AutoApprove()).run("Chart?")
    raw = path.read_bytes()
    assert b"PNG" not in raw and b"Gg" not in raw
    (medium,) = Cassette(path).tool_entries[0].result.value.media
    data = base64.b64decode(medium.image)
    assert data == b"\x89***\r\n**"  # "PNG" masked in the bytes; the bytes "Gg" encoded, starred
    assert "Gg" not in medium.image and medium.mime_type == "image/png"


# --- the property: no form of a secret in the file, whatever value holds it ---------------------

SECRET = "Zq7-secret"
NUMBER = 987654321987
scalars = st.one_of(
    st.text(max_size=8),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.binary(max_size=8),
    st.booleans(),
    st.none(),
)

VALUES = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def holding_a_secret(draw):
    """A nested value with the secret somewhere: in a string, a key, bytes, or as a number."""
    secret = draw(
        st.sampled_from(
            [
                lambda pad: pad + SECRET + pad,
                lambda pad: {pad + SECRET: pad},
                lambda pad: pad.encode("utf-8", "surrogatepass") + SECRET.encode() + b"\xff",
                lambda pad: NUMBER,
                lambda pad: -float(NUMBER),
                lambda pad: int(f"{len(pad)}{NUMBER}"),
                lambda pad: pad + 'Zq7-se"cret\n' + SECRET.replace("s", "\\s"),
            ]
        )
    )(draw(st.text(max_size=4)))
    where = draw(st.lists(st.sampled_from(["list", "dict"]), max_size=4))
    value = secret
    for kind in where:
        siblings = draw(st.lists(VALUES, max_size=2))
        value = (
            [*siblings, value]
            if kind == "list"
            else {"k" + str(i): s for i, s in enumerate(siblings)} | {"v": value}
        )
    return value


MASKS = [re.escape(SECRET), re.escape('se"cret\n'), r"\\s", str(NUMBER)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=holding_a_secret(), as_bytes=st.booleans())
def test_no_form_of_a_secret_reaches_the_file(tmp_path_factory, value, as_bytes):
    path = tmp_path_factory.mktemp("masks") / "p.cassette.json"
    cassette = Cassette(path, fresh=True, mask=MASKS)
    tape = ToolTape(cassette, "record")
    call_ = ToolCall("t", {"x": value})
    returned = value if not as_bytes else json.dumps(value, default=repr).encode()
    tape.record({"x": value}, ToolResult(call_, f"Error: {value!r}", kind="ok", value=returned))
    # And a model's request and answer holding it, as a RecordingModel stores them.
    request = ModelRequest(messages=[{"role": "user", "content": repr(value), "data": value}])
    fields = cassette.mask.fields(request_fields("m", request, {}))
    cassette.add(fields, cassette.mask.chunks([chunk_json(ModelChunk(text=repr(value), done=True))]))
    raw = path.read_bytes()
    secrets = ['se"cret\n', SECRET, "\\s", str(NUMBER)]
    for secret in secrets:
        for form in forms(secret):
            assert form not in raw, (form, raw)
    text, loaded, at = raw.decode(), [], 0
    while text[at:].strip():  # every entry in the file
        value, at = json.JSONDecoder().raw_decode(text, len(text) - len(text[at:].lstrip()))
        loaded.append(value)
    for data in [*stored_bytes(loaded), *decodable(loaded)]:
        for secret in secrets:
            assert secret.encode() not in data
    assert Cassette(path).tool_entries[0].tool == "t"  # and what was written reads back
    assert len(Cassette(path).entries) == 1


def test_a_mask_that_matches_a_field_name_masks_values_never_the_files_own_names(tmp_path):
    # The format's words, not secrets ("name" and "arguments" would mask the model's own call too).
    masks = [
        "model",
        "text",
        "kind",
        "json",
        "usage",
        "done",
        "stop",
        "tool_calls",
        "chunks",
        "result",
        "output",
    ]
    path = tmp_path / "words.cassette.json"
    live = run(path, [vault], [call("vault", entry="ok"), "Done: the model's text."], masks)
    loaded = Cassette(path)
    assert loaded.tool_entries[0].result.kind == "ok"
    assert "".join(chunk.text for chunk in loaded.entries[1].chunks) == "Done: the ***'s ***."
    assert loaded.entries[1].chunks[-1].finish_reason == "stop"
    assert replay(path, [vault], masks).text == "Done: the ***'s ***."
    assert live.text == "Done: the model's text."


def test_a_listing_is_masked_in_its_texts_and_schemas_but_keeps_approval_and_time_limit(tmp_path):
    @tool(approval=True, timeout=30)
    def charge(account: int = CARD) -> str:
        """Charge the account 4111111111111111 with the key sk-Live0123456789."""
        return "ok"

    path = tmp_path / "listing.cassette.json"
    tape = ToolTape(Cassette(path, fresh=True, mask=[str(CARD), r"sk-Live\w+", r"\d\d"]), "record")
    tape.record_listing("bank", [charge], f"Use {TOKEN}.", skipped={TOKEN: "bad"}, left_out=[TOKEN])
    text = path.read_text()
    assert str(CARD) not in text and "sk-Live" not in text
    listing = Cassette(path).listing("bank")
    (listed,) = listing.listing
    assert (listed.approval, listed.timeout) == (True, 30)  # settings, not content
    assert listed.description == "Charge the account *** with the key ***."
    assert listed.parameters["properties"]["account"]["default"] == "***"
    assert (listing.instructions, listing.skipped, listing.left_out) == ("Use ***.", {"***": "bad"}, ["***"])
