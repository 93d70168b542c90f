"""Policy files: where they are found, how one is checked, how several combine (the strictest limit)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from meowgent_nb.policy import Policy, PolicyError, Secret, current_policy, load_policy, policy_locations
from meowgent_nb.policy import files as policy_files


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_locations_run_from_the_system_to_the_person_then_the_named_file(tmp_path, monkeypatch):
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH

    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "home"))
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    monkeypatch.delenv("JUPYTER_PREFER_ENV_PATH", raising=False)
    found = policy_locations({"MEOWGENT_POLICY": str(tmp_path / "mine.toml")})
    name = Path("meowgent_nb") / "policy.toml"
    system = [Path(folder) / name for folder in reversed(SYSTEM_CONFIG_PATH)]
    env = [Path(folder) / name for folder in reversed(ENV_CONFIG_PATH)]
    assert found[: len(system)] == system
    assert found[len(system) : len(system) + len(env) + 1] == [*env, Path(sys.prefix) / "etc" / name]
    assert found[-2:] == [tmp_path / "home" / name, tmp_path / "mine.toml"]


def test_no_file_is_no_policy(tmp_path):
    policy = load_policy([tmp_path / "none.toml"], {})
    assert (policy.applies, policy.files, policy.looked) == (False, (), (str(tmp_path / "none.toml"),))
    assert policy.approval_refusal("allow", "MEOWGENT_APPROVE=allow") is None
    assert policy.timeout_refusal(None, "x") is None
    assert policy.backend_refusal("local", "local") is None


def test_a_file_gives_defaults_and_limits_each_with_its_key_and_file(tmp_path):
    path = write(
        tmp_path,
        "site.toml",
        '[defaults]\nmodel = "openai:tiny"\ntool_timeout = 20\n[limits]\napprove = "ask"\nbackends = ["openai"]\n'
        "[local]\nshared = true\n",
    )
    policy = load_policy([path], {})
    assert (
        policy.model is not None
        and policy.model.where == f'the policy {path} ([defaults] model = "openai:tiny")'
    )
    assert (policy.tool_timeout.value, policy.backends.value, policy.shared_local.value) == (
        20.0,
        ("openai",),
        True,
    )  # type: ignore[union-attr]
    assert policy.approval_refusal("allow", "MEOWGENT_APPROVE=allow") == (
        f'MEOWGENT_APPROVE=allow is refused by the policy {path} ([limits] approve = "ask"): approval may not'
        " be looser than 'ask'; use one of ask, every, deny."
    )
    assert policy.approval_refusal("every", "--approve every") is None
    assert policy.backend_refusal("local", "local") == (
        f"The model 'local' (the embedded model) is refused by the policy {path} ([limits] backends ="
        ' ["openai"]): this site allows an OpenAI-compatible server.'
    )


def test_files_combine_by_the_strictest_limit_and_take_defaults_from_the_most_site_wide(tmp_path):
    site = write(
        tmp_path,
        "site.toml",
        '[defaults]\nmodel = "ollama:a"\napprove = "every"\n[limits]\napprove = "ask"\ntool_timeout = 60\n'
        'backends = ["openai", "ollama"]\ntrust_rules_files = false\n',
    )
    student = write(
        tmp_path,
        "student.toml",
        '[defaults]\nmodel = "local"\n[limits]\ntool_timeout = 600\nbackends = ["local", "ollama"]\n'
        "trust_rules_files = true\nallow_rules_on_always_tools = true\n",
    )
    policy = load_policy([site, student], {})
    assert policy.files == (str(site), str(student))
    assert (policy.model.value, policy.model.file) == ("ollama:a", str(site))  # type: ignore[union-attr]
    assert (policy.approve_limit.value, policy.approve.value) == ("ask", "every")  # type: ignore[union-attr]
    assert (policy.max_tool_timeout.value, policy.max_tool_timeout.file) == (60.0, str(site))  # type: ignore[union-attr]
    assert (policy.backends.value, policy.backends.file) == (("ollama",), str(student))  # type: ignore[union-attr]
    assert (policy.trust_rules_files.value, policy.trust_rules_files.file) == (False, str(site))  # type: ignore[union-attr]
    assert policy.always_tool_rules.value is True  # type: ignore[union-attr]
    tighter = write(tmp_path, "tighter.toml", '[limits]\napprove = "deny"\ntool_timeout = 5\n')
    tightened = load_policy([site, student, tighter], {})
    # A default looser than a limit becomes the limit: a kernel never starts past it.
    assert (tightened.approve.value, tightened.approve.file) == ("deny", str(tighter))  # type: ignore[union-attr]
    assert (tightened.tool_timeout.value, tightened.tool_timeout.key) == (5.0, "[limits] tool_timeout")  # type: ignore[union-attr]


def test_a_wrong_file_is_one_error_naming_the_file_each_key_and_what_it_takes(tmp_path):
    path = write(
        tmp_path,
        "broken.toml",
        '[limits]\naprove = "ask"\ntool_timeout = "ten"\nbackends = ["gpu"]\n[defaults]\napi_key = 7\n[default]\n',
    )
    with pytest.raises(PolicyError) as raised:
        load_policy([path], {})
    assert str(raised.value) == (
        f"The policy file {path} cannot be used; agents are refused until it is fixed (then `%agent policy"
        " reload`, or restart the kernel).\n"
        "- [defaults] api_key takes the server's key as a string, got (the key)\n"
        "- [limits] backends takes a list of the backends allowed, of 'ollama', 'openai', 'local', got 'gpu'\n"
        "- [limits] tool_timeout takes the largest tool time limit in seconds, a number above 0, got 'ten'\n"
        "- unknown key [limits] aprove: [limits] is a table of approve, backends, tool_timeout,"
        " allow_rules_on_always_tools, trust_rules_files\n"
        "- unknown table or key 'default': a policy file has the tables defaults, limits, local"
    )


def test_a_file_that_is_not_toml_or_a_named_file_that_is_missing_is_refused(tmp_path):
    path = write(tmp_path, "bad.toml", "[limits\n")
    with pytest.raises(PolicyError, match=rf"^The policy file {path} is not TOML \(Expected"):
        load_policy([path], {})
    missing = str(tmp_path / "gone.toml")
    with pytest.raises(PolicyError) as raised:
        load_policy([Path(missing)], {"MEOWGENT_POLICY": missing})
    assert str(raised.value) == (
        f"MEOWGENT_POLICY={missing!r} names no file: agents are refused until it names a policy file that"
        " exists, or MEOWGENT_POLICY is unset."
    )


def test_a_broken_policy_keeps_being_refused_until_it_is_fixed_and_reloaded(use_policy):
    path = use_policy('[limits]\napprove = "sometimes"\n')
    for _ in range(2):  # fail closed: never a kernel without its limits
        with pytest.raises(PolicyError, match="approve takes the loosest approval"):
            current_policy()
    path.write_text('[limits]\napprove = "every"\n')
    with pytest.raises(PolicyError):
        current_policy()  # read once per process: a fixed file applies after a reload
    assert policy_files.reload_policy().approve_limit.value == "every"  # type: ignore[union-attr]


def test_the_servers_key_is_never_shown(tmp_path, monkeypatch):
    path = write(tmp_path, "key.toml", '[defaults]\nserver_url = "http://h/v1"\napi_key = "sk-teacher"\n')
    policy = load_policy([path], {})
    assert isinstance(policy.api_key.value, Secret)  # type: ignore[union-attr]
    shown = [repr(policy), str(policy.api_key), repr(policy.api_key), policy.api_key.where]  # type: ignore[union-attr]
    assert not any("sk-teacher" in text for text in shown)
    assert policy.api_key.where == f"the policy {path} ([defaults] api_key = ***)"  # type: ignore[union-attr]
    assert policy.server_key().reveal() == "sk-teacher"  # type: ignore[union-attr]
    named = write(tmp_path, "env.toml", '[defaults]\napi_key_env = "CLASS_KEY"\napi_key = "sk-file"\n')
    monkeypatch.setenv("CLASS_KEY", "sk-env")
    assert load_policy([named], {}).server_key().reveal() == "sk-env"  # type: ignore[union-attr]


def test_an_empty_policy_repr_says_so():
    assert repr(Policy()) == "Policy(no file applies)"


@pytest.mark.parametrize("prefer_env", ["1", "0"])
def test_a_persons_folders_come_after_the_sites_whatever_jupyter_prefers(tmp_path, monkeypatch, prefer_env):
    from jupyter_core.paths import ENV_CONFIG_PATH

    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", prefer_env)  # a virtual environment's Jupyter prefers it
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "home"))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")]))
    found = policy_locations({"JUPYTER_CONFIG_PATH": os.environ["JUPYTER_CONFIG_PATH"]})
    name = Path("meowgent_nb") / "policy.toml"
    env = [Path(folder) / name for folder in reversed(ENV_CONFIG_PATH)]
    assert found[-(len(env) + 4) :] == [
        *env,
        Path(sys.prefix) / "etc" / name,
        tmp_path / "b" / name,
        tmp_path / "a" / name,
        tmp_path / "home" / name,
    ]
