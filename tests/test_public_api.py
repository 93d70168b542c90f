"""The public API: a short `meowgent_nb.__all__` grouped by comment, public modules for the rest,
every name the README, guides and course import among them, and the old top-level names still
importing, with a warning that names their new place.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import meowgent_nb

ROOT = Path(__file__).resolve().parents[1]
GROUPED = ["meowgent_nb", "meowgent_nb.mcp", "meowgent_nb.models"]
# Every name meowgent_nb exported before the public modules, and where it is now.
MOVED = {
    **dict.fromkeys(
        ["AgentEvent", "ApprovalEvent", "ApprovalRequested", "FinalAnswer", "ModelStatus", "PartialCall"],
        "meowgent_nb.events",
    ),
    **dict.fromkeys(
        [
            "RunStart",
            "TextDelta",
            "ThinkingDelta",
            "ToolCallEvent",
            "ToolResultEvent",
            "ToolRunning",
            "TurnEnd",
        ],
        "meowgent_nb.events",
    ),
    **dict.fromkeys(
        ["Model", "ModelChunk", "ModelRequest", "OllamaModel", "OpenAIModel", "Usage"], "meowgent_nb.models"
    ),
    **dict.fromkeys(
        ["McpServerError", "McpToolError", "McpToolbox", "OAuth", "ToolServer", "load_mcp_config", "prompt"],
        "meowgent_nb.mcp",
    ),
    "resource": "meowgent_nb.mcp",
    "ApprovalRequest": "meowgent_nb.agent.approvals",
    "Approver": "meowgent_nb.agent.approvals",
    **dict.fromkeys(["Rule", "RuleError", "Rules"], "meowgent_nb.agent.rules"),
    "RepeatedFailure": "meowgent_nb.agent.result",
    "RunInterrupted": "meowgent_nb.errors",
    "ToolContextError": "meowgent_nb.tools.context",
    "aevaluate": "meowgent_nb.evals",
    "RecordingModel": "meowgent_nb.recording",
    "ReplayModel": "meowgent_nb.recording",
    **dict.fromkeys(["MalformedCall", "ToolCallParser", "parse_tool_calls"], "meowgent_nb.protocols.parsing"),
    "parse_tools_xml": "meowgent_nb.tools.render",
    "render_tools_text": "meowgent_nb.tools.render",
}


def groups_of_all(module: str) -> list[tuple[str | None, list[str]]]:
    """(comment, names) for each group of the module's ``__all__`` as its source writes it."""
    path = Path(importlib.import_module(module).__file__ or "")
    source = path.read_text()
    start = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]
    )
    groups: list[tuple[str | None, list[str]]] = [(None, [])]
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if not start.lineno <= token.start[0] <= (start.end_lineno or 0):
            continue
        if token.type == tokenize.COMMENT and token.start[0] != start.lineno:
            groups.append((token.string, []))
        elif token.type == tokenize.STRING:
            groups[-1][1].append(ast.literal_eval(token.string))
    return [group for group in groups if group[1]]


def test_the_top_level_is_a_short_list():
    assert len(meowgent_nb.__all__) <= 30
    assert len(set(meowgent_nb.__all__)) == len(meowgent_nb.__all__)
    assert not set(meowgent_nb.__all__) & set(MOVED)


@pytest.mark.parametrize("module", GROUPED)
def test_all_is_grouped_by_comment_and_sorted_within_each_group(module):
    groups = groups_of_all(module)
    assert [name for _, names in groups for name in names] == importlib.import_module(module).__all__
    assert all(comment for comment, _ in groups[1:]) and len(groups) > 1
    assert [names for _, names in groups] == [sorted(names) for _, names in groups]


@pytest.mark.parametrize(
    "module", ["meowgent_nb", "meowgent_nb.events", "meowgent_nb.mcp", "meowgent_nb.models"]
)
def test_every_public_name_imports(module):
    public = importlib.import_module(module)
    assert [name for name in public.__all__ if not hasattr(public, name)] == []


def test_the_version_comes_from_the_package_metadata():
    from importlib.metadata import version

    assert meowgent_nb.__version__ == version("meowgent-nb")


@pytest.mark.parametrize("name", sorted(MOVED))
def test_an_old_name_still_imports_with_a_warning_naming_its_place(name):
    place = MOVED[name]
    message = f"meowgent_nb.{name} has moved: import it from {place} (`from {place} import {name}`)"
    with pytest.warns(DeprecationWarning, match=re.escape(message)) as caught:
        old = getattr(meowgent_nb, name)
    assert old is getattr(importlib.import_module(place), name)
    assert caught[0].filename == __file__  # the warning points at the line that used the old name


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'meowgent_nb' has no attribute 'Nope'"):
        meowgent_nb.Nope  # noqa: B018 - the attribute access is the test


def _imports(text: str) -> list[tuple[str, str]]:
    found = []
    for module, body in re.findall(r"^\s*from (meowgent_nb[\w.]*) import (\([^)]*\)|[^\n]*)", text, re.M):
        found += [(module, name) for name in re.findall(r"\w+", re.sub(r"#[^\n]*", "", body))]
    return found


def _documents() -> dict[str, str]:
    texts = {}
    for path in [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *(ROOT / "notebooks").glob("*.ipynb"),
    ]:
        if "_build" in path.parts:  # a local build of the site
            continue
        text = path.read_text()
        if path.suffix == ".ipynb":
            text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
        texts[str(path.relative_to(ROOT))] = text
    return texts


def test_every_name_the_readme_guides_and_course_import_is_public_where_they_import_it():
    imports = {(module, name) for text in _documents().values() for module, name in _imports(text)}
    assert ("meowgent_nb", "tool") in imports and ("meowgent_nb.mcp", "McpToolbox") in imports
    top = sorted(
        name for module, name in imports if module == "meowgent_nb" and name not in meowgent_nb.__all__
    )
    missing = sorted(
        f"{module}.{name}"
        for module, name in imports
        if module != "meowgent_nb" and not hasattr(importlib.import_module(module), name)
    )
    assert (top, missing) == ([], [])


def test_the_public_modules_import_nothing_heavy():
    code = (
        "import sys, meowgent_nb, meowgent_nb.events, meowgent_nb.mcp, meowgent_nb.models\n"
        "heavy = {'IPython', 'ipywidgets', 'ollama', 'httpx', 'llama_cpp', 'mcp', 'openai'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
