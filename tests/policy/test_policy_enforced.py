"""The policy where settings are made: Agent and its setters, resolve_model, the magics, rules, trust."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from meowgent_nb import Agent, ScriptedModel, tool
from meowgent_nb.agent.approvals import AutoApprove, DenyAll
from meowgent_nb.models.resolve import resolve_model
from meowgent_nb.policy import PolicyError, policy_locations

LIMIT = '[limits] approve = "ask"'


@tool(approval="always")
def run(code: str) -> str:
    """Run code."""
    return f"ran {code}"


@tool(timeout=600)
def slow() -> str:
    """Take long."""
    return "done"


def refused(path, setting: str) -> str:
    return (
        f"{setting} is refused by the policy {path} ({LIMIT}): approval may not be looser than 'ask';"
        " use one of ask, every, deny."
    )


def test_an_agent_starts_with_the_policys_defaults_and_refuses_what_passes_its_limits(
    use_policy, monkeypatch
):
    path = use_policy()
    monkeypatch.setenv("CLASS_KEY", "sk-class")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = resolve_model(None)
    assert repr(model) == "OpenAIModel('tiny', base_url='http://127.0.0.1:9/v1')"
    assert model._api_key == "sk-class"  # type: ignore[attr-defined]
    agent = Agent(ScriptedModel(["Hi."]))
    assert (agent.tool_timeout, agent.max_turns, agent.approve) == (20.0, 5, "ask")
    with pytest.raises(PolicyError) as raised:
        Agent(ScriptedModel([]), approver=AutoApprove())
    assert str(raised.value) == refused(path, "Agent(approver=AutoApprove())")
    with pytest.raises(PolicyError) as raised:
        agent.approver = AutoApprove()
    assert str(raised.value) == refused(path, "agent.approver = AutoApprove()")
    with pytest.raises(PolicyError) as raised:
        Agent(ScriptedModel([]), tool_timeout=None)
    assert str(raised.value) == (
        f"Agent(tool_timeout=None) is refused by the policy {path} ([limits] tool_timeout = 60): give a tool"
        " time limit of at most 60 s."
    )
    with pytest.raises(PolicyError, match=r"^agent\.tool_timeout = 61 is refused"):
        agent.tool_timeout = 61
    with pytest.raises(PolicyError) as raised:
        Agent(ScriptedModel([]), tools=[slow])
    assert str(raised.value) == (
        f"The tool slow's own timeout=600 is refused by the policy {path} ([limits] tool_timeout = 60):"
        " give a tool time limit of at most 60 s."
    )
    with pytest.raises(PolicyError) as raised:
        resolve_model("local")
    assert str(raised.value) == (
        f"The model 'local' (the embedded model) is refused by the policy {path} ([limits] backends ="
        ' ["openai", "ollama"]): this site allows an OpenAI-compatible server, an Ollama server.'
    )
    # Stricter is always allowed.
    agent.tool_timeout, agent.approve, agent.approver = 5, "every", DenyAll()
    assert (agent.tool_timeout, agent.approve) == (5, "every")


def test_no_allow_rule_decides_a_call_of_an_always_tool(use_policy):
    path = use_policy()
    where = f"the policy {path} ([limits] allow_rules_on_always_tools = false)"
    with pytest.raises(PolicyError) as raised:
        Agent(ScriptedModel([]), tools=[run], rules=["run code=* -> allow"])
    assert str(raised.value) == (
        f"The rule 'run code=* -> allow' (Agent(rules=...)) is refused by {where}: run runs only with a"
        " person's approval here; leave the rule out."
    )
    call = json.dumps({"name": "run", "arguments": {"code": "1"}})
    agent = Agent(
        ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."]), tools=[run], approver=DenyAll("no")
    )
    agent.rules.add("run code=* -> allow")  # added later: the rule is asked about, a person decides
    result = agent.run("go")
    assert [r.output for r in result.tool_results] == ["Denied: no"]


def test_the_magics_start_with_the_policy_and_refuse_a_looser_setting_naming_it(use_policy, ip, monkeypatch):
    path = use_policy()
    ip.run_line_magic("agent", "policy reload")
    magics = ip.magics_manager.registry["AgentMagics"]
    assert (magics.model, magics.approve, magics.tool_timeout, magics.max_turns) == (
        "openai:tiny",
        "ask",
        20.0,
        5,
    )
    ip.user_ns["m"] = ScriptedModel(["Hello."] * 3)
    for line, setting in [
        ("%%agent --approve allow --model-object m", "--approve allow"),
        (
            "%config AgentMagics.approve = 'allow'\n%%agent --model-object m",
            "%config AgentMagics.approve = 'allow'",
        ),
    ]:
        config, _, cell = line.rpartition("\n")
        if config:
            ip.run_cell(config)
        with capture_output():
            result = ip.run_cell(f"{cell}\nhi")
        assert isinstance(result.error_in_exec, PolicyError)
        assert str(result.error_in_exec) == refused(path, setting)
    ip.run_cell("%config AgentMagics.approve = 'every'\n%config AgentMagics.tool_timeout = 100")
    with capture_output():
        result = ip.run_cell("%%agent --model-object m\nhi")
    assert str(result.error_in_exec) == (
        f"%config AgentMagics.tool_timeout = 100.0 is refused by the policy {path} ([limits] tool_timeout ="
        " 60): give a tool time limit of at most 60 s."
    )
    ip.run_cell("%config AgentMagics.tool_timeout = 10")
    with capture_output():
        result = ip.run_cell("%%agent --model-object m\nhi")  # stricter: every call asked, 10 s
    assert result.error_in_exec is None
    assert magics.last_result.text == "Hello."


def test_meowgent_approve_allow_is_refused_in_one_line_naming_the_policy(use_policy, ip, monkeypatch):
    path = use_policy()
    ip.run_line_magic("agent", "policy reload")
    monkeypatch.setenv("MEOWGENT_APPROVE", "allow")
    ip.user_ns["m"] = ScriptedModel(["Hello."])
    with capture_output():
        result = ip.run_cell("%%agent --model-object m\nhi")
    assert str(result.error_in_exec) == refused(path, "MEOWGENT_APPROVE=allow")


def test_allow_rules_and_trust_are_refused_in_the_notebook(use_policy, ip, tmp_path, monkeypatch):
    path = use_policy()
    ip.run_line_magic("agent", "policy reload")
    ip.user_ns["run"] = run
    (tmp_path / "approvals.toml").write_text('rules = ["run code=1 -> allow"]\n')
    monkeypatch.setenv("MEOWGENT_TRUST_RULES", str(tmp_path / "approvals.toml"))  # trusted by the run...
    monkeypatch.chdir(tmp_path)
    trust = f"the policy {path} ([limits] trust_rules_files = false) forbids trusting rules files"
    with capture_output() as shown:
        ip.run_line_magic("agent", "rules")  # ...but not here: no Trust button, a line saying why
    assert shown.stdout.startswith(
        f"The rules file {tmp_path / 'approvals.toml'} has 1 allow rule, ignored (its ask and deny rules"
        f" apply): {trust}: their allow rules decide nothing here.\n"
    )
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("agent", "allow run code=*")
    assert str(raised.value) == (
        f"%agent allow run code=* is refused by the policy {path} ([limits] allow_rules_on_always_tools ="
        " false): run runs only with a person's approval here; approve its calls when asked."
    )
    with capture_output() as shown:
        ip.run_line_magic("agent", "deny run code=*")  # stricter: kept
    assert shown.stdout == "Rule 2: run code=* -> deny\n"
    with pytest.raises(UsageError) as raised:
        ip.run_line_magic("agent", f"trust {tmp_path}")
    assert str(raised.value) == f"%agent trust: {trust}: their allow rules decide nothing here."


def test_agent_policy_shows_each_value_and_its_file_and_never_the_key(use_policy, ip, monkeypatch):
    monkeypatch.delenv("MEOWGENT_POLICY", raising=False)
    ip.run_line_magic("agent", "policy reload")
    looked = "\n".join(f"  {p}" for p in policy_locations())
    assert (
        repr(ip.run_line_magic("agent", "policy"))
        == f"No site policy applies. Looked for policy files at:\n{looked}"
    )
    path = use_policy(
        '[defaults]\nserver_url = "http://h/v1"\napi_key = "sk-teacher"\n[limits]\napprove = "every"\n'
    )
    view = ip.run_line_magic("agent", "policy reload")
    assert repr(view) == (
        f"The site policy from:\n  {path}\n"
        f'[defaults] server_url  "http://h/v1"   ({path})\n'
        f"[defaults] api_key     *** (set; never shown)   ({path})\n"
        f'[defaults] approve     "every"   ({path}, [limits] approve)\n'
        f'[limits] approve       "every"   ({path})'
    )
    assert (
        "sk-teacher" not in view._repr_html_()
        and "<td style='text-align:left'><code>[limits] approve</code></td>" in view._repr_html_()
    )


def test_a_tool_server_is_held_to_the_policy_as_an_agent_is(use_policy):
    from meowgent_nb.mcp.server.serve import ToolServer

    path = use_policy()

    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    with pytest.raises(PolicyError) as raised:
        ToolServer([ping], approver=AutoApprove(), timeout=90)
    assert str(raised.value) == "\n".join(
        [
            refused(path, "ToolServer(approver=AutoApprove())"),
            f"ToolServer(timeout=90) is refused by the policy {path} ([limits] tool_timeout = 60):"
            " give a tool time limit of at most 60 s.",
        ]
    )
    server = ToolServer([ping], approver=DenyAll("no"), approve="every", timeout=60)  # stricter: taken
    try:
        assert (server.approve, server.timeout) == ("every", 60)
    finally:
        server.stop()


def test_agent_policy_says_whether_the_keys_variable_is_set_in_this_kernel(use_policy, ip, monkeypatch):
    path = use_policy('[defaults]\napi_key_env = "CLASS_KEY"\n')
    monkeypatch.delenv("CLASS_KEY", raising=False)
    row = f'[defaults] api_key_env  "CLASS_KEY" (not set in this kernel\'s environment)   ({path})'
    assert repr(ip.run_line_magic("agent", "policy reload")).splitlines()[-1] == row
    monkeypatch.setenv("CLASS_KEY", "sk-class")
    shown = repr(ip.run_line_magic("agent", "policy"))
    assert shown.splitlines()[-1] == row.replace("not set", "set")
    assert "sk-class" not in shown
