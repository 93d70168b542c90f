"""A Sphinx extension of this site: the course notebooks as pages, and the public API's reference.

- ``config-inited``: every ``notebooks/*.ipynb`` is copied to ``docs/course/`` (git ignores the
  copies), so each course notebook is a page without a second copy in the repository. A copy is
  rewritten only when its notebook changed, so an incremental build stays incremental.
- ``{meowgent-api}``: one autodoc entry per name of ``meowgent_nb.__all__``, classes first, then
  functions, so a new public name is documented the day it is exported.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

# Names of __all__ that are not part of a user's API: the version string and the hooks IPython calls.
NOT_REFERENCE = {"__version__", "load_ipython_extension", "unload_ipython_extension"}


def copy_course(app: Any, config: Any) -> None:
    """Copy the course notebooks into ``docs/course/``, dropping copies of notebooks that are gone."""
    docs = Path(app.srcdir)
    source, target = docs.parent / "notebooks", docs / "course"
    target.mkdir(exist_ok=True)
    wanted = {path.name: path for path in sorted(source.glob("*.ipynb"))}
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    for name, path in wanted.items():
        text = path.read_bytes()
        copy = target / name
        if not copy.exists() or copy.read_bytes() != text:
            copy.write_bytes(text)


def public_names() -> list[tuple[str, str]]:
    """(autodoc directive, name) for each public name, classes first, each group in `__all__`'s order."""
    import meowgent_nb

    entries = []
    for name in meowgent_nb.__all__:
        if name in NOT_REFERENCE:
            continue
        value = getattr(meowgent_nb, name)
        if inspect.isclass(value):
            kind = "exception" if issubclass(value, BaseException) else "class"
        elif callable(value):
            kind = "function"
        else:
            kind = "data"
        entries.append((kind, name))
    order = {"class": 0, "exception": 1, "function": 2, "data": 3}
    return sorted(entries, key=lambda entry: order[entry[0]])


class PublicApi(SphinxDirective):
    """``{meowgent-api}``: the reference of every public name, generated from its docstring."""

    def run(self) -> list[nodes.Node]:
        # The page is Markdown, and so is what its directive parses; autodoc writes reStructuredText,
        # which MyST reads inside an eval-rst block.
        lines = ["```{eval-rst}"]
        for kind, name in public_names():
            lines += [f".. auto{kind}:: meowgent_nb.{name}", ""]
        lines.append("```")
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(lines, source="meowgent_nb.__all__"), self.content_offset, node)
        return node.children


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", copy_course)
    app.add_directive("meowgent-api", PublicApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
