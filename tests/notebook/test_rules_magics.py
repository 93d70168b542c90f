"""``%agent allow``, ``%agent deny``, ``%agent rules`` and the rules file, through a real IPython shell."""

from __future__ import annotations

import builtins
import hashlib

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.agent.rules import trusted_rules
from tests.support.tool_calls import call


@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@pytest.fixture
def notebook(ip, tmp_path, monkeypatch):
    """A shell in a folder with an approvals.toml the run trusts, the tool defined, and input() that
    fails if asked."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEOWGENT_TRUST_RULES", str(tmp_path / "approvals.toml"))
    (tmp_path / "approvals.toml").write_text('rules = ["delete_file path=scratch/** -> allow"]\n')
    ip.user_ns["delete_file"] = delete_file

    def no_one_asked(prompt=""):
        raise AssertionError(f"input() was called: {prompt}")

    monkeypatch.setattr(builtins, "input", no_one_asked)
    return ip


def line(ip, text):
    with capture_output() as out:
        ip.run_line_magic("agent", text)
    return out.stdout, out.stderr


def cell(ip, *answers):
    ip.user_ns["model"] = ScriptedModel(list(answers))
    with capture_output() as out:
        ip.run_cell_magic("agent", "--model-object model", "go")
    return out.stdout + "".join(o.data.get("text/plain", "") for o in out.outputs)


def test_rules_from_the_file_and_the_notebook_decide_calls_and_are_listed(notebook):
    assert line(notebook, "deny delete_file path=scratch/keep/**") == (
        "Rule 2: delete_file path=scratch/keep/** -> deny\n",
        "",
    )
    assert line(notebook, "rules") == (
        "Approval rules (of those that match a call, deny wins, then ask, then allow):\n"
        "  1. delete_file path=scratch/** -> allow   (approvals.toml)\n"
        "  2. delete_file path=scratch/keep/** -> deny   (%agent deny)\n",
        "",
    )
    shown = cell(
        notebook,
        call("delete_file", path="scratch/a.txt") + call("delete_file", path="scratch/keep/b.txt"),
        "Done.",
    )
    assert (
        "[tool] delete_file(path='scratch/a.txt') -> done (allowed by rule 1 (delete_file path=scratch/**))\n"
        "  deleted scratch/a.txt"
    ) in shown
    assert (
        "[tool] delete_file(path='scratch/keep/b.txt') -> denied (by rule 2 (delete_file path=scratch/keep/**))\n"
        "  Denied: rule 2 (delete_file path=scratch/keep/**) denies this call."
    ) in shown
    assert line(notebook, "rules --remove 2") == (
        "Removed rule 2: delete_file path=scratch/keep/** -> deny\n",
        "",
    )
    assert [r.text for r in notebook.magics_manager.registry["AgentMagics"].rules] == [
        "delete_file path=scratch/** -> allow"
    ]


def test_an_allow_in_the_notebook_lets_a_call_run_that_would_ask(notebook):
    line(notebook, 'allow delete_file path="notes.txt"')
    shown = cell(notebook, call("delete_file", path="notes.txt"), "Done.")
    assert shown.endswith(
        "[tool] delete_file(path='notes.txt') -> done (allowed by rule 2 (delete_file path=\"notes.txt\"))\n"
        "  deleted notes.txt\nDone."
    )


def test_a_rule_for_a_tool_the_notebook_lacks_is_kept_with_a_warning_naming_the_near_match(notebook):
    assert line(notebook, "allow delete_flie path=scratch/**") == (
        "Rule 2: delete_flie path=scratch/** -> allow\n",
        "Warning: the rule 'delete_flie path=scratch/** -> allow' names no tool here: there is no tool 'delete_flie';"
        " did you mean delete_file?; the rule is kept, for a tool defined later.\n",
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            "allow",
            "%agent allow: say which calls; %agent allow TOOL ARG=PATTERN ... | %agent deny TOOL ARG=PATTERN"
            " ... | %agent rules [--remove N] (e.g. %agent allow delete_file path=scratch/**)",
        ),
        (
            "allow delete_file path=x -> deny",
            "%agent allow: Cannot read the rule 'delete_file path=x -> deny': it says"
            " '-> deny' where only allow rules are added (%agent allow); drop the '-> deny' or use %agent deny.",
        ),
        (
            "deny delete_file path=re:(a)\\1",
            "%agent deny: Cannot read the rule 'delete_file path=re:(a)\\1': the regex"
            " path=re:(a)\\1 is not a pattern the rules can run: invalid escape sequence: \\1. Regexes run on RE2,"
            " which matches in time linear in the value and so refuses backreferences (\\1) and lookaround ((?=...),"
            " (?!...)), the features that can take catastrophic time; write the pattern without them.",
        ),
        (
            "rules --remove 1",
            "%agent rules --remove: Rule 1 (delete_file path=scratch/** -> allow) comes from {file};"
            " remove it there (the file is read again when it changes).",
        ),
        (
            "rules --remove 7",
            "%agent rules --remove: There is no rule 7: the rules are numbered 1 to 1. List them"
            " with %agent rules.",
        ),
        (
            "rules --drop 1",
            "%agent rules: unknown options '--drop 1'; use %agent rules, or %agent rules --remove N.",
        ),
        (
            "allow d\u0435lete_file",
            "%agent allow: Cannot read the rule 'd\u0435lete_file': the tool name"
            " 'd\u0435lete_file' has '\u0435' (U+0435 CYRILLIC SMALL LETTER IE); tool names are plain ASCII, so a"
            " look-alike letter would make a rule that matches nothing. Type the name again in ASCII. Did you mean"
            " delete_file?",
        ),
    ],
)
def test_mistakes_are_usage_errors_that_say_how_to_fix_them(notebook, tmp_path, command, message):
    with pytest.raises(UsageError) as caught:
        notebook.run_line_magic("agent", command)
    assert str(caught.value) == message.format(file=tmp_path / "approvals.toml")


def test_a_broken_rules_file_fails_the_cell_naming_it_and_keeps_the_notebooks_rules(notebook, tmp_path):
    line(notebook, "deny delete_file path=keep/**")
    (tmp_path / "approvals.toml").write_text('rules = ["delete_file path=scratch/** -> allw"]\n')
    import os

    os.utime(tmp_path / "approvals.toml", ns=(1, 2))  # a stamp unlike the one read before
    with pytest.raises(UsageError) as caught:
        cell(notebook, call("delete_file", path="scratch/a.txt"), "Done.")
    assert str(caught.value) == (
        f"%%agent: In {tmp_path / 'approvals.toml'}, rules[0]: Cannot read the rule 'delete_file path=scratch/**"
        " -> allw': after '->' comes allow, ask or deny, not 'allw'; write a rule as TOOL ARG=PATTERN ..."
        " -> allow|ask|deny, e.g. delete_file path=scratch/** -> allow."
    )
    (tmp_path / "approvals.toml").unlink()
    assert line(notebook, "rules")[0] == (
        "Approval rules (of those that match a call, deny wins, then ask, then allow):\n"
        "  1. delete_file path=keep/** -> deny   (%agent deny)\n"
    )


# --- trust in the rules file -------------------------------------------------------------------------


@pytest.fixture
def untrusted(notebook, tmp_path, monkeypatch):
    """The same shell, its folder's rules file not trusted, and input() answering what ``answers`` holds."""
    monkeypatch.delenv("MEOWGENT_TRUST_RULES")
    monkeypatch.setenv("MEOWGENT_CONFIG_DIR", str(tmp_path / "config"))  # its own store, whatever ran before
    answers: list[str] = []

    def answer(prompt=""):
        print(prompt)
        return answers.pop(0)

    monkeypatch.setattr(builtins, "input", answer)
    notebook.answers = answers
    return notebook


def test_an_untrusted_files_allow_rules_are_marked_and_the_card_says_why_it_asks(untrusted, tmp_path):
    path = tmp_path / "approvals.toml"
    assert line(untrusted, "rules") == (
        f"The rules file {path} has 1 allow rule, ignored until you trust it (its ask and deny rules apply)."
        " To trust it: %agent trust\n"
        "Approval rules (of those that match a call, deny wins, then ask, then allow):\n"
        "  1. delete_file path=scratch/** -> allow   (approvals.toml) (not trusted: %agent trust)\n",
        "",
    )
    untrusted.user_ns["model"] = ScriptedModel([call("delete_file", path="scratch/a.txt"), "Done."])
    with capture_output() as out:
        untrusted.run_cell_magic("agent", "--model-object model --approve deny", "go")
    assert out.stdout == ""  # said once per content
    assert out.outputs[-1].data["text/plain"].splitlines()[:3] == [
        "[tool] delete_file(path='scratch/a.txt') -> denied (by policy: approve='deny')",
        "  [a rule in approvals.toml would allow this; the file is not trusted (%agent trust)]",
        "  Denied: the notebook's approval setting (approve='deny') denies calls that need approval",
    ]


def test_agent_trust_asks_in_a_terminal_and_lists_and_removes(untrusted, tmp_path):
    from meowgent_nb.agent.rules import trust_store

    path = tmp_path / "approvals.toml"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    untrusted.answers.extend(["no", "yes"])
    asked = (
        f"The rules file {path} has 1 allow rule, ignored until you trust it (its ask and deny rules"
        " apply).\n"
        "  1. delete_file path=scratch/** -> allow\n"
        f"     Trusting applies to this content only (sha256 {digest[:16]}...): an edit to the file asks"
        " again.\n"
        "Trust these rules? Type yes to trust them: \n"
    )
    assert line(untrusted, "trust") == (asked + "Not trusted: the file's allow rules stay ignored.\n", "")
    assert line(untrusted, "trust") == (
        asked + f"Trusted: the allow rules of {path} apply from the next call on, until the file changes"
        " (%agent trust --remove to undo).\n",
        "",
    )
    assert line(untrusted, "trust") == (f"{path} is trusted: its allow rules apply.\n", "")
    assert line(untrusted, "rules")[0].splitlines()[1] == (
        "  1. delete_file path=scratch/** -> allow   (approvals.toml)"
    )
    shown = cell(untrusted, call("delete_file", path="scratch/a.txt"), "Done.")
    ran = "[tool] delete_file(path='scratch/a.txt') -> done (allowed by rule 1 (delete_file path=scratch/**))"
    assert ran in shown
    (entry,) = trusted_rules()
    assert line(untrusted, "trust --list") == (
        f"Rules files you trusted (kept in {trust_store()}):\n"
        f"  {path}   sha256 {digest[:16]}...   {entry.trusted_at}   (in use, trusted)\n",
        "",
    )
    assert line(untrusted, "trust --remove") == (f"No longer trusted: {path}.\n", "")
    assert line(untrusted, f"trust --remove {path}") == (
        f"{path} was not trusted by you; %agent trust --list shows what is.\n",
        "",
    )
    assert line(untrusted, "rules")[0].splitlines()[1].endswith("(not trusted: %agent trust)")
    assert line(untrusted, "trust --list") == (
        f"You trusted no rules file (they would be kept in {trust_store()}).\n",
        "",
    )


def test_agent_trust_of_a_file_without_allow_rules_has_nothing_to_ask(untrusted, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "approvals.toml").write_text('rules = ["delete_file path=x -> deny"]\n')
    assert line(untrusted, f"trust {other}") == (
        f"{other / 'approvals.toml'} has no allow rules: its ask and deny rules apply without trust.\n",
        "",
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            "trust --frob",
            "%agent trust: unknown options '--frob'; use %agent trust [PATH] | %agent trust"
            " --list | %agent trust --remove [PATH].",
        ),
        (
            "trust a b",
            "%agent trust: unknown options 'a b'; use %agent trust [PATH] | %agent trust --list |"
            " %agent trust --remove [PATH].",
        ),
        (
            "trust {tmp}/pyproject.toml",
            "%agent trust: {tmp}/pyproject.toml is not the rules file of its"
            " folder (its rules file is {tmp}/approvals.toml); a rules file is approvals.toml, or pyproject.toml"
            " with [tool.meowgent_nb.approvals] (approvals.toml wins).",
        ),
        (
            "trust {tmp}/nowhere",
            "%agent trust: {tmp}/nowhere is not the rules file of its folder (it has no"
            " rules file); a rules file is approvals.toml, or pyproject.toml with [tool.meowgent_nb.approvals]"
            " (approvals.toml wins).",
        ),
    ],
)
def test_agent_trust_mistakes_are_usage_errors(untrusted, tmp_path, command, message):
    (tmp_path / "nowhere").mkdir()
    with pytest.raises(UsageError) as caught:
        untrusted.run_line_magic("agent", command.format(tmp=tmp_path))
    assert str(caught.value) == message.format(tmp=tmp_path)
