"""A rules file from a folder may raise approval at once and lower it only once trusted; and it is
read as a file: only a regular one, bounded, never blocking (`agent.rules.trust`, `_file`)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meowgent_nb import Agent, DenyAll, ScriptedModel, tool
from meowgent_nb.agent.rules import (
    RuleError,
    Rules,
    TrustedRules,
    is_trusted,
    rules_file_key,
    trust_rules,
    trust_store,
    trusted_rules,
    untrust_rules,
)
from meowgent_nb.events import ApprovalRequested
from meowgent_nb.notebook.views.transcript import Transcript

ALLOWED, DENIED = "allowed by rule 1 (delete_file path=**)", "denied by rule 2 (delete_file path=keep/**)"
FILE = 'rules = ["delete_file path=** -> allow", "delete_file path=keep/** -> deny", "list_files -> ask"]\n'


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def write(path: Path, text: str) -> None:
    path.write_text(text)
    stamp = time.time_ns() + 1_000_000_000  # later than the last write's, also on a coarse clock
    os.utime(path, ns=(stamp, stamp))


def reason(verdict) -> str | None:
    return verdict.reason if verdict is not None else None


def quiet_rules(folder: Path) -> Rules:
    rules = Rules()
    rules.on_untrusted = lambda untrusted: None
    rules.file = type(rules.file)([folder])
    rules.refresh()
    return rules


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    """A trust store of the test's own; nothing trusted by the environment."""
    monkeypatch.setenv("MEOWGENT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("MEOWGENT_TRUST_RULES", raising=False)


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    write(folder / "approvals.toml", FILE)
    return folder


def test_an_untrusted_files_allow_rules_decide_nothing_and_its_ask_and_deny_rules_apply(project, capsys):
    rules, path = Rules(folders=[project]), project / "approvals.toml"
    assert rules.decide("delete_file", {"path": "a.txt"}) is None  # asked as if the rule were not there
    assert reason(rules.decide("delete_file", {"path": "keep/a.txt"})) == DENIED
    assert reason(rules.decide("list_files", {})) == "asked by rule 3 (list_files)"
    assert reason(rules.untrusted_allow("delete_file", {"path": "a.txt"})) == ALLOWED
    assert rules.untrusted_allow("delete_file", {"path": "keep/a.txt"}) is None  # the deny would win anyway
    marked = f"  1. delete_file path=** -> allow   ({path}) (not trusted: %agent trust)"
    assert str(rules).splitlines()[0] == marked
    assert capsys.readouterr().err == (
        f"meowgent_nb: ignoring the 1 allow rule of {path}: the file is not trusted, so the calls they would"
        f" allow are asked. To use them, set MEOWGENT_TRUST_RULES={path} for this run, or trust the file with"
        " %agent trust.\n"
    )
    Rules(folders=[project])  # once per process and content
    assert capsys.readouterr().err == ""


def test_trust_is_for_the_content_read_an_edit_of_one_byte_withdraws_it(project):
    rules = quiet_rules(project)
    trust_rules(rules.path, rules.file.sha256)
    assert rules.decide("delete_file", {"path": "a.txt"}).reason == ALLOWED
    assert "not trusted" not in str(rules)
    write(project / "approvals.toml", FILE.replace("path=**", "path=*?"))  # the same size, one byte changed
    assert rules.decide("delete_file", {"path": "a.txt"}) is None
    write(project / "approvals.toml", FILE)  # the content trusted, again
    assert rules.decide("delete_file", {"path": "a.txt"}).reason == ALLOWED


def test_a_copy_or_a_symlink_of_a_trusted_file_is_not_trusted(project, tmp_path):
    rules = quiet_rules(project)
    trust_rules(rules.path, rules.file.sha256)
    copy, link, linked_folder = tmp_path / "copy", tmp_path / "link", tmp_path / "linked"
    copy.mkdir()
    link.mkdir()
    write(copy / "approvals.toml", FILE)
    (link / "approvals.toml").symlink_to(project / "approvals.toml")
    linked_folder.symlink_to(project)  # the same file, found in its own folder by another name
    found = [copy, link, linked_folder]
    decided = {folder.name: quiet_rules(folder).decide("delete_file", {"path": "a"}) for folder in found}
    assert {name: reason(verdict) for name, verdict in decided.items()} == {
        "copy": None,
        "link": None,
        "linked": ALLOWED,
    }
    assert rules_file_key(link / "approvals.toml") == str(link.resolve() / "approvals.toml")


def test_a_run_trusts_the_files_folders_and_contents_in_MEOWGENT_TRUST_RULES(project, tmp_path, monkeypatch):
    path, other = project / "approvals.toml", tmp_path / "other"
    digest = quiet_rules(project).file.sha256
    named = {
        "": False,
        str(path): True,
        str(project): True,
        str(tmp_path): False,  # a folder trusts the rules file in it, not those below it
        f"{other}{os.pathsep}{project}": True,
        f"sha256={digest}": True,
        f"sha256={'0' * 64}": False,
        str(project / "pyproject.toml"): False,
    }
    found = {}
    for value in named:
        monkeypatch.setenv("MEOWGENT_TRUST_RULES", value)
        found[value] = is_trusted(path, digest)
    assert found == named
    assert trusted_rules() == []  # the environment trusts for the run; nothing is written


def test_the_store_is_written_0600_in_a_0700_folder_one_entry_per_path(project, tmp_path):
    path = project / "approvals.toml"
    first = trust_rules(path, "a" * 64)
    second = trust_rules(path, "b" * 64)
    store = trust_store()
    assert store == tmp_path / "config" / "trusted_rules.json"
    assert (stat.S_IMODE(store.stat().st_mode), stat.S_IMODE(store.parent.stat().st_mode)) == (0o600, 0o700)
    assert trusted_rules() == [second]
    assert json.loads(store.read_text()) == {
        "trusted": [{"path": str(path), "sha256": "b" * 64, "trusted_at": second.trusted_at}]
    }
    assert (first.path, first.sha256) == (str(path), "a" * 64)
    assert sorted(p.name for p in store.parent.iterdir()) == ["trusted_rules.json"]  # no temporary file left
    assert untrust_rules(path) == [second]
    assert (trusted_rules(), untrust_rules(path)) == ([], [])


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"trusted": {"path": "x"}}',
        '{"trusted": [{"path": "/p/approvals.toml", "sha256": "abc"}]}',
        "[1, 2]",
    ],
)
def test_a_corrupt_store_trusts_nothing_and_says_so(project, text, capsys):
    path = project / "approvals.toml"
    digest = quiet_rules(project).file.sha256
    trust_rules(path, digest)
    trust_store().write_text(text.replace("/p/approvals.toml", str(path)))
    assert is_trusted(path, digest) is False
    said = capsys.readouterr().err
    assert said.startswith(f"meowgent_nb: the trust store {trust_store()} cannot be read (")
    assert said.endswith(
        "); no rules file is trusted until it is fixed or removed (trusting a file again writes a new one).\n"
    )
    assert said.count("\n") == 1
    assert trust_rules(path, digest) == TrustedRules(str(path), digest, trusted_rules()[0].trusted_at)
    assert is_trusted(path, digest) is True


def test_the_card_of_a_call_an_untrusted_rule_would_allow_says_so(project, monkeypatch):
    monkeypatch.chdir(project)  # Agent reads approvals.toml in the working directory
    said = json.dumps({"name": "delete_file", "arguments": {"path": "a.txt"}})
    call = f"<tool_call>{said}</tool_call>"
    agent = Agent(ScriptedModel([call, "Done."]), tools=[delete_file], approver=DenyAll("no one here."))
    events = []

    async def collect():
        async for event in agent.stream("go"):
            events.append(event)

    asyncio.run(collect())
    note = "a rule in approvals.toml would allow this; the file is not trusted (%agent trust)"
    assert [e.notes for e in events if isinstance(e, ApprovalRequested)] == [(note,)]
    assert Transcript.from_events(events).to_text().splitlines()[:3] == [
        "[tool] delete_file(path='a.txt') -> denied",
        f"  [{note}]",
        "  Denied: no one here.",
    ]


def test_the_persons_own_rules_need_no_trust(project, monkeypatch):
    monkeypatch.chdir(project.parent)
    agent = Agent(ScriptedModel([]), tools=[delete_file], rules=["delete_file path=** -> allow"])
    agent.rules.add("delete_file path=x -> deny", source="%agent deny")
    assert reason(agent.rules.decide("delete_file", {"path": "a"})) == ALLOWED
    assert agent.rules.untrusted() is None


# --- the rules file as a file ------------------------------------------------------------------------

READ = """
import sys
from meowgent_nb.agent.rules import Rules, RuleError
try:
    rules = Rules(folders=[sys.argv[1]])
    print("rules:", [r.text for r in rules], rules.path)
except RuleError as error:
    print("RuleError:", error)
"""


def read_in_a_subprocess(folder: Path) -> str:
    """What reading ``folder``'s rules file gives, in a process that a hang or an endless read
    cannot take the test run down with (10 s, 512 MiB)."""

    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    done = subprocess.run(
        [sys.executable, "-c", READ, str(folder)],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=limit,
        check=False,
    )
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX's")
@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        ("approvals.toml", lambda p: p.symlink_to("/dev/zero"), "is a character device, not a regular file"),
        ("approvals.toml", os.mkfifo, "is a FIFO (named pipe), not a regular file"),
        ("approvals.toml", os.mkdir, "is a folder, not a regular file"),
    ],
    ids=["symlink-to-dev-zero", "fifo", "folder"],
)
def test_only_a_regular_file_is_read_anything_else_is_a_rule_error_naming_it(tmp_path, name, make, said):
    make(tmp_path / name)
    assert read_in_a_subprocess(tmp_path) == (
        f"RuleError: The rules file {tmp_path / name} {said}; a rules file is a text file (and a symlink to"
        " one is followed). Replace it with one, or remove it."
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")
def test_a_pyproject_toml_that_is_a_fifo_is_no_rules_file_and_blocks_nothing(tmp_path):
    os.mkfifo(tmp_path / "pyproject.toml")
    assert read_in_a_subprocess(tmp_path) == "rules: [] None"


def test_a_rules_file_that_cannot_be_opened_is_a_rule_error_naming_it(tmp_path):
    from meowgent_nb.agent.rules._file import read_bytes

    with pytest.raises(RuleError) as caught:  # gone between the look and the read
        read_bytes(tmp_path / "approvals.toml")
    assert str(caught.value) == (
        f"The rules file {tmp_path / 'approvals.toml'} cannot be opened (No such file or directory); check"
        " that it exists and can be read, or remove it."
    )


def test_only_a_call_an_ignored_allow_rule_would_have_allowed_is_told_to_on_ignored(project):
    rules = quiet_rules(project)
    told: list[str] = []
    rules.on_ignored = lambda untrusted: told.append(f"{untrusted.path.name}: {len(untrusted.allow)}")
    assert rules.untrusted_allow("list_files", {}) is None  # an ask rule: nothing was ignored
    assert rules.untrusted_allow("get_weather", {"city": "Paris"}) is None  # no rule is about it
    assert told == []
    assert reason(rules.untrusted_allow("delete_file", {"path": "a.txt"})) == ALLOWED
    assert told == ["approvals.toml: 1"]
