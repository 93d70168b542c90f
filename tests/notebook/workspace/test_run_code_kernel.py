"""``run_code`` in a real kernel: displays and inline figures come back in its value, not the cell's output."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import WIDGET_VIEW, Kernel, running_kernel

SETUP = """\
%matplotlib inline
import matplotlib.pyplot as plt
from meowgent_nb import Agent, AutoApprove, ScriptedModel
from meowgent_nb.notebook.workspace import notebook_tools
from meowgent_nb.testing import tool_call
from meowgent_nb.tools.media import image_size
"""

CODE = """\
import ipywidgets
import matplotlib.pyplot as plt
from IPython.display import HTML, display
display(HTML('<b>hi</b>'))
shown = plt.figure(figsize=(2, 1), dpi=50)
plt.plot([1, 2])
plt.show()
left = plt.figure(figsize=(3, 2), dpi=50)
display(ipywidgets.IntSlider(value=3))
print('printed')
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from running_kernel(tmp_path_factory, "run-code", SETUP)


def test_displays_and_figures_come_back_captured_and_only_a_widget_reaches_the_cell(kernel: Kernel):
    run = kernel.ok(
        f"model = ScriptedModel([tool_call('run_code', code={CODE!r}), 'Done.'])\n"
        "agent = Agent(model, tools=notebook_tools(get_ipython().user_ns), approver=AutoApprove())\n"
        "result = await agent.arun('plot')\n"
        "ran = result.tool_results[0].value\n"
        "print(result.tool_results[0].output)\n"
        "print([m.mime_type for m in ran.media], image_size(ran.media[1].data))\n"
        "print(sorted(ran.outputs[0]), sorted(ran.outputs[1]), plt.get_fignums())"
    )
    assert run.stdout == (
        "Printed:\n"
        "printed\n"
        "Displayed: <IPython.core.display.HTML object>\n"
        "Displayed: [image: image/png] <Figure size 100x50 with 1 Axes>\n"
        "Left open and shown: 1 figure ([image: image/png] each)\n"
        "Displayed 1 widget in the cell's output: a widget cannot be shown in a tool's result.\n"
        "['image/png', 'image/png'] (150, 100)\n"
        "['text/html', 'text/plain'] ['image/png', 'text/plain'] []\n"
    )
    displayed = run.of_type("display_data", "execute_result")
    assert [sorted(d["data"]) for d in displayed] == [[WIDGET_VIEW, "text/plain"]]
    assert [c["name"] for c in run.of_type("stream")] == ["stdout"] * len(run.of_type("stream"))
