"""OAuth for `McpToolbox`, against a real MCP server with the SDK's authorization server in front.

tests/mcp_servers/oauth_server.py registers clients, answers /authorize at once with a redirect
(as a consent page would once allowed), and issues access tokens that last 2 s, with refresh
tokens. "The person's browser" here is an HTTP client that opens the link shown and follows the
redirects, which end at the box's own server on 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlparse

import httpx
import pytest

from meowgent_nb.mcp import McpServerError, McpToolbox, McpToolError, OAuth
from tests.mcp_servers import serving

GUARDED = str(Path(__file__).parents[1] / "mcp_servers" / "oauth_server.py")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with serving.http_server(GUARDED, tmp_path_factory.mktemp("oauth"), "2") as address:
        yield address


class Browser:
    """The person: opens each link shown (in another thread, as a browser is another program)."""

    def __init__(self):
        self.shown: list[tuple[str, str]] = []
        self.landed: list[int] = []

    def __call__(self, name: str, link: str) -> None:
        self.shown.append((name, link))
        threading.Thread(target=self._open, args=(link,)).start()

    def _open(self, link: str) -> None:
        self.landed.append(httpx.get(link, follow_redirects=True, timeout=10).status_code)


def test_a_server_that_wants_oauth_without_it_configured_says_so_in_one_line_with_the_fix(url):
    with pytest.raises(McpServerError) as raised:
        McpToolbox("guarded", url=url, connect_timeout=10)
    assert str(raised.value) == (
        f"the MCP server 'guarded' ({url}) answered HTTP 401 Unauthorized: it needs authorization (it uses OAuth)"
        f" and none is configured; add it with %tools mcp add guarded --url {url} --oauth, or McpToolbox(...,"
        " oauth=True) (a fixed token: --token T, or headers={'Authorization': 'Bearer T'})."
    )


def test_the_link_is_shown_the_answer_comes_back_to_127_0_0_1_and_the_tokens_are_kept_0600(url, tmp_path):
    browser = Browser()
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=browser)) as box:
        assert box.names == ["guarded_which_token", "guarded_echo_authorization", "guarded_quote_token"]
        first = int(box["guarded_which_token"].run({}))
    [(name, link)] = browser.shown
    redirect = json.loads((next(tmp_path.iterdir())).read_text())["client"]["redirect_uris"][0]
    assert (name, urlparse(link).path, browser.landed) == ("guarded", "/authorize", [200])
    assert urlparse(redirect).hostname == "127.0.0.1" and urlparse(redirect).path == "/callback"
    with pytest.raises(ConnectionRefusedError):  # the callback server stopped after the flow
        socket.create_connection(("127.0.0.1", urlparse(redirect).port), timeout=1).close()
    [kept] = tmp_path.iterdir()
    assert (oct(kept.stat().st_mode & 0o777), json.loads(kept.read_text())["server"]) == ("0o600", url)
    # A second box reads the kept token: nothing is shown; once it expired (2 s), it is refreshed.
    again = Browser()
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=again)) as box:
        assert int(box["guarded_which_token"].run({})) == first
    time.sleep(2.2)
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=again)) as box:
        assert int(box["guarded_which_token"].run({})) == first + 1
    assert again.shown == []


def test_a_token_the_server_quotes_back_is_masked_in_the_error_and_in_its_log(url, tmp_path):
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=Browser())) as box:
        with pytest.raises(McpToolError) as raised:
            box["guarded_quote_token"].run({})
        logged = [(entry.level, entry.logger, entry.text) for entry in box.log]
    assert str(raised.value) == "Error executing tool quote_token: token *** is not allowed to do that"
    assert logged == [("warning", "auth", "refused Bearer%20***")]  # "-" written %2d: lowercase hex


def test_a_token_a_tool_echoes_in_a_result_reaches_neither_the_cassette_nor_the_card(url, tmp_path, ip):
    from IPython.utils.capture import capture_output

    from meowgent_nb import ScriptedModel

    agent = ip.magics_manager.registry["AgentMagics"]
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=Browser()), record=True) as box:
        agent.toolboxes.append(box)
        try:
            call = '<tool_call>{"name": "guarded_echo_authorization", "arguments": {}}</tool_call>'
            ip.user_ns["model"] = ScriptedModel([call, "Done."])
            cassette = tmp_path / "cell" / "echo.cassette.json"
            with capture_output() as shown:
                ip.run_cell_magic(
                    "agent", f"--model-object model --approve allow --record {cassette} -o result", "Echo"
                )
        finally:
            agent.toolboxes.remove(box)
        [kept] = tmp_path.glob("*.json")
        tokens = json.loads(kept.read_text())["tokens"]
    access, refresh = tokens["access_token"], tokens["refresh_token"]
    [result] = ip.user_ns["result"].tool_results
    # Each form masked where it stands (base64: the characters that encode the token's bits alone).
    assert re.fullmatch(
        r"Bearer \*\*\* \| QmVhcmVyIG\*\*\*[A-Za-z0-9+/]{0,3}=* \| Bearer%20\*\*\*", result.output
    ), result.output
    written = cassette.read_bytes()
    card = (
        "".join(o.data.get("text/plain", "") + o.data.get("text/html", "") for o in shown.outputs)
        + shown.stdout
    )
    for secret in (access, refresh):
        header = f"Bearer {secret}"
        forms = [secret, base64.b64encode(header.encode()).decode()[12:-4], quote(header)[9:]]
        assert [form for form in forms if form.encode() in written or form in card] == []
    assert b"Bearer ***" in written and "Bearer ***" in card and "guarded_echo_authorization" in card


def test_a_refusal_or_no_answer_in_time_is_one_error_that_says_which(url, tmp_path):
    with pytest.raises(McpServerError) as refused:
        deny = f"http://127.0.0.1:{serving.free_port()}/deny"  # the test server refuses this client
        McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, redirect_uri=deny, show=Browser()))
    with pytest.raises(McpServerError) as late:
        McpToolbox(
            "guarded", url=url, oauth=OAuth(token_dir=tmp_path, wait=0.5, show=lambda name, link: None)
        )
    assert str(refused.value) == (
        f"the MCP server 'guarded' ({url}) could not be authorized with OAuth: the authorization server did not"
        " authorize meowgent_nb for 'guarded' (access_denied); allow access on its page, then %tools mcp reconnect"
        " guarded."
    )
    assert str(late.value) == (
        f"the MCP server 'guarded' ({url}) could not be authorized with OAuth: no authorization for the MCP server"
        " 'guarded' arrived within 0.5 s; open the link shown and allow access, or give OAuth(wait=...) more time."
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"command": ["server"], "oauth": True},
            "McpToolbox 'x': oauth= is for HTTP servers (url=); a stdio server is not asked",
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "oauth": "yes"},
            "McpToolbox 'x': oauth must be True, False or an OAuth(...), got 'yes'",
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "oauth": OAuth(grant="password")},
            "McpToolbox 'x': OAuth grant must be 'authorization_code', 'client_credentials', 'identity_assertion',"
            " got 'password'",
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "oauth": OAuth(grant="client_credentials", client_id="me")},
            "McpToolbox 'x': OAuth(grant='client_credentials') needs client_id, client_secret (or private_key);"
            " missing: client_secret",
        ),
        (
            {
                "url": "http://127.0.0.1:9/mcp",
                "oauth": OAuth(
                    grant="identity_assertion", client_id="me", client_secret="s3cret", id_token="t"
                ),
            },
            "McpToolbox 'x': OAuth(grant='identity_assertion') needs client_id, client_secret, issuer, id_token,"
            " idp_token_endpoint, idp_client_id; missing: issuer, idp_token_endpoint, idp_client_id",
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "oauth": OAuth(id_token="t", idp_client_id="c")},
            "McpToolbox 'x': id_token, idp_client_id are for OAuth(grant='identity_assertion')",
        ),
    ],
)
def test_oauth_options_that_cannot_work_are_refused_before_connecting(arguments, message):
    command = arguments.pop("command", None)
    with pytest.raises(ValueError) as refused:
        McpToolbox("x", command, **arguments)
    assert str(refused.value) == message


def test_reconnect_keeps_the_authorization(url, tmp_path):
    browser = Browser()
    with McpToolbox("guarded", url=url, oauth=OAuth(token_dir=tmp_path, show=browser)) as box:
        box.reconnect()
        assert box["guarded_which_token"].run({}).isdigit() and len(browser.shown) == 1


def test_in_a_kernel_the_button_is_in_the_running_cell_and_a_headless_run_says_no_one_can_authorize(
    tmp_path_factory,
):

    # A server of its own whose tokens last an hour: with the module's 2 s ones, a token could
    # expire between the client's check and the server's (a 401, then a new authorization).
    with serving.http_server(GUARDED, tmp_path_factory.mktemp("oauth-kernel")) as url:
        _kernel_cells(url, tmp_path_factory)


def _kernel_cells(url, tmp_path_factory):
    from tests.support.kernel_driver import running_kernel

    home = tmp_path_factory.mktemp("config")
    opened: list[str] = []

    def person(kernel, run, msg):  # clicks the button's link once it is shown in the cell
        data = msg["content"].get("data", {})
        if msg["msg_type"] == "display_data" and data.get("text/plain", "").startswith(
            "Authorize guarded: open "
        ):
            opened.append(data["text/plain"].split(" open ", 1)[1])
            threading.Thread(target=httpx.get, args=(opened[-1],), kwargs={"follow_redirects": True}).start()

    setup = f"import os; os.environ['XDG_CONFIG_HOME'] = {str(home)!r}\n%load_ext meowgent_nb"
    kernel_run = running_kernel(tmp_path_factory, "oauth", setup)
    kernel = next(kernel_run)
    try:
        headless = kernel.execute(f"%tools mcp add guarded --url {url} --oauth", allow_stdin=False)
        assert headless.reply["status"] == "error"
        assert [c["text"] for c in headless.of_type("stream") if c["name"] == "stderr"] == [
            f"UsageError: %tools mcp add guarded: the MCP server 'guarded' ({url}) could not be authorized with OAuth: no person"
            " can authorize 'guarded' in a headless run; run the cell once in Jupyter (the tokens are kept for the"
            " next runs).\n"
        ]
        run = kernel.ok(f"%tools mcp add guarded --url {url} --oauth", hook=person)
        assert len(opened) == 1 and run.stdout.splitlines()[0] == f"guarded (http: {url}): connected, 3 tools"
        again = kernel.ok(
            f"%tools mcp remove guarded\n%tools mcp add guarded --url {url} --oauth", allow_stdin=False
        )
        assert again.panel_texts == []  # the kept token: nothing to authorize, also headless
    finally:
        next(kernel_run, None)
