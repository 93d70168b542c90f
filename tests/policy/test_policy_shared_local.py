"""Which embedded model "local" names: the machine's shared process where the policy or
$MEOWGENT_LOCAL_SHARED says so, else one in the kernel; the policy wins over the variable."""

from __future__ import annotations

import pytest

from meowgent_nb.errors import SettingsError
from meowgent_nb.models.llamacpp import LlamaCppModel
from meowgent_nb.models.resolve import resolve_model
from meowgent_nb.models.shared_local import SharedLocalModel

SHARED = """
[local]
shared = {shared}
"""


@pytest.mark.parametrize(
    ("policy", "env", "kind"),
    [
        (None, None, LlamaCppModel),
        (None, "1", SharedLocalModel),
        (None, "0", LlamaCppModel),
        ("true", None, SharedLocalModel),
        ("true", "0", SharedLocalModel),
        ("false", "1", LlamaCppModel),
    ],
)
def test_local_is_the_shared_process_where_the_policy_or_the_variable_says_so(
    use_policy, monkeypatch, policy, env, kind
):
    use_policy("" if policy is None else SHARED.format(shared=policy))  # "": no defaults, no limits
    if env is None:
        monkeypatch.delenv("MEOWGENT_LOCAL_SHARED", raising=False)
    else:
        monkeypatch.setenv("MEOWGENT_LOCAL_SHARED", env)
    model = resolve_model("local", options={"num_ctx": 16384, "temperature": 0})
    assert type(model) is kind
    assert model.n_ctx == 16384
    assert model.name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def test_a_variable_that_is_not_a_switch_is_refused_naming_it(use_policy, monkeypatch):
    use_policy("")
    monkeypatch.setenv("MEOWGENT_LOCAL_SHARED", "maybe")
    with pytest.raises(SettingsError, match=r"\$MEOWGENT_LOCAL_SHARED='maybe' is not a switch"):
        resolve_model("local")
