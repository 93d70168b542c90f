"""A server that quotes its bearer token back (``--token T``), with a real SDK server over HTTP
(tests/mcp_servers/quoting_server.py): the token is masked in every form, in everything the server
sends, where the box receives it: results, errors, log messages (`log`, ``%tools mcp log``, the
card), progress, instructions, listings, resources, prompts, elicitation and sampling requests;
and so it reaches neither the model, the card, the cassette nor an error."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from IPython.utils.capture import capture_output

from meowgent_nb.agent.running_call import RUNNING_CALL, RunningCall
from meowgent_nb.mcp import McpServerError, McpToolbox, McpToolError
from meowgent_nb.tools.calls import ToolCall
from tests.mcp_servers.serving import http_server

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "quoting_server.py")
TOKEN = "s3cr3t/T0ken+with=odd~chars"  # characters that percent-, JSON- and HTML-escaping change
UNMASKABLE = (
    "a message from the MCP server could not be masked (nested too deep, or a credential where text"
    " cannot stand); "
)


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with http_server(SERVER, tmp_path_factory.mktemp("quoting"), TOKEN) as address:
        yield address


@pytest.fixture(scope="module")
def box(url):
    with McpToolbox("q", url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as made:
        yield made


def test_a_result_echoing_the_token_in_five_forms_has_each_masked(box):
    # As it is, %2f-encoded (lowercase hex), JSON-escaped (\/, \u002b), HTML-escaped (&#x2f;,
    # &plus;, &#61;), and base64 of the whole header (its last character and padding left).
    assert box["q_echo_bearer"].run({}) == "*** | *** | *** | *** | ***w=="


def test_an_error_quoting_the_token_is_masked(box):
    with pytest.raises(McpToolError) as raised:
        box["q_refuse_bearer"].run({})
    assert str(raised.value) == "Error executing tool refuse_bearer: the token *** may not do that"


class Watching:
    """An approver that records what reaches the call's card."""

    def __init__(self):
        self.progress_seen: list[str | None] = []
        self.told: list[str] = []

    def progress(self, running, progress):
        self.progress_seen.append(progress.message)

    def tell(self, running, text):
        self.told.append(text)


def test_a_log_message_and_a_progress_message_quoting_the_token_are_masked_in_the_log_and_the_card(box):
    watching = Watching()

    async def main():
        loop = asyncio.get_running_loop()
        RUNNING_CALL.set(RunningCall(ToolCall("q_chat_bearer", {}), loop, 30.0, watching, None))
        run = contextvars.copy_context().run
        result = await loop.run_in_executor(None, run, box["q_chat_bearer"].run, {})
        await asyncio.sleep(0.05)  # what the MCP loop handed over last is drawn
        return result

    assert asyncio.run(main()) == "chatted"
    assert (box.log[-1].logger, box.log[-1].text) == ("auth", "the token *** was used")
    assert watching.told == ["q logged warning (auth): the token *** was used"]
    assert watching.progress_seen == ["authorized as ***"]


def test_instructions_listings_resources_and_prompts_quoting_the_token_are_masked(box):
    assert box.instructions == "Send *** with each request."
    assert box["q_echo_bearer"].description == "Echoes the token; clients send ***."
    assert box.read("notes://token") == "token=***"
    assert box.prompt("use_token") == [{"role": "user", "content": "Call me with ***."}]


def test_elicitation_and_sampling_requests_quoting_the_token_are_masked(box):
    assert box["q_confirm"].run({}) == "decline"  # outside an agent run no one is asked
    nobody = "the tool was called outside an agent run, so no one can be asked"
    with pytest.raises(McpServerError) as refused:
        box["q_judge"].run({})
    assert str(refused.value) == (
        f"the MCP server 'q' refused the call to judge: the sampling request was refused: {nobody} (error -1)"
    )
    assert [(asked.kind, asked.what, asked.outcome) for asked in box.history[-2:]] == [
        ("elicitation", "Confirm that *** may be used.", f"decline: {nobody}"),
        ("sampling", "Is *** a good token?", f"refused: {nobody}"),
    ]


def test_with_token_t_neither_the_card_the_cassette_the_log_view_nor_the_result_holds_it(url, ip, tmp_path):
    from meowgent_nb import ScriptedModel

    with capture_output():
        ip.run_line_magic("tools", f"mcp add q --url {url} --token {TOKEN} --record")
    call = '<tool_call>{"name": "q_echo_bearer", "arguments": {}}</tool_call>'
    chat = '<tool_call>{"name": "q_chat_bearer", "arguments": {}}</tool_call>'
    ip.user_ns["model"] = ScriptedModel([call, chat, "Done."])
    cassette = tmp_path / "echo.cassette.json"
    with capture_output() as shown:
        options = f"--model-object model --approve allow --record {cassette} -o result"
        ip.run_cell_magic("agent", options, "Echo")
        ip.run_line_magic("tools", "mcp log q")
    [echoed, chatted] = ip.user_ns["result"].tool_results
    assert (echoed.output, chatted.output) == ("*** | *** | *** | *** | ***w==", "chatted")
    written = cassette.read_text()
    card = "".join(o.data.get("text/plain", "") + o.data.get("text/html", "") for o in shown.outputs)
    card += shown.stdout
    header = f"Bearer {TOKEN}"
    encoded = quote(TOKEN, safe="")
    forms = [TOKEN, encoded, encoded.lower(), base64.b64encode(header.encode()).decode()[:-4]]
    assert [form for form in forms if form in written or form in card] == []
    assert "the token *** was used" in card and "q_echo_bearer" in card and "*** | ***" in written


def test_a_message_too_deep_to_mask_is_not_passed_on_an_answer_becomes_an_error_that_says_so():
    from mcp.shared.message import SessionMessage
    from mcp_types.jsonrpc import JSONRPCError, JSONRPCNotification, JSONRPCResponse

    from meowgent_nb.mcp.client._secrets import masked_message
    from meowgent_nb.mcp.config import secret_mask

    mask = secret_mask([TOKEN])
    deep: object = TOKEN
    for _ in range(300):
        deep = [deep]
    answer = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=7, result={"deep": deep}))
    refused = masked_message(mask, answer)
    assert isinstance(refused.message, JSONRPCError) and refused.message.id == 7
    assert (refused.message.error.code, refused.message.error.message) == (
        -32603,
        UNMASKABLE + "it was not used",
    )
    said = JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"d": deep})
    note = SessionMessage(said)
    dropped = masked_message(mask, note)
    assert (type(dropped), str(dropped)) == (
        ValueError,
        UNMASKABLE + "it was dropped",
    )
    clean = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=8, result={"deep": [[["fine"]]]}))
    assert masked_message(mask, clean) is clean  # nothing to mask: the message as it came


def test_a_stdio_server_saying_a_credential_of_its_env_back_has_it_masked_and_a_setting_left():
    env = {
        "GITHUB_TOKEN": "ghp_0123456789abcdef",
        "NOTES_API_KEY": "k-9f8e7d6c5b",
        "NOTES_DIR": "/srv/notes/x",
    }
    with McpToolbox("e", command=[sys.executable, SERVER], env=env) as box:
        say = box["e_say_env"]
        assert say.run({"name": "GITHUB_TOKEN"}) == "GITHUB_TOKEN=***"
        assert say.run({"name": "NOTES_API_KEY"}) == "NOTES_API_KEY=***"
        assert say.run({"name": "NOTES_DIR"}) == "NOTES_DIR=/srv/notes/x"
