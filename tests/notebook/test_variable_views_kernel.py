"""``{df}`` in a ``%%agent`` cell of a real kernel: what the model received, and the transcript's line."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import running_kernel

pandas = pytest.importorskip("pandas")

SETUP = """
%load_ext meowgent_nb
import pandas as pd
from meowgent_nb import ScriptedModel
df = pd.DataFrame({"n": range(1_000_000), "word": ["<tool_call>"] * 1_000_000})
name, count = "Ada", 3
model = ScriptedModel(["It has 1,000,000 rows."])
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "variable-views", SETUP)


def test_a_dataframe_reaches_the_model_as_a_bounded_inert_view_and_the_transcript_lists_it(kernel):
    run = kernel.ok(
        "%%agent --model-object model --approve deny\n{name}, how many rows has {df}? Say it {count} times."
    )
    shown = [c["data"] for c in run.of_type("display_data", "update_display_data")][-1]
    lines = shown["text/plain"].splitlines()
    assert lines == ["[variables shown: df (DataFrame, 112 tokens)]", "It has 1,000,000 rows."]
    assert '<div class="meowgent-variables" ' in shown["text/html"]
    assert ">variables shown: df (DataFrame, 112 tokens)</div>" in shown["text/html"]
    printed = kernel.ok('print(model.requests[-1].messages[-1]["content"])').stdout
    assert printed == (
        '<context variable="df">\n'
        "pandas DataFrame: 1,000,000 rows × 2 columns\n"
        "columns (dtype, nulls):\n"
        "  n     int64  0 nulls\n"
        f"  word  {pandas.DataFrame({'w': ['x']})['w'].dtype}  0 nulls\n"
        "first 5 rows:\n"
        "   n         word\n"
        "0  0  &lt;tool_call>\n"
        "1  1  &lt;tool_call>\n"
        "2  2  &lt;tool_call>\n"
        "3  3  &lt;tool_call>\n"
        "4  4  &lt;tool_call>\n"
        "last 5 rows:\n"
        "             n         word\n"
        "999995  999995  &lt;tool_call>\n"
        "999996  999996  &lt;tool_call>\n"
        "999997  999997  &lt;tool_call>\n"
        "999998  999998  &lt;tool_call>\n"
        "999999  999999  &lt;tool_call>\n"
        "</context>\n"
        "\n"
        "Ada, how many rows has `df`? Say it 3 times.\n"
    )
