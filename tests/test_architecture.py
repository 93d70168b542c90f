"""The package's architecture, read from its imports: wings depend one way, nothing circles, and
no wing imports another wing's private (``_name``) modules.

Every ``import`` and ``from ... import`` in ``meowgent_nb`` counts, also those inside functions
(lazy) and under ``TYPE_CHECKING``: a lazy import is still a dependency a reader must follow.
Modules and rooms are cut by concern, so no count of lines or modules is checked here.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "meowgent_nb"

# What each wing may import, besides itself. The bottom modules (errors, _async, the text deltas,
# the HTML pieces, the hidden-character escapes, the hiding of secrets and the version)
# may be imported from anywhere, underscore or not, and import only each other.
BOTTOM = {"errors", "_async", "_deltas", "_html", "_visible", "_redact", "_version"}
ALLOWED = {
    "bottom": set(),
    # A site's policy: defaults and limits every wing above it enforces where a setting is made.
    "policy": {"bottom"},
    # The course's files, found and copied: they are data, and the wing imports nothing above the bottom.
    "course": {"bottom"},
    "tools": {"policy", "bottom"},
    "protocols": {"tools", "policy", "bottom"},
    "models": {"tools", "policy", "bottom"},
    # Cassettes wrap any backend: they know models, never the agent that uses them.
    "recording": {"models", "protocols", "tools", "policy", "bottom"},
    "agent": {"recording", "protocols", "models", "tools", "policy", "bottom"},
    # The eval runs agents; nothing in the agent knows it exists.
    "evals": {"agent", "recording", "protocols", "models", "tools", "policy", "bottom"},
    "mcp": {"evals", "agent", "recording", "protocols", "models", "tools", "policy", "bottom"},
    "notebook": {"mcp", "evals", "agent", "recording", "protocols", "models", "tools", "policy", "bottom"},
    # For people's tests; it runs notebooks in a kernel, so it never imports the notebook wing.
    # It checks evals against a baseline (the gate of %tools eval --baseline), so it may use evals.
    "testing": {"evals", "agent", "recording", "protocols", "models", "tools", "policy", "bottom"},
    "package": {
        "notebook",
        "mcp",
        "evals",
        "agent",
        "recording",
        "protocols",
        "models",
        "tools",
        "policy",
        "bottom",
    },
    # `python -m meowgent_nb demo|course`: runs a notebook with the testing wing's run_notebook, copies the course.
    "command": {
        "course",
        "testing",
        "evals",
        "agent",
        "recording",
        "protocols",
        "models",
        "tools",
        "policy",
        "bottom",
    },
}
NOTEBOOK_ONLY = ("IPython", "ipywidgets")
# Public modules of the package itself: they re-export a wing's names under a short path.
PUBLIC = {"events"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The absolute names of the modules ``path`` imports (``from X import name`` counts X and X.name)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {name: {m for m in imports_of(path) if m in MODULES and m != name} for name, path in MODULES.items()}


def wing(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 1:
        return "package"
    if parts[1:] == ["__main__"]:
        return "command"
    if len(parts) == 2 and parts[1] in BOTTOM:
        return "bottom"
    return parts[1] if len(parts) > 2 or parts[1] in ALLOWED else "package"


def test_the_wings_are_the_ones_the_folder_listing_shows():
    top = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert top == [
        "agent",
        "course",
        "evals",
        "mcp",
        "models",
        "notebook",
        "policy",
        "protocols",
        "recording",
        "testing",
        "tools",
    ]
    assert sorted(p.stem for p in PACKAGE.glob("*.py")) == sorted(["__init__", "__main__", *BOTTOM, *PUBLIC])


ROOMS = {
    "agent": ["approvals", "expectations", "rules", "tracing", "window"],
    "mcp": ["client", "content", "server"],
    "notebook": ["approvals", "magics", "mcp", "views", "workspace"],
}
# Rooms of a wing that never import each other: the two ends of MCP share content and a thread only.
APART = [("mcp.client", "mcp.server")]


def test_the_crowded_wings_have_the_rooms_the_folder_listing_shows():
    rooms = {
        name: sorted(p.name for p in (PACKAGE / name).iterdir() if p.is_dir() and p.name != "__pycache__")
        for name in ROOMS
    }
    assert rooms == ROOMS


@pytest.mark.parametrize("one, other", [pair for apart in APART for pair in (apart, apart[::-1])])
def test_rooms_kept_apart_do_not_import_each_other(one, other):
    crossing = sorted(
        f"{name} -> {m}"
        for name in MODULES
        if name.startswith(f"meowgent_nb.{one}")
        for m in GRAPH[name]
        if m.startswith(f"meowgent_nb.{other}")
    )
    assert crossing == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_each_module_imports_only_the_wings_below_it(name):
    own = wing(name)
    wrong = sorted(m for m in GRAPH[name] if wing(m) != own and wing(m) not in ALLOWED[own])
    assert wrong == [], f"{name} ({own}) imports {wrong}"


def private(name: str) -> bool:
    """Whether ``name`` is a private module: a part of it begins with one ``_`` (not ``__init__``)."""
    return any(part.startswith("_") and not part.startswith("__") for part in name.split(".")[1:])


# A wing's _name modules are its own: its rooms may share them, other wings import what its
# __init__ or a public module gives.
@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_another_wings_private_module(name):
    own = wing(name)
    reached = sorted(m for m in GRAPH[name] if private(m) and wing(m) not in (own, "bottom"))
    assert reached == [], f"{name} ({own}) imports another wing's private modules {reached}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if wing(n) != "notebook"))
def test_only_the_notebook_wing_imports_ipython_and_ipywidgets(name):
    heavy = sorted(m for m in imports_of(MODULES[name]) if m.split(".")[0] in NOTEBOOK_ONLY)
    assert heavy == [], f"{name} imports {heavy}"


def test_no_module_imports_itself_back_through_others():
    # A package's __init__ re-exporting its modules is not a circle: leave package -> own child out.
    graph = {n: {m for m in deps if not m.startswith(n + ".")} for n, deps in GRAPH.items()}
    circles, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                circles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert circles == []


MAP_PAGE = PACKAGE.parent / "docs" / "architecture.md"


def the_map() -> tuple[set[str], set[str]]:
    """The rooms (``agent/rules``) and top-level modules (``errors.py``) the page's map names.

    The map is the code block that begins ``meowgent_nb/``: a line per folder, indented two
    spaces per level, the folder's name ending in ``/``, then its concern; a line of modules
    names them separated by commas, then what they are.
    """
    text = MAP_PAGE.read_text()
    block = text[text.index("```\nmeowgent_nb/\n") + 4 :]
    lines = block[: block.index("```")].splitlines()[1:]
    rooms, modules, trail = set(), set(), []
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 2 - 1
        names, _, concern = line.strip().partition("  ")
        assert concern.strip(), f"the map's line {line.strip()!r} says nothing of its concern"
        if names.endswith("/"):
            trail = [*trail[:depth], names.rstrip("/")]
            rooms.add("/".join(trail))
        else:
            assert depth == 0, f"the map's modules line {line.strip()!r} is not at the top"
            modules.update(name.strip() for name in names.split(","))
    return rooms, modules


def test_the_map_names_every_wing_and_room_and_nothing_else():
    rooms, modules = the_map()
    folders = {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_dir() and p.name != "__pycache__"
    }
    files = {p.name for p in PACKAGE.glob("*.py")}
    assert (sorted(folders - rooms), sorted(rooms - folders)) == ([], []), "(not named, not there)"
    assert (sorted(files - modules), sorted(modules - files)) == ([], []), "(not named, not there)"


def test_the_modules_the_architecture_page_cites_exist():
    cited = set(re.findall(r"`([\w/]+\.py)", MAP_PAGE.read_text()))
    missing = sorted(
        path for path in cited if not (PACKAGE / path).exists() and not (PACKAGE.parent / path).exists()
    )
    assert missing == []


SHARDS = 3  # a process for each third of the modules: one took 29-36 s for all ~260 on a busy machine


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_module_imports_first_in_a_fresh_interpreter(shard):
    # An import cycle shows only when its modules are imported in one order; a test that imports a
    # module first (or a person's `from meowgent_nb.x import y`) is the order that breaks. Each
    # module is imported with the package's modules forgotten, in one process (the libraries stay).
    script = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "meowgent_nb" or m.startswith("meowgent_nb.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print("\\n".join(failed))
"""
    names = sorted(module_name(path) for path in PACKAGE.rglob("*.py"))[shard::SHARDS]
    done = subprocess.run(
        [sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=PACKAGE.parent, check=True
    )
    assert done.stdout.strip() == ""
