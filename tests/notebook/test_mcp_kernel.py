"""MCP in a real kernel: a stdio server's session (ipykernel's stderr has no fileno), and a served
tool whose outside call asks in the notebook, answered by a click on its card's button in the
serving cell (tests/notebook/test_served_notebook_kernel.py checks that card)."""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

import pytest

from meowgent_nb.mcp import McpToolbox, McpToolError
from tests.support.kernel_driver import TIMEOUT, Kernel, running_kernel

SERVER = str(Path(__file__).parents[1] / "mcp_servers" / "demo_server.py")
SETUP = f'''
%load_ext meowgent_nb
from meowgent_nb import tool

@tool(approval=True)
def t_remove(path: str) -> str:
    """Remove a file."""
    return f"removed {{path}}"

%tools mcp add demo -- {sys.executable} {SERVER}
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "mcp-kernel")


def test_a_stdio_server_works_inside_the_kernel(kernel):
    run = kernel.ok(SETUP)
    assert run.stdout.startswith("demo (stdio: python ")
    run = kernel.ok(
        'print(get_ipython().magics_manager.registry["AgentMagics"].toolboxes[0]["demo_add"].run({"a": 5}))'
    )
    assert run.stdout == "7\n"


def test_an_outside_call_of_a_served_approval_tool_asks_in_the_notebook(kernel):
    run = kernel.ok("%tools serve --include-approval-tools")
    url = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)\n", run.stdout).group(1)
    token = re.search(r"Token: (\S+)", run.stdout).group(1)
    outcome = {}
    with McpToolbox("nb", url=url, headers={"Authorization": f"Bearer {token}"}) as box:
        assert box.names == ["nb_t_remove"]  # the demo server's tools are not served on

        def call(path: str) -> None:
            try:
                outcome[path] = box["nb_t_remove"].run({"path": path})
            except McpToolError as error:
                outcome[path] = f"error: {error}"

        for path, button in (("a.txt", "Approve"), ("b.txt", "Deny")):
            caller = threading.Thread(target=call, args=(path,))
            caller.start()
            deadline = time.monotonic() + TIMEOUT
            clicked, buttons, card = False, {}, False  # the buttons of this call's card in the serving cell
            while not clicked and time.monotonic() < deadline:
                msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
                if msg["msg_type"] != "comm_open":
                    continue
                state = msg["content"]["data"]["state"]
                if state["_model_name"] == "HTMLModel" and f"&quot;{path}&quot;" in state["value"]:
                    card, buttons = True, {}
                elif state["_model_name"] == "ButtonModel" and card:
                    buttons[state["description"]] = msg["content"]["comm_id"]
                if button in buttons:
                    kernel.click(buttons[button])
                    clicked = True
            caller.join(TIMEOUT)
            assert clicked and not caller.is_alive()
    assert outcome == {
        "a.txt": "removed a.txt",
        "b.txt": "error: Denied: the person did not approve this call.",
    }
    kernel.ok("%tools serve --stop")


def test_a_kernel_shutdown_closes_the_sessions(tmp_path):
    kernel = Kernel(str(tmp_path))
    try:
        kernel.ok(f"%load_ext meowgent_nb\n%tools mcp add demo -- {sys.executable} {SERVER}")
        run = kernel.ok('print(get_ipython().magics_manager.registry["AgentMagics"].toolboxes[0].log_path)')
        log_path = Path(run.stdout.strip())
        assert log_path.exists()
    finally:
        kernel.kc.stop_channels()
        kernel.km.shutdown_kernel(now=False)  # a shutdown request, as a frontend sends it
    assert not log_path.exists()  # removed by the close that runs at interpreter exit
