"""The same rules decide in every frontend of a real kernel: JupyterLab (buttons), a console
(``input()``), and a headless run (nbval, papermill), where what no rule decides follows
``MEOWGENT_APPROVE`` (unset or ``rules``: denied)."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import running_kernel

SETUP = '''
import json, os, pathlib
from meowgent_nb import ScriptedModel, tool
%load_ext meowgent_nb
pathlib.Path("approvals.toml").write_text('rules = ["delete_file path=scratch/** -> allow", "delete_file path=keep/** -> deny"]')
os.environ["MEOWGENT_TRUST_RULES"] = str(pathlib.Path("approvals.toml").resolve())  # as CI names its file

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

def calls(*paths):
    said = "".join("<tool_call>" + json.dumps({"name": "delete_file", "arguments": {"path": p}}) + "</tool_call>" for p in paths)
    return ScriptedModel([said, "Done."])
'''

CELL = "%%agent --model-object model\ngo"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "rules", SETUP)


def final_text(run) -> str:
    return [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")][-1]


@pytest.mark.parametrize("frontend", ["lab", "console"])
def test_a_person_is_never_asked_about_a_call_a_rule_decides(kernel, frontend):
    kernel.ok("model = calls('scratch/a', 'keep/b')")
    run = kernel.ok(CELL, frontend=frontend)  # a button or an input() prompt would block: none is made
    assert set(run.buttons) == ({"Stop"} if frontend == "lab" else set())  # no Approve, no Deny
    assert final_text(run).splitlines()[:4] == [
        "[tool] delete_file(path='scratch/a') -> done (allowed by rule 1 (delete_file path=scratch/**))",
        "  deleted scratch/a",
        "[tool] delete_file(path='keep/b') -> denied (by rule 2 (delete_file path=keep/**))",
        "  Denied: rule 2 (delete_file path=keep/**) denies this call.",
    ]


@pytest.mark.parametrize(
    ("approve", "reason"),
    [
        (None, "MEOWGENT_APPROVE=deny"),
        ("rules", "MEOWGENT_APPROVE=rules: no rule allows it"),
        ("allow", "MEOWGENT_APPROVE=allow"),
        ("all", "MEOWGENT_APPROVE=allow"),  # the old word: its notice goes to the kernel's own stderr
    ],
)
def test_headless_the_rules_decide_first_and_the_policy_the_rest(kernel, approve, reason):
    setting = (
        f"os.environ['MEOWGENT_APPROVE'] = {approve!r}"
        if approve
        else "os.environ.pop('MEOWGENT_APPROVE', None)"
    )
    kernel.ok(f"{setting}\nmodel = calls('scratch/a', 'keep/b', 'other')")
    try:
        run = kernel.ok(CELL, allow_stdin=False)
    finally:
        kernel.ok("os.environ.pop('MEOWGENT_APPROVE', None)")
    other = (
        f"[tool] delete_file(path='other') -> done (approved by policy: {reason})\n  deleted other"
        if approve in ("allow", "all")
        else f"[tool] delete_file(path='other') -> denied (by policy: {reason})\n  Denied: no person to approve (headless run)"
    )
    assert final_text(run).split("\nDone.")[0] == (
        "[tool] delete_file(path='scratch/a') -> done (allowed by rule 1 (delete_file path=scratch/**))\n"
        "  deleted scratch/a\n"
        "[tool] delete_file(path='keep/b') -> denied (by rule 2 (delete_file path=keep/**))\n"
        "  Denied: rule 2 (delete_file path=keep/**) denies this call.\n" + other
    )
    assert [c["text"] for c in run.of_type("stream") if c["name"] == "stderr"] == []  # outputs as saved
