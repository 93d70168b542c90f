"""`ToolCallParser` against a peer's conformance fixtures: CanIToolCall's ``qwen3-hermes`` family.

CanIToolCall (on PyPI, in the test extra) ships raw model outputs in Qwen's ``<tool_call>``
format with the parse a correct engine must produce (``canitoolcall/_data/spec/README.md``). Each
fixture is parsed whole, split in two at every character, one character at a time, and at seeded
random points; every parse must equal the expected one exactly (the spec's strict equality).

How the fixtures are replayed, where the spec leaves it to the engine:

- The parser reads the assistant's whole turn, and a chat template may pre-fill its start (the
  fixture's ``generation_prompt`` after ``<|im_start|>assistant\\n``: ``<think>\\n`` for the
  thinking-2507 models, an empty think block for thinking switched off). That text is fed first,
  as a backend that pre-fills it sends it. Without it, the thinking-2507 outputs hold a lone
  ``</think>`` and their reasoning would be shown as the answer.
- Fixtures tagged ``truncated`` end the way ``max_tokens`` ends a stream: the parser is closed
  with ``finish_reason="length"`` (the spec: adapters replay the finish as "length").
- The whitespace that separates text from a call after it (the newline a template puts before
  ``<tool_call>``, sglang's space) is not part of the text: "Let me check.\n<tool_call>" shows
  "Let me check.", as the spec's strict expectation has it. So every parse is compared strictly,
  not with the spec's soft equality (``soft-v1``: content and reasoning compared stripped).
- Our parser returns a `MalformedCall` where the spec expects "no tool calls" for a cut-off or
  unreadable call: it is not a call (nothing runs) but a ``parse_error`` result that tells the model
  what went wrong, so it can write the call again. The checks count it as no call.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from meowgent_nb import ToolCall
from meowgent_nb.events import TextDelta, ThinkingDelta
from meowgent_nb.models.wire_values import template_opens_thinking
from meowgent_nb.protocols.parsing import MalformedCall, PartialCall, ToolCallParser
from meowgent_nb.protocols.registry import get_protocol

canitoolcall = pytest.importorskip("canitoolcall")

FAMILY = Path(canitoolcall.__file__).parent / "_data" / "fixtures" / "qwen3-hermes"
FIXTURES = [
    json.loads(line) for path in sorted(FAMILY.glob("*.jsonl")) for line in path.read_text().splitlines()
]
MARKERS = json.loads((FAMILY / "family.json").read_text())["markers"]
HEADER = "<|im_start|>assistant\n"


def test_the_family_has_its_50_fixtures():
    assert len(FIXTURES) == 50
    assert all(fixture["spec_version"] == "0.1" for fixture in FIXTURES)


def turn_text(fixture):
    """The assistant's turn: what the template pre-filled, then what the model generated."""
    prompt = fixture.get("generation_prompt") or HEADER
    assert prompt.startswith(HEADER), prompt
    return prompt[len(HEADER) :] + fixture["raw_output"]


def parse(chunks, finish_reason, thinking_first=False):
    parser = ToolCallParser(thinking_first=thinking_first)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    events += parser.close(finish_reason)
    content = "".join(e.text for e in events if isinstance(e, TextDelta)) or None
    reasoning = "".join(e.text for e in events if isinstance(e, ThinkingDelta)) or None
    calls = [{"name": e.name, "arguments": typed(e.arguments)} for e in events if isinstance(e, ToolCall)]
    assert all(isinstance(e, (TextDelta, ThinkingDelta, ToolCall, MalformedCall)) for e in events)
    return {"content": content, "reasoning_content": reasoning, "tool_calls": calls}


def typed(value):
    """JSON compared with its types: 3 != "3" and true != 1 (Python's == would say equal)."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    return ("string", value)


def expected_of(fixture):
    expected = dict(fixture["expected"])
    for key in ("content", "reasoning_content"):
        expected[key] = expected.get(key) or None  # "" is null in the spec
    expected["tool_calls"] = [
        {"name": c["name"], "arguments": typed(c["arguments"])} for c in expected.get("tool_calls") or []
    ]
    return expected


def strategies(text):
    """Every chunking the fixture is parsed under, by name."""
    yield "one", [text]
    for at in range(len(text) + 1):
        yield f"split:{at}", [text[:at], text[at:]]
    yield "char", list(text)
    for seed in range(1, 6):
        rng, chunks, at = random.Random(seed), [], 0
        while at < len(text):
            step = rng.randint(1, 8)
            chunks.append(text[at : at + step])
            at += step
        yield f"rand:{seed}:8", chunks


def leaked(result, allowed):
    """Family markers in what the parse returned that the expected parse does not hold."""
    strings = [result["content"] or "", result["reasoning_content"] or ""]
    strings += [json.dumps(call, ensure_ascii=False) for call in result["tool_calls"]]
    return sorted({marker for marker in MARKERS for s in strings if marker in s and marker not in allowed})


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["id"].split("/", 1)[1] for f in FIXTURES])
def test_fixture_parses_as_expected_under_every_chunking(fixture):
    text = turn_text(fixture)
    finish = "length" if "truncated" in fixture["tags"] else "stop"
    results = {name: parse(chunks, finish) for name, chunks in strategies(text)}
    if "expected" in fixture:
        expected = expected_of(fixture)
        allowed = json.dumps(fixture["expected"], ensure_ascii=False)
        for name, result in results.items():
            assert result == expected, name
            assert leaked(result, allowed) == [], name
            assert result == results["one"], name  # the same, to the character, however split
    else:
        accept = fixture["expected_error"]["accept"]
        for name, result in results.items():
            outcome = "content_passthrough" if result["content"] == fixture["raw_output"] else "no_tool_calls"
            assert result["tool_calls"] == [], name
            # Passing the text through is one way of making no tool calls, not the other way round.
            accepted = set(accept) | ({"content_passthrough"} if "no_tool_calls" in accept else set())
            assert outcome in accepted, (name, outcome, accept)
            if outcome == "no_tool_calls":
                assert leaked(result, "") == [], name


TEXT_BEFORE_CALL = [
    "text-before-call-thinking",
    "text-before-call-no-thinking",
    "sglang-text-before-call-with-space",
    "instruct2507-text-before-call",
    "parallel-mixed-tools-text-before-no-thinking",
    "thinking2507-text-before-call",
]


@pytest.mark.parametrize("name", TEXT_BEFORE_CALL)
def test_text_before_a_call_reads_without_the_whitespace_that_separates_them(name):
    # Issue 49: the six fixtures that passed only with soft equality, the separator kept in the text.
    fixture = next(f for f in FIXTURES if f["id"].split("/", 1)[1] == name)
    before = fixture["raw_output"].split("<tool_call>")[0]
    expected = fixture["expected"]["content"]
    separator = " " if name.startswith("sglang") else "\n"  # what is dropped, and only that
    assert before.endswith(expected + separator) and expected == expected.strip()
    for chunking, chunks in strategies(turn_text(fixture)):
        assert parse(chunks, "stop") == expected_of(fixture), chunking


OPENS_THINKING = [f for f in FIXTURES if (f.get("generation_prompt") or "").endswith("<think>\n")]


def test_seven_fixtures_are_a_thinking_models_answer_after_a_prefilled_think():
    assert len(OPENS_THINKING) == 7


@pytest.mark.parametrize("sent_first", ["", "<think>\n"], ids=["raw", "prefill-sent"])
@pytest.mark.parametrize("fixture", OPENS_THINKING, ids=[f["id"].split("/", 1)[1] for f in OPENS_THINKING])
def test_a_thinking_models_answer_reads_the_same_whatever_the_backend_sends_first(fixture, sent_first):
    # Issue 31: the template pre-fills <think>; one backend sends it, another sends only what the
    # model generated. A parser told the answer starts in thinking reads both as expected.
    text = sent_first + fixture["raw_output"]
    finish = "length" if "truncated" in fixture["tags"] else "stop"
    expected = expected_of(fixture)
    for name, chunks in strategies(text):
        result = parse(chunks, finish, thinking_first=True)
        assert result == expected, name
        assert result == parse([turn_text(fixture)], finish), name  # as the pre-filled turn reads


# --- as the agent reads them: the answer as a backend sends it, with the parser the template gets ----


def agent_parse(protocol, chunks, finish_reason):
    """What the agent's parser of ``protocol`` reads from ``chunks`` (the calls being written left out)."""
    parser = protocol.parser([])
    events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close(finish_reason)
    events = [event for event in events if not isinstance(event, PartialCall)]
    content = "".join(e.text for e in events if isinstance(e, TextDelta)) or None
    reasoning = "".join(e.text for e in events if isinstance(e, ThinkingDelta)) or None
    calls = [{"name": e.name, "arguments": typed(e.arguments)} for e in events if isinstance(e, ToolCall)]
    return {"content": content, "reasoning_content": reasoning, "tool_calls": calls}


def test_the_seven_thinking_fixtures_are_the_ones_whose_template_opens_thinking():
    opened = [f["id"] for f in FIXTURES if template_opens_thinking(f.get("generation_prompt") or HEADER)]
    assert opened == [f["id"] for f in OPENS_THINKING]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["id"].split("/", 1)[1] for f in FIXTURES])
def test_each_answer_as_a_backend_sends_it_reads_as_expected_with_the_protocol_its_template_gets(fixture):
    # What canitoolcall replays: raw_output alone, after the generation prompt it did not send. The
    # agent's xml parser opens in thinking where the template does (`Agent.choose_protocol`).
    opens = template_opens_thinking(fixture.get("generation_prompt") or HEADER)
    protocol = get_protocol("xml", thinking_first=opens)
    finish = "length" if "truncated" in fixture["tags"] else "stop"
    prefilled = parse([turn_text(fixture)], finish)  # held to the expected parse above
    for name, chunks in strategies(fixture["raw_output"]):
        assert agent_parse(protocol, chunks, finish) == prefilled, name
