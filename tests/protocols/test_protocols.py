"""Tool protocols are objects with one interface, found by name; models and protocols stay apart.

The agent's behaviour per protocol is asserted in test_agent.py and test_json_protocol.py; this
file covers what the extraction added: the registry, a protocol passed as an object, the
``xml-seed`` variant, the native protocol's call reader, and which modules may import which.
"""

from __future__ import annotations

import pytest

from meowgent_nb import Agent, ScriptedModel, ToolCall, tool
from meowgent_nb.events import TextDelta
from meowgent_nb.protocols import PROTOCOLS, ToolProtocol, get_protocol
from meowgent_nb.protocols.native import NativeCallParser
from meowgent_nb.protocols.prompt import RESULTS_NOTICE, TOOL_RULES
from meowgent_nb.protocols.xml import call_schema
from meowgent_nb.protocols.xml_seed import XmlSeedProtocol, seed_xml


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def add2(a: int, b: int) -> int:
    """Add two numbers, again."""
    return a + b


def test_the_registry_finds_protocols_by_name_and_takes_objects_as_they_are():
    assert list(PROTOCOLS) == ["xml", "native", "json", "list", "decide"]
    assert [get_protocol(name).name for name in ("xml", "native", "json", "xml-seed")] == [
        "xml",
        "native",
        "json",
        "xml-seed",
    ]
    assert all(isinstance(p, ToolProtocol) for p in PROTOCOLS.values())
    mine = XmlSeedProtocol()
    assert get_protocol(mine) is mine
    for wrong, shown in (("yaml", "'yaml'"), (3, "3")):
        with pytest.raises(ValueError) as caught:
            get_protocol(wrong)
        assert (
            str(caught.value) == f"protocol must be 'xml', 'native', 'json', 'list' or 'decide', got {shown}"
        )


def test_an_agent_takes_a_protocol_object_and_reads_as_its_name():
    agent = Agent(ScriptedModel(["Hi."]), tools=[add], protocol=XmlSeedProtocol())
    assert agent.protocol == "xml-seed"
    assert repr(agent).endswith("protocol='xml-seed')")
    agent.protocol = "json"
    assert agent.protocol == "json"


def test_xml_seed_is_the_xml_protocol_with_the_seed_tools_block():
    model = ScriptedModel(['<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>', "3"])
    seed = Agent(model, tools=[add], protocol="xml-seed", system="S.")
    assert seed.system_prompt() == "S.\n\n" + TOOL_RULES.replace("{tools}", seed_xml([add]))
    assert seed_xml([add]).startswith('<tools>\n  <tool name="add">\n    <description>Add two numbers.')
    result = seed.run("1+2?")
    assert (result.text, [r.output for r in result.tool_results]) == ("3", ["3"])
    assert model.requests[1].messages[3:] == [
        {"role": "user", "content": f'<tool_response name="add">\n3\n</tool_response>\n{RESULTS_NOTICE}'}
    ]
    assert (model.requests[0].call_format, model.requests[0].call_tag) == (call_schema([add]), "<tool_call>")


def test_the_native_call_reader_turns_blocks_into_calls_and_shows_an_unreadable_one_as_written():
    parser = NativeCallParser()
    events = parser.feed(
        'Hi <tool_call>{nonsense</tool_call> <tool_call>{"name": "add", "arguments": {"a": 1}}'
    )
    events += parser.close("stop")
    assert events == [
        TextDelta("Hi"),
        TextDelta("<tool_call>{nonsense</tool_call>"),
        ToolCall("add", {"a": 1}),
    ]


def test_the_native_protocol_hands_the_backend_its_call_reader_only_with_tools():
    native = get_protocol("native")
    with_tools = native.request([add], last=False)
    assert (list(with_tools.tools), with_tools.call_tag) == ([add], "<tool_call>")
    # The reader knows the offered names: a fenced call to one that ends the answer is a call,
    # one to a tool not offered stays text.
    answer = 'You can use: ```json\n{"name": "add", "arguments": {"a": 1}}\n```'
    reader = with_tools.call_parser()
    assert isinstance(reader, NativeCallParser)
    assert reader.feed(answer) + reader.close("stop") == [
        TextDelta("You can use:"),
        ToolCall("add", {"a": 1}),
    ]
    reader = native.request([add2], last=False).call_parser()
    events = reader.feed(answer) + reader.close("stop")
    assert all(isinstance(event, TextDelta) for event in events)
    assert "".join(event.text for event in events) == answer
    assert native.request([add], last=True).call_parser is None
    assert get_protocol("xml").request([add], last=False).call_parser is None
