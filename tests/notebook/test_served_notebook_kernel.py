"""``%tools serve --notebook`` in a real kernel, called by an MCP client in another process.

The client is the `mcp` SDK's, in a process of its own (`outside_client`; its name in the initialize request is
``outside-agent``). Without ``--notebook`` the workspace's tools are not listed; with it they are,
after the person's. A served call that needs approval waits for a click on the card in the output
of the cell that ran ``%tools serve``, after that cell has finished; Approve gives the client the
result, Deny the denial, and the decision log says which client asked. A headless serving cell
refuses the call with one line. A served ``run_code`` runs only after Approve (its name is bound in
the notebook then, not before) and is refused headless. ``%tools serve --stop`` leaves nothing listening.
"""

from __future__ import annotations

import re
import socket
import time

import pytest

from meowgent_nb.notebook.workspace.tools import notebook_tools
from tests.notebook.outside_client import answer, outside
from tests.support.kernel_driver import TIMEOUT, running_kernel

SETUP = '''
%load_ext meowgent_nb
from meowgent_nb import tool

@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()

@tool(approval=True)
def t_remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"
'''
# The workspace's tools, whatever they are by now (list_variables, look_at, ...), in their order.
NOTEBOOK_TOOLS = [t.name for t in notebook_tools({})]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "served-notebook", SETUP)


def address(stdout: str) -> tuple[str, str, int]:
    url = re.search(r"at (http://127\.0\.0\.1:(\d+)/mcp)\n", stdout)
    token = re.search(r"Token: (\S+)", stdout)
    assert url is not None and token is not None, stdout
    return url.group(1), token.group(1), int(url.group(2))


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_workspace_tools_are_served_only_with_notebook(kernel):
    assert NOTEBOOK_TOOLS[:2] == ["list_variables", "look_at"]
    url, token, _ = address(kernel.ok("%tools serve").stdout)
    assert answer(outside(url, token)) == ["shout"]
    kernel.ok("%tools serve --stop")
    run = kernel.ok("%tools serve --notebook")
    url, token, _ = address(run.stdout)
    assert f"Tools: {', '.join(['shout', *NOTEBOOK_TOOLS])}\n" in run.stdout
    assert answer(outside(url, token)) == ["shout", *NOTEBOOK_TOOLS]
    kernel.ok("%tools serve --stop")


def test_a_served_call_waits_for_a_click_in_the_serving_cell_after_it_finished(kernel):
    serving = kernel.ok("%tools serve --notebook --include-approval-tools")
    url, token, port = address(serving.stdout)
    cell_id = serving.messages[0]["parent_header"]["msg_id"]
    (desk,) = [
        m for m in serving.of_type("display_data") if "application/vnd.jupyter.widget-view+json" in m["data"]
    ]
    assert desk["data"]["text/plain"] == "Calls from MCP clients that need approval will ask here."
    outcomes, texts = {}, []
    for path, button in (("a.txt", "Approve"), ("b.txt", "Deny")):
        client = outside(url, token, {"name": "t_remove", "arguments": {"path": path}})
        buttons, card, deadline = {}, "", time.monotonic() + TIMEOUT
        while button not in buttons and time.monotonic() < deadline:
            msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
            if msg["msg_type"] != "comm_open":
                continue
            assert msg["parent_header"]["msg_id"] == cell_id  # drawn in the serving cell's output
            state = msg["content"]["data"]["state"]
            if state["_model_name"] == "HTMLModel" and f"&quot;{path}&quot;" in state["value"]:
                card, buttons = state["value"], {}  # this call's card: its buttons come next
            elif state["_model_name"] == "ButtonModel" and card:
                buttons[state["description"]] = msg["content"]["comm_id"]
        assert client.poll() is None  # the call waits for the person
        assert card == (
            "<b>Asked by MCP client &#x27;outside-agent&#x27;</b><div style='margin-top:0.5em'>"
            "<code>t_remove</code><pre style='margin:0.2em 0'>"
            f"{{\n  &quot;path&quot;: &quot;{path}&quot;\n}}</pre></div>"
        )
        kernel.click(buttons[button])
        outcomes[path] = answer(client)
        shown = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        while shown["msg_type"] != "update_display_data":  # the box's text, for a saved notebook
            shown = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        texts.append(shown["content"]["data"]["text/plain"])
    assert outcomes == {
        "a.txt": [False, ["removed a.txt"]],
        "b.txt": [True, ["Denied: the person did not approve this call."]],
    }
    first = "Asked by MCP client 'outside-agent': t_remove(path='a.txt') -> approved by you"
    assert texts == [
        first,
        f"{first}\nAsked by MCP client 'outside-agent': t_remove(path='b.txt') -> denied by you",
    ]
    run = kernel.ok(
        "from meowgent_nb.agent.approvals.decisions import session_decisions\n"
        "for r in session_decisions(): print(r.tool, r.arguments, r.decision, r.by, sep=' | ')"
    )
    assert run.stdout == (
        "t_remove | {'path': 'a.txt'} | approved | you, asked by MCP client 'outside-agent'\n"
        "t_remove | {'path': 'b.txt'} | denied | you, asked by MCP client 'outside-agent'\n"
    )
    assert kernel.ok("%tools serve --stop").stdout == f"Stopped serving at {url}.\n"
    assert not listening(port)


def test_a_headless_serving_cell_refuses_the_call_with_one_line(kernel):
    serving = kernel.ok("%tools serve --notebook --include-approval-tools", allow_stdin=False)
    assert serving.of_type("display_data") == []  # no one to click: no box
    url, token, port = address(serving.stdout)
    client = outside(url, token, {"name": "t_remove", "arguments": {"path": "c.txt"}})
    assert answer(client) == [True, ["Denied: no person to approve (headless run)"]]
    kernel.ok("%tools serve --stop")
    assert not listening(port)


def _buttons_of_the_card_holding(kernel, text: str) -> dict[str, str]:
    """The buttons of the served call's card that shows ``text``, from the comms the kernel opens."""
    buttons, card, deadline = {}, False, time.monotonic() + TIMEOUT
    while "Deny" not in buttons and time.monotonic() < deadline:  # Approve, Edit code, Deny, ...
        msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["msg_type"] != "comm_open":
            continue
        state = msg["content"]["data"]["state"]
        if state["_model_name"] == "HTMLModel" and text in state["value"]:
            card = True
        elif state["_model_name"] == "ButtonModel" and card:
            buttons[state["description"]] = msg["content"]["comm_id"]
    return buttons


def test_a_served_run_code_waits_for_approve_then_binds_the_name_in_the_notebook(kernel):
    serving = kernel.ok("%tools serve --notebook --include-approval-tools")
    url, token, port = address(serving.stdout)
    code = "served_total = sum(range(5))\nprint('total', served_total)"
    client = outside(url, token, {"name": "run_code", "arguments": {"code": code}})
    try:
        buttons = _buttons_of_the_card_holding(kernel, "served_total")
        assert (list(buttons), client.poll()) == (["Approve", "Edit code", "Deny"], None)
        assert kernel.ok("print('served_total' in globals())").stdout == "False\n"  # not run before the click
        kernel.click(buttons["Approve"])
        assert answer(client) == [False, ["Printed:\ntotal 10"]]
        assert kernel.ok("print(served_total)").stdout == "10\n"
    finally:
        kernel.ok("%tools serve --stop")
    assert not listening(port)


def test_a_headless_serving_cell_refuses_run_code(kernel):
    serving = kernel.ok("%tools serve --notebook --include-approval-tools", allow_stdin=False)
    url, token, port = address(serving.stdout)
    try:
        client = outside(url, token, {"name": "run_code", "arguments": {"code": "headless_x = 1"}})
        assert answer(client) == [True, ["Denied: no person to approve (headless run)"]]
        assert kernel.ok("print('headless_x' in globals())").stdout == "False\n"
    finally:
        kernel.ok("%tools serve --stop")
    assert not listening(port)
