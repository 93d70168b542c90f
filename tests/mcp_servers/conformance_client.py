"""The client under test of the MCP conformance suite (npm ``@modelcontextprotocol/conformance``).

The suite starts a test server for one scenario and runs this program with the server's URL last,
the scenario's name in ``MCP_CONFORMANCE_SCENARIO`` and, for some, JSON in
``MCP_CONFORMANCE_CONTEXT`` (a pre-registered client's id and secret). Everything goes through
`McpToolbox`, as a notebook's would; an exit status other than 0 fails the scenario.

``python conformance_client.py URL`` runs the scenario in this process. ``python
conformance_client.py --via SOCKET URL`` hands it to a process listening on the Unix socket
``SOCKET`` (tests/mcp/test_mcp_conformance.py), which runs `run` and answers with the exit status
and output: the suite runs its scenarios at once, and two dozen Pythons importing the SDK would
take longer than the suite waits on a two-core machine.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import traceback

CALLS = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {})}


class Defaults:
    """Approves every call and accepts every form with the defaults the server gave (SEP-1034)."""

    async def approve(self, requests):
        from meowgent_nb import Approved

        return [Approved("conformance client") for _ in requests]

    async def elicit(self, request):
        from meowgent_nb.mcp.client.asking import ElicitAnswer

        return ElicitAnswer(
            "accept", {f.name: f.default for f in request.form.fields if f.default is not None}
        )

    async def review_sampling(self, review):  # pragma: no cover - no scenario samples
        return False, "not in this scenario"

    def tell(self, running, text):
        pass


TOKEN_DIR: str | None = None
"""Where the token files go (the test reads them afterwards); None: a new temporary folder."""


async def follow(link: str) -> str:
    """The redirect handler: the suite's authorization server answers the link with a redirect at once."""
    import httpx2

    async with httpx2.AsyncClient() as http:
        answer = await http.get(link, follow_redirects=False)
    if answer.status_code not in (301, 302, 303, 307, 308):
        raise RuntimeError(
            f"the authorization link answered {answer.status_code}, not a redirect: {answer.text[:200]}"
        )
    return answer.headers["location"]


def _authorization_server(url: str) -> str:
    """The authorization server the MCP server names (its protected-resource metadata): what a
    person configuring cross-app access reads in the server's documentation. `OAuth` takes it as
    configuration and never asks the MCP server (the SDK's trust model for ID-JAGs)."""
    from urllib.parse import urlsplit

    import httpx2

    where = urlsplit(url)
    for path in (
        f"/.well-known/oauth-protected-resource{where.path}",
        "/.well-known/oauth-protected-resource",
    ):
        answer = httpx2.get(f"{where.scheme}://{where.netloc}{path}")  # RFC 9728: path-based first
        if answer.status_code == 200:
            return answer.json()["authorization_servers"][0]
    raise RuntimeError(f"no protected-resource metadata for {url}")


def run(url: str, scenario: str, context: dict) -> str:
    """Play ``scenario`` against the test server at ``url``; returns what to print (raises on failure)."""
    import tempfile

    from meowgent_nb import Agent, ScriptedModel
    from meowgent_nb.mcp import McpToolbox, OAuth

    machine = scenario.startswith("auth/client-credentials")  # a program's own credentials, no person
    grant = "client_credentials" if machine else "authorization_code"
    cross_app = {}  # enterprise-managed authorization (SEP-990): the identity provider the suite runs
    if "idp_id_token" in context:
        grant = "identity_assertion"
        cross_app = {
            "issuer": _authorization_server(url),
            "id_token": context["idp_id_token"],
            "idp_token_endpoint": context["idp_token_endpoint"],
            "idp_client_id": context["idp_client_id"],
        }
    oauth = OAuth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        authorize=follow,
        redirect_uri="http://localhost:3000/callback",
        token_dir=TOKEN_DIR or tempfile.mkdtemp(prefix="mcp-tokens-"),
        client_metadata_url="https://conformance-test.local/client-metadata.json",
        grant=grant,
        private_key=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm", "ES256"),
        **cross_app,
    )
    with McpToolbox("conformance", url=url, prefix=False, connect_timeout=20, oauth=oauth) as box:
        if scenario in CALLS:
            name, arguments = CALLS[scenario]
            return str(box[name].run(arguments))
        if scenario == "elicitation-sep1034-client-defaults":
            call = json.dumps({"name": "test_client_elicitation_defaults", "arguments": {}})
            model = ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."])
            result = Agent(model, tools=box, approver=Defaults()).run("Fill in the form")
            return result.tool_results[0].output
        if box.names:  # an auth scenario's server offers a tool: call it once, authorized
            return str(box[box.names[0]].run({}))
        return "connected"


def answer(request: dict) -> dict:
    """What `run` made of one relayed scenario: ``{"status": 0 or 1, "output": text}``."""
    try:
        return {"status": 0, "output": run(request["url"], request["scenario"], request["context"])}
    except BaseException:  # the scenario failed: the suite reads the exit status, a person the text
        return {"status": 1, "output": traceback.format_exc()}


def _request(url: str) -> dict:
    context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return {
        "url": url,
        "scenario": os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
        "context": json.loads(context or "{}"),
    }


def _relay(path: str, url: str) -> int:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(json.dumps(_request(url)).encode() + b"\n")
        reply = json.loads(sock.makefile("rb").readline())
    print(reply["output"], file=sys.stdout if reply["status"] == 0 else sys.stderr)
    return reply["status"]


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--via":
        sys.exit(_relay(sys.argv[2], sys.argv[-1]))
    reply = answer(_request(sys.argv[-1]))
    print(reply["output"])
    sys.exit(reply["status"])
