"""Trust in a folder's rules file, in a real kernel driven as JupyterLab and nbval drive it: its allow
rules wait for the person's **Trust these rules** click (through the widget's comm), for exactly that
content at that path."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import clicking, running_kernel

SETUP = '''
import json, os, pathlib, shutil
from meowgent_nb import ScriptedModel, tool
%load_ext meowgent_nb

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

def calls(*turns):
    said = [json.dumps({"name": "delete_file", "arguments": {"path": p}}) for p in turns]
    return ScriptedModel([*(f"<tool_call>{c}</tool_call>" for c in said), "Done."])

def rules_here(folder, text):
    """Make ``folder`` the notebook's folder, with ``text`` as its approvals.toml: a fresh session."""
    os.makedirs(folder, exist_ok=True)
    os.chdir(folder)
    pathlib.Path("approvals.toml").write_text(text)
    get_ipython().run_line_magic("reload_ext", "meowgent_nb")
'''

ALLOW_ALL = 'rules = ["delete_file path=** -> allow"]\n'
CELL = "%%agent --model-object model\ngo"
TRUST = "Trust these rules"
NOTE = "  [a rule in approvals.toml would allow this; the file is not trusted (%agent trust)]"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "trust", SETUP)


def card(run) -> list[str]:
    """The transcript as the cell last showed it, up to the answer."""
    texts = [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")]
    return [text for text in texts if text.startswith("[tool]")][-1].split("\nDone.")[0].splitlines()


def panel(run) -> str:
    (text,) = [
        c["data"]["text/plain"]
        for c in run.of_type("display_data")
        if "ignored until you trust" in c["data"].get("text/plain", "")
    ]
    return text


def test_allow_rules_wait_for_the_button_and_an_edit_or_a_copy_asks_again(kernel):
    kernel.ok(f"rules_here('a', {ALLOW_ALL!r}); folder = pathlib.Path.cwd(); model = calls('one')")
    folder = kernel.ok("print(folder)").stdout.strip()
    path = f"{folder}/approvals.toml"

    headless = kernel.execute(CELL, allow_stdin=False)
    assert card(headless) == [
        "[tool] delete_file(path='one') -> denied (by policy: MEOWGENT_APPROVE=deny)",
        NOTE,
        "  Denied: no person to approve (headless run)",
    ]
    assert [c["text"] for c in headless.of_type("stream") if c["name"] == "stderr"] == [
        (
            f"meowgent_nb: ignoring the 1 allow rule of {path}: the file is not trusted, so the calls they would"
            f" allow are asked. To use them, set MEOWGENT_TRUST_RULES={path} for this run, or trust the file with"
            " %agent trust.\n"
        )
    ]

    kernel.ok(f"rules_here({folder!r}, {ALLOW_ALL!r}); model = calls('two')")  # a fresh session, as opened
    asked = kernel.ok(CELL, hook=clicking(("Deny", 0)))
    assert card(asked) == [
        "[tool] delete_file(path='two') -> denied (by you)",
        NOTE,
        "  Denied: the person did not approve this call.",
    ]
    assert panel(asked).splitlines()[:2] == [
        f"The rules file {path} has 1 allow rule, ignored until you trust it (its ask and deny rules apply).",
        "  1. delete_file path=** -> allow",
    ]
    kernel.click(asked.buttons[TRUST][0])  # after the cell ended

    kernel.ok("model = calls('three')")
    trusted = kernel.ok(CELL)
    assert set(trusted.buttons) == {"Stop"}  # no Approve, no Deny, no Trust these rules
    assert card(trusted) == [
        "[tool] delete_file(path='three') -> done (allowed by rule 1 (delete_file path=**))",
        "  deleted three",
    ]

    edit = ALLOW_ALL.replace("**", "*?")  # the same size, one byte changed
    kernel.ok(f"pathlib.Path('approvals.toml').write_text({edit!r}); model = calls('four')")
    edited = kernel.ok(CELL, hook=clicking(("Deny", 0)))  # one byte changed: asked again, and said so again
    assert card(edited)[:2] == ["[tool] delete_file(path='four') -> denied (by you)", NOTE]
    assert TRUST in edited.buttons

    kernel.ok(f"pathlib.Path('approvals.toml').write_text({ALLOW_ALL!r}); model = calls('five')")
    back = kernel.ok(CELL)  # the content trusted, again
    assert card(back)[0] == (
        "[tool] delete_file(path='five') -> done (allowed by rule 1 (delete_file path=**))"
    )

    kernel.ok(f"rules_here('../copy', {ALLOW_ALL!r}); model = calls('six')")
    copied = kernel.ok(CELL, hook=clicking(("Deny", 0)))  # the same content in another folder
    assert card(copied)[:2] == ["[tool] delete_file(path='six') -> denied (by you)", NOTE]
    assert TRUST in copied.buttons


def test_a_click_while_a_call_waits_lets_the_rules_decide_the_later_calls_of_the_run(kernel):
    kernel.ok("rules_here('../during', 'rules = [\"delete_file path=*.txt -> allow\"]\\n')")
    kernel.ok("model = calls('x.txt', 'y.txt')")
    run = kernel.ok(CELL, hook=clicking((TRUST, 0), ("Approve", 0)))
    assert card(run) == [
        "[tool] delete_file(path='x.txt') -> done (approved by you)",
        NOTE,
        "  deleted x.txt",
        "[tool] delete_file(path='y.txt') -> done (allowed by rule 1 (delete_file path=*.txt))",
        "  deleted y.txt",
    ]
    assert len(run.buttons["Approve"]) == 1  # the second call was not asked
