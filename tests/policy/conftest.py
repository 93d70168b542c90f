"""A site policy for one test: a file named by MEOWGENT_POLICY, read afresh, forgotten after."""

from __future__ import annotations

import textwrap

import pytest

from meowgent_nb.policy import files

TEACHER = """
[defaults]
model = "openai:tiny"
server_url = "http://127.0.0.1:9/v1"
api_key_env = "CLASS_KEY"
approve = "ask"
tool_timeout = 20
max_turns = 5

[limits]
approve = "ask"
backends = ["openai", "ollama"]
tool_timeout = 60
allow_rules_on_always_tools = false
trust_rules_files = false
"""


@pytest.fixture
def use_policy(tmp_path, monkeypatch):
    """Write a policy file (the teacher's by default), name it in MEOWGENT_POLICY, and return its path."""

    def use(text: str = TEACHER, name: str = "policy.toml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        monkeypatch.setenv("MEOWGENT_POLICY", str(path))
        files._current = None  # read on next use
        return path

    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "no-config"))
    yield use
    files._current = None  # the next test reads its own environment again
