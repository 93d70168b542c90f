"""``run_code`` in a real kernel: displays and inline figures come back in its value, not the cell's output."""

from __future__ import annotations

import pytest

from tests.support.kernel_driver import WIDGET_VIEW, Kernel, interrupting, running_kernel

SETUP = """\
%matplotlib inline
import matplotlib.pyplot as plt
from meowgent_nb import Agent, ScriptedModel
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
        "agent = Agent(model, tools=notebook_tools(get_ipython().user_ns), rules=['run_code -> allow'])\n"
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
        "['image/png', 'image/png'] (160, 110)\n"  # the inline backend's tight box
        "['text/html', 'text/plain'] ['image/png', 'text/plain'] []\n"
    )
    displayed = run.of_type("display_data", "execute_result")
    assert [sorted(d["data"]) for d in displayed] == [[WIDGET_VIEW, "text/plain"]]
    assert [c["name"] for c in run.of_type("stream")] == ["stdout"] * len(run.of_type("stream"))


LOOP = """\
import ipywidgets, threading
from IPython.display import display
ran_on = threading.get_ident()
display(ipywidgets.Label('looping'))
while True:
    pass
"""


def test_the_kernel_s_interrupt_ends_the_code_and_frees_its_thread(kernel: Kernel):
    run = kernel.execute(
        f"model = ScriptedModel([tool_call('run_code', code={LOOP!r}), 'Done.'])\n"
        "agent = Agent(model, tools=notebook_tools(get_ipython().user_ns), rules=['run_code -> allow'], tool_timeout=None)\n"
        "result = await agent.arun('loop')",
        hook=interrupting,
    )
    assert (run.reply["status"], run.reply["ename"]) == ("error", "CancelledError")
    after = kernel.ok(
        "import sys, time\n"
        "def running(thread):\n"
        "    frame = sys._current_frames().get(thread)\n"
        "    while frame is not None:\n"
        "        if frame.f_code.co_filename.startswith('<run_code-'):\n"
        "            return True\n"
        "        frame = frame.f_back\n"
        "    return False\n"
        "deadline = time.monotonic() + 10\n"
        "while running(ran_on) and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print(running(ran_on))"
    )
    assert after.stdout == "False\n"
