"""``%%agent --notebook`` with ``{df}`` in a real kernel: the model sees the frame, looks at a
frame through ``look_at``, and the cell's expectation checks that call."""

from __future__ import annotations

import pytest

from meowgent_nb.tools.values import value_view
from tests.support.kernel_driver import running_kernel

pandas = pytest.importorskip("pandas")
TEXT = str(pandas.DataFrame({"w": ["x"]})["w"].dtype)  # object, or str in pandas 3
FRAME = pandas.DataFrame({"city": ["Paris", "Oslo", "Rome"], "rain": [3.5, 1.25, None]})
TOKENS = 45 if TEXT == "object" else value_view(FRAME).tokens  # 45 with object columns
SETUP = """
%load_ext meowgent_nb
import pandas as pd
from meowgent_nb import ScriptedModel
from meowgent_nb.testing import tool_call
df = pd.DataFrame({"city": ["Paris", "Oslo", "Rome"], "rain": [3.5, 1.25, None]})
model = ScriptedModel([tool_call("look_at", name="df"), "Rome has no rain figure."])
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "notebook-tools", SETUP)


def test_a_notebook_cell_with_a_frame_looks_at_it_and_meets_its_expectation(kernel):
    run = kernel.ok(
        "%%agent --model-object model --notebook --approve deny --expect \"look_at(name='df') then answered\"\n"
        "Which city in {df} has no rain figure?"
    )
    shown = [c["data"] for c in run.of_type("display_data", "update_display_data")][-1]
    assert shown["text/plain"].splitlines() == [
        f"[variables shown: df (DataFrame, {TOKENS} tokens)]",
        "[tool] look_at(name='df') -> done",
        "  df (DataFrame):",
        "  pandas DataFrame: 3 rows × 2 columns",
        "  columns (dtype, nulls):",
        f"    city  {TEXT}  0 nulls",
        "    rain  float64  1 null",
        "  all 3 rows:",
        "      city  rain",
        "  0  Paris  3.50",
        "  1   Oslo  1.25",
        "  2   Rome   NaN",
        "Rome has no rain figure.",
    ]
    offered = kernel.ok("print([t.name for t in model.requests[-1].offered])").stdout
    listed = kernel.ok(
        "from meowgent_nb.notebook.workspace import notebook_tools\n"
        "print([t.name for t in notebook_tools(get_ipython().user_ns)])"
    ).stdout
    assert offered == listed
    assert listed.startswith("['list_variables', 'look_at'")
