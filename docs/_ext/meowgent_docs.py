"""A Sphinx extension of this site: the course notebooks as pages, and the public API's reference.

- ``config-inited``: every ``notebooks/*.ipynb`` is copied to ``docs/course/`` (git ignores the
  copies), so each course notebook is a page without a second copy in the repository. A copy is
  rewritten only when its notebook changed, so an incremental build stays incremental.
- ``{meowgent-api} MODULE``: one autodoc entry per name of a public module's ``__all__``
  (``meowgent_nb`` when no module is given), classes first, then functions, so a new public name
  is documented the day it is exported. A name the page documented under an earlier module (the
  offline models are in ``meowgent_nb`` and ``meowgent_nb.models``) is documented once.
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


def public_names(module: str = "meowgent_nb", seen: set[int] | None = None) -> list[tuple[str, str]]:
    """(autodoc directive, name) for each public name of ``module``, classes first, each group in
    `__all__`'s order; names whose object is in ``seen`` (ids, updated) are left out."""
    import importlib

    public = importlib.import_module(module)
    seen = set() if seen is None else seen
    entries = []
    for name in public.__all__:
        if name in NOT_REFERENCE:
            continue
        value = getattr(public, name)
        if inspect.isclass(value) or callable(value):
            if id(value) in seen:
                continue
            seen.add(id(value))
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
    """``{meowgent-api} MODULE``: the reference of every public name of a module, from its docstring."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        module = self.arguments[0] if self.arguments else "meowgent_nb"
        # One page's directives share what they documented, so an object appears once on it.
        seen = self.env.temp_data.setdefault("meowgent_api_seen", set())
        # The page is Markdown, and so is what its directive parses; autodoc writes reStructuredText,
        # which MyST reads inside an eval-rst block.
        lines = ["```{eval-rst}"]
        for kind, name in public_names(module, seen):
            lines += [f".. auto{kind}:: {module}.{name}", ""]
        lines.append("```")
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(lines, source=f"{module}.__all__"), self.content_offset, node)
        return node.children


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", copy_course)
    app.add_directive("meowgent-api", PublicApi)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
