"""``list_variables`` over a real IPython shell's namespace: exact listings, and values whose own
code must never run while they are listed."""

from __future__ import annotations

import pytest

from meowgent_nb.notebook.workspace import list_variables_tool, notebook_tools, variables_listing
from meowgent_nb.tools import Tool


def test_a_shell_with_nothing_defined_lists_no_variables(ip):
    ip.run_cell("1 + 1")  # fills Out, _, _i1...: IPython's own, never listed
    assert list_variables_tool(ip.user_ns).run({}) == "No variables."


def test_the_persons_data_by_name_type_and_shape(ip):
    ip.run_cell(
        "import numpy as np\n"
        "import pandas as pd\n"
        "df = pd.DataFrame({'a': [1, 2, 3], 'b': [4.0, 5.0, 6.0]})\n"
        "s = df.a\n"
        "arr = np.zeros((2, 3, 4))\n"
        "xs = [1, 2, 3, 4]\n"
        "d = {'k': 1}\n"
        "text = 'hello'\n"
        "n = 42\n"
        "def clean(frame):\n    return frame\n"
        "class Point:\n    pass\n"
        "p = Point()\n"
        "_hidden = [1]\n"
    )
    assert list_variables_tool(ip.user_ns).run({}) == (
        "df: DataFrame, shape (3, 2)\n"
        "s: Series, shape (3,)\n"
        "arr: ndarray, shape (2, 3, 4)\n"
        "xs: list, len 4\n"
        "d: dict, len 1\n"
        "text: str, len 5\n"
        "n: int\n"
        "p: Point"
    )


def test_no_code_of_a_value_runs_while_it_is_listed(ip):
    ip.run_cell(
        "ran = []\n"
        "class Sneaky:\n"
        "    def __getattr__(self, name):\n        ran.append(name)\n"
        "    @property\n"
        "    def shape(self):\n        ran.append('shape')\n        return (1,)\n"
        "    def __len__(self):\n        ran.append('len')\n        return 1\n"
        "    @property\n"
        "    def __class__(self):\n        ran.append('__class__')\n        return list\n"
        "class Loud(type):\n"
        "    def __getattribute__(cls, name):\n"
        "        ran.append(name)\n        return type.__getattribute__(cls, name)\n"
        "class Quiet(metaclass=Loud):\n    shape = property(lambda self: ran.append('Quiet.shape'))\n"
        "class MyList(list):\n    def __len__(self):\n        ran.append('MyList.len')\n        return 0\n"
        "import pandas as pd\n"
        "class MyFrame(pd.DataFrame):\n"
        "    @property\n"
        "    def shape(self):\n        ran.append('MyFrame.shape')\n        return (0, 0)\n"
        "sneaky, quiet, mine, frame = Sneaky(), Quiet(), MyList([1]), MyFrame({'a': [1]})\n"
        "ran.clear()\n"
    ).raise_error()
    listing = list_variables_tool(ip.user_ns).run({})
    assert ip.user_ns["ran"] == []
    assert listing == "ran: list, len 0\nsneaky: Sneaky\nquiet: Quiet\nmine: MyList\nframe: MyFrame"


def test_at_most_the_limit_with_a_note_of_the_rest():
    namespace = {f"v{i}": i for i in range(7)}
    assert variables_listing(namespace, limit=3) == (
        "v0: int\nv1: int\nv2: int\n... and 4 more, not listed (at most 3 are)"
    )
    assert variables_listing(namespace, limit=7).count("\n") == 6


def test_the_tool_is_a_read_only_tool_without_arguments_or_approval(ip):
    listing, _, _ = notebook_tools(ip.user_ns)
    assert isinstance(listing, Tool)
    assert (listing.name, listing.parameters["properties"], listing.read_only, listing.approval) == (
        "list_variables",
        {},
        True,
        False,
    )
    assert listing.description == (
        "List the variables in the person's notebook: each one's name, type, and shape or length.\n\n"
        "Values are not shown. Modules, functions, classes and names beginning with _ are left out."
    )


def test_the_namespace_is_read_at_each_call(ip):
    listing = list_variables_tool(ip.user_ns)
    ip.run_cell("later = (1, 2)")
    assert listing.run({}) == "later: tuple, len 2"


def test_bad_arguments_say_how_to_fix_them():
    with pytest.raises(TypeError) as raised:
        notebook_tools(["df"])  # type: ignore[arg-type]
    assert str(raised.value) == (
        "list_variables needs the namespace as a mapping of names to values, not list;"
        " pass get_ipython().user_ns or globals()"
    )
    with pytest.raises(ValueError) as raised:
        list_variables_tool({}, limit=0)
    assert str(raised.value) == "list_variables' limit must be a whole number of at least 1, not 0"
