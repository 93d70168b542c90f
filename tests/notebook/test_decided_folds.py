"""A finished turn's folded line says who decided each call that needed approval (issue 45, item 9):
``approved by you``, ``allowed by rule 1``, ``denied by rule 2``; the text/plain transcript is as
before. Real `%%agent` cells in a real IPython shell, with rules and a policy deciding, and an
approver that stands in for a person's click (its decisions carry ``by=PERSON_DECIDED``, as the
buttons' do)."""

from __future__ import annotations

import re

from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.agent.approvals import PERSON_DECIDED, Approved, Denied
from meowgent_nb.agent.approvals.decisions import session_decisions


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"Deleted {path}."


def _calls(*paths: str) -> str:
    return "".join(
        f'<tool_call>{{"name": "delete_file", "arguments": {{"path": "{path}"}}}}</tool_call>'
        for path in paths
    )


class Person:
    """Approves what is under tmp/, denies the rest with a reason, as a person's clicks would."""

    async def approve(self, requests):
        return [
            Approved("approved by you", by=PERSON_DECIDED)
            if r.arguments["path"].startswith("tmp/")
            else Denied("keep it", "by you", PERSON_DECIDED)
            for r in requests
        ]


def _folds(ip, line: str) -> tuple[list[str], str]:
    """The folded turns' lines of one cell (tags dropped, times as T) and its text/plain."""
    with capture_output() as captured:
        ip.run_cell_magic("agent", line, "Tidy up.")
    data = captured.outputs[-1].data
    lines = re.findall(
        r'<details class="meowgent-turn[^"]*"[^>]*><summary[^>]*>(.*?)</summary>', data["text/html"]
    )
    return [re.sub(r"<span[^>]*>[^<]*</span>", "T", x).replace("&#x27;", "'") for x in lines], data[
        "text/plain"
    ]


def test_the_folded_line_says_who_decided_each_call_that_needed_approval(ip, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no approvals.toml here
    session_decisions().clear()
    with capture_output():
        ip.run_line_magic("agent", "allow delete_file path=scratch/**")
        ip.run_line_magic("agent", "deny delete_file path=keep/**")
    ip.user_ns.update(
        delete_file=delete_file,
        person=Person(),
        ruled=ScriptedModel([_calls("scratch/a.txt", "keep/b.txt"), "Done."]),
        asked=ScriptedModel([_calls("tmp/c.txt", "notes.txt"), "Done."]),
        policy=ScriptedModel([_calls("d.txt"), "Done."]),
    )
    ip.meowgent.approver = ip.user_ns["person"]
    folds, text = _folds(ip, "--model-object ruled --new")
    assert folds == [
        "turn 1: delete_file(path='scratch/a.txt') allowed by rule 1, done (T),"
        " delete_file(path='keep/b.txt') denied by rule 2 · the turn took T"
    ]
    assert text.splitlines()[:2] == [
        "[tool] delete_file(path='scratch/a.txt') -> done (allowed by rule 1 (delete_file path=scratch/**))",
        "  Deleted scratch/a.txt.",
    ]
    folds, _ = _folds(ip, "--model-object asked --new")
    assert folds == [
        "turn 1: delete_file(path='tmp/c.txt') approved by you, done (T),"
        " delete_file(path='notes.txt') denied by you · the turn took T"
    ]
    folds, _ = _folds(ip, "--model-object policy --new --approve allow")
    assert folds == ["turn 1: delete_file(path='d.txt') approved by policy, done (T) · the turn took T"]
    with capture_output():
        ip.run_line_magic("agent", "rules --remove 2")
        ip.run_line_magic("agent", "rules --remove 1")


def test_who_decided_in_a_few_words_for_every_kind_of_decider():
    from meowgent_nb.agent.approvals import DecidedBy
    from meowgent_nb.notebook.views._cards import decision_brief

    session = DecidedBy("session", "always allow (for this session)")
    replay = DecidedBy("replay", "you (edited), when the cassette was recorded")
    assert [
        decision_brief(decision)
        for decision in (
            Approved("allowed by always allow (for this session)", by=session),
            Approved("approved by you (edited), when the cassette was recorded", {"path": "x"}, replay),
            Denied(
                "empty_file's approval function denies this call.", "denied by empty_file's approval function"
            ),
            Approved("approved by policy: MEOWGENT_APPROVE=allow"),
            Denied("use the archive instead", "by you", PERSON_DECIDED),
            Approved("approved automatically"),
            Approved(),
            Denied("stopped before a decision"),
            None,
        )
    ] == [
        "allowed for this session",
        "approved by you",
        "denied by empty_file's approval function",
        "approved by policy",
        "denied by you",
        "approved automatically",
        None,
        None,
        None,
    ]
