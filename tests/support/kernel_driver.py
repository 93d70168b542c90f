"""A real ipykernel driven the way a frontend drives it: execute requests, iopub, widget clicks."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import start_new_kernel

TIMEOUT = 60  # seconds for any one message; the machine is slow, the tests are not
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass
class Run:
    """What one execute request produced."""

    reply: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    """IOPub messages whose parent is the execute request."""
    elsewhere: list[dict[str, Any]] = field(default_factory=list)
    """IOPub messages that arrived meanwhile for other requests (clicks, subshell cells)."""
    widget_updates: dict[str, dict[str, Any]] = field(default_factory=dict)
    """comm id -> state the kernel sent meanwhile (their parent is the click, not the cell)."""
    buttons: dict[str, list[str]] = field(default_factory=dict)
    """Button description -> comm ids, in the order the panel made them."""
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    """comm id -> initial state of every widget the cell made."""
    timeline: list[dict[str, Any]] = field(default_factory=list)
    """Every IOPub message until the cell's idle, in the order they came (both lists above)."""

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages if m["msg_type"] in types]

    @property
    def stdout(self) -> str:
        return "".join(c["text"] for c in self.of_type("stream") if c["name"] == "stdout")

    @property
    def panel_texts(self) -> list[str]:
        return [c["data"]["text/plain"] for c in self.of_type("display_data", "update_display_data")]


Hook = Callable[["Kernel", Run, dict[str, Any]], None]


class Kernel:
    """A real ipykernel driven the way a frontend drives it."""

    def __init__(self, cwd: str, env: dict[str, str] | None = None):
        """Start a python3 kernel in ``cwd``, with ``env`` as its whole environment when given."""
        extra = {} if env is None else {"env": env}
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd, **extra)
        self._cell_ids = itertools.count(1)

    def execute(
        self,
        code: str,
        *,
        allow_stdin: bool = True,
        hook: Hook | None = None,
        frontend: str = "lab",
        cell_metadata: dict[str, Any] | None = None,
    ) -> Run:
        """Run ``code`` as ``frontend`` sends it: "lab" (JupyterLab, Notebook 7: the cell's
        metadata and its id in the request's metadata) or "console" (``jupyter console``: none)."""
        run = Run()
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": allow_stdin,
            "stop_on_error": True,
        }
        cell = {**(cell_metadata or {}), "cellId": f"cell-{next(self._cell_ids)}"}
        metadata = cell if frontend == "lab" else {}
        msg = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        msg_id = msg["header"]["msg_id"]
        while True:
            msg = self.kc.get_iopub_msg(timeout=TIMEOUT)
            content = msg["content"]
            run.timeline.append(msg)
            if msg["msg_type"] == "comm_msg" and content["data"].get("method") == "update":
                run.widget_updates.setdefault(content["comm_id"], {}).update(content["data"]["state"])
            if msg["msg_type"] == "comm_open":  # widgets made by the cell, or by a click's handler
                state = content["data"]["state"]
                run.models[content["comm_id"]] = state
                if state["_model_name"] == "ButtonModel":
                    run.buttons.setdefault(state["description"], []).append(content["comm_id"])
            if msg["parent_header"].get("msg_id") != msg_id:
                run.elsewhere.append(msg)
                if hook is not None and msg["msg_type"] in ("comm_msg", "comm_open"):  # a click's effects
                    hook(self, run, msg)
                continue
            run.messages.append(msg)
            if hook is not None:
                hook(self, run, msg)
            if msg["msg_type"] == "status" and content["execution_state"] == "idle":
                break
        while not run.reply:
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == msg_id:
                run.reply = reply["content"]
        return run

    def ok(self, code: str, **kwargs: Any) -> Run:
        run = self.execute(code, **kwargs)
        assert run.reply["status"] == "ok", run.reply
        return run

    def click(self, comm_id: str, subshell_id: str | None = None) -> None:
        """Click a button as JupyterLab does: a custom comm message on the shell channel."""
        content = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
        msg = self.kc.session.msg("comm_msg", content)
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)

    def set_state(self, comm_id: str, subshell_id: str | None = None, **state: Any) -> None:
        """Change a widget's state as a frontend does when a person types (e.g. ``value=...``)."""
        content = {"comm_id": comm_id, "data": {"method": "update", "state": state, "buffer_paths": []}}
        msg = self.kc.session.msg("comm_msg", content)
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)

    def create_subshell(self) -> str:
        self.kc.control_channel.send(self.kc.session.msg("create_subshell_request", {}))
        return self.kc.get_control_msg(timeout=TIMEOUT)["content"]["subshell_id"]

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def running_kernel(tmp_path_factory: Any, name: str, setup: str = "") -> Any:
    """A `Kernel` in a fresh folder, ``setup`` run in it, shut down when the generator ends (a fixture's body)."""
    kernel = Kernel(str(tmp_path_factory.mktemp(name)))
    try:
        if setup:
            kernel.ok(setup)
        yield kernel
    finally:
        kernel.shutdown()


def clicking(*choices: tuple[str, int], subshell: bool = False) -> Hook:
    """A hook that, once every button it needs exists, clicks each (button description, row) in turn."""
    clicked: list[bool] = []

    def hook(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
        if clicked or msg["msg_type"] != "comm_open":
            return
        if all(len(run.buttons.get(description, ())) > row for description, row in choices):
            clicked.append(True)
            subshell_id = kernel.create_subshell() if subshell else None
            for description, row in choices:
                kernel.click(run.buttons[description][row], subshell_id)

    return hook


def shown(run: Run, msg: dict[str, Any]) -> str:
    """What ``msg`` put on screen as text: a display's text/plain, or an HTML widget's new value."""
    content = msg["content"]
    if msg["msg_type"] in ("display_data", "update_display_data"):
        return content["data"].get("text/plain", "")
    if msg["msg_type"] == "comm_msg" and content["data"].get("method") == "update":
        return str(content["data"]["state"].get("value", ""))
    if msg["msg_type"] == "comm_open":
        return str(content["data"]["state"].get("value", ""))
    return ""


def interrupting(kernel: Kernel, run: Run, msg: dict[str, Any]) -> None:
    if msg["msg_type"] == "display_data" and WIDGET_VIEW in msg["content"]["data"]:
        kernel.km.interrupt_kernel()
