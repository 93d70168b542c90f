"""A teacher's policy in real kernels: MEOWGENT_POLICY in the kernel's environment, as a hub sets it."""

from __future__ import annotations

import os

import nbformat
import pytest

from meowgent_nb.testing import run_notebook
from tests.policy.conftest import TEACHER
from tests.support.kernel_driver import Kernel

SETUP = """
%load_ext meowgent_nb
from meowgent_nb import Agent, ScriptedModel
from meowgent_nb.agent.approvals import AutoApprove
from meowgent_nb.models.resolve import resolve_model
m = ScriptedModel(["Hello."] * 5)
magics = get_ipython().magics_manager.registry["AgentMagics"]
"""
SHOW = "print(magics.model, magics.tool_timeout, magics.max_turns, repr(resolve_model(None)))"
DEFAULTS = "openai:tiny 20.0 5 OpenAIModel('tiny', base_url='http://127.0.0.1:9/v1')\n"


def kernel_env(tmp_path, **more: str) -> dict[str, str]:
    policy = tmp_path / "policy.toml"
    policy.write_text(TEACHER)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEOWGENT_APPROVE", "OPENAI_BASE_URL", "MEOWGENT_MODEL")
    }
    # No file of this machine's config path is read: only the one the environment names.
    return {**env, "MEOWGENT_POLICY": str(policy), "JUPYTER_CONFIG_DIR": str(tmp_path / "none"), **more}


def refusal(tmp_path, setting: str) -> str:
    return (
        f'{setting} is refused by the policy {tmp_path / "policy.toml"} ([limits] approve = "ask"): approval'
        " may not be looser than 'ask'; use one of ask, every, deny."
    )


@pytest.fixture
def kernel(tmp_path):
    kernel = Kernel(str(tmp_path), env=kernel_env(tmp_path, CLASS_KEY="sk-class"))
    yield kernel
    kernel.shutdown()


def test_a_kernel_starts_with_the_policy_refuses_looser_and_accepts_stricter(kernel, tmp_path):
    kernel.ok(SETUP)
    assert kernel.ok(SHOW).stdout == DEFAULTS
    assert kernel.ok("print(magics.approve)").stdout == "ask\n"
    looser = kernel.execute("%%agent --approve allow --model-object m\nhi")
    assert (looser.reply["status"], looser.reply["ename"]) == ("error", "PolicyError")
    assert looser.reply["evalue"] == refusal(tmp_path, "--approve allow")
    auto = kernel.execute("Agent(m, approver=AutoApprove())")
    assert auto.reply["evalue"] == refusal(tmp_path, "Agent(approver=AutoApprove())")
    stricter = kernel.ok("%config AgentMagics.tool_timeout = 10\n%config AgentMagics.approve = 'every'")
    assert stricter.reply["status"] == "ok"
    kernel.ok("%%agent --model-object m\nhi")
    assert kernel.ok("print(magics.last_result.text, magics.tool_timeout)").stdout == "Hello. 10.0\n"
    shown = kernel.ok("%agent policy").of_type("execute_result")[0]["data"]
    assert "sk-class" not in str(shown)
    assert (
        "<td style='text-align:left'><code>[limits] approve</code></td>"
        "<td style='text-align:left'><code>&quot;ask&quot;</code></td>"
    ) in shown["text/html"]


def test_a_headless_run_follows_the_policy(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    cells = [SETUP, SHOW, "%%agent --model-object m\nhi"]
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nbformat.write(nb, tmp_path / "class.ipynb")
    env = kernel_env(tmp_path, MEOWGENT_APPROVE="allow")
    run = run_notebook(tmp_path / "class.ipynb", env=env, allow_errors=True)
    setup, shown, refused = (cell.outputs for cell in run.notebook.cells)
    assert (setup, shown[0]["text"]) == ([], DEFAULTS)
    assert (refused[0]["ename"], refused[0]["evalue"]) == (
        "PolicyError",
        refusal(tmp_path, "MEOWGENT_APPROVE=allow"),
    )
    assert run.cells == ()
