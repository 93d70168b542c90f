"""meowgent_nb's pytest plugin: notebooks with ``%%agent`` cells under nbval, and test fixtures.

Installed with the package (the ``pytest11`` entry point ``meowgent_nb``), so a project that runs
its own notebooks needs no conftest.py of ours. It does three things:

- Under ``--nbval`` or ``--nbval-lax`` it adds the transcript's sanitize rules
  (``meowgent_nb/nbval_sanitize.cfg``: the measured times in the transcript's HTML) to nbval's,
  before the rules of any file given with ``--nbval-sanitize-with``, which it never replaces.
  Without nbval, or with nbval not asked for, it touches nothing of nbval's.
- A notebook whose metadata says ``{"meowgent_nb": {"real_model": true}}`` talks to a real
  model: its tests (nbval's cells, nbmake's notebook) get the ``real_model`` marker, and are
  skipped, with the reason, when no model is there (no embedded model installed, no Ollama).
- The fixtures of `meowgent_nb.testing`: ``scripted_model``, ``no_model_requests``,
  ``run_notebook``.

It is a module of its own, outside the package, because pytest imports every plugin at start-up
in every project of the environment: importing ``meowgent_nb`` (pydantic, the agent) would cost
each of those runs a third of a second. Everything of the package is imported on use.
To switch the plugin off: ``pytest -p no:meowgent_nb``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

REAL_MODEL_MARKER = (
    "real_model: talks to a real local model (skipped when none is installed and no Ollama answers)"
)
_RULE = re.compile(r"^regex: (.*)$\n^replace: (.*)$", re.MULTILINE)  # what nbval reads (get_sanitize_patterns)


# --- nbval's sanitize rules ----------------------------------------------------------------------


def package_sanitize_file() -> Path:
    """``meowgent_nb/nbval_sanitize.cfg``, found without importing the package."""
    from importlib.util import find_spec

    spec = find_spec("meowgent_nb")
    if spec is None or not spec.submodule_search_locations:
        raise pytest.UsageError("meowgent_nb's pytest plugin: the meowgent_nb package is not importable")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "nbval_sanitize.cfg"
        if path.is_file():
            return path
    raise pytest.UsageError(
        "meowgent_nb's pytest plugin: meowgent_nb/nbval_sanitize.cfg is missing; reinstall meowgent-nb"
    )


def sanitize_rules(text: str, source: str) -> list[tuple[str, str]]:
    """The ``(regex, replace)`` pairs of a sanitize file, as nbval reads them, each checked.

    nbval silently skips what it cannot read and fails on a bad regex only when it compares; this
    says what is wrong, where, before any notebook runs.

    Raises:
        pytest.UsageError: A ``regex:`` line without a ``replace:`` line after it (or the other way
            round), a regex that does not compile, or a replacement that does not.
    """
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        following = lines[number] if number < len(lines) else ""
        previous = lines[number - 2] if number > 1 else ""
        if line.startswith("regex:") and not (line.startswith("regex: ") and following.startswith("replace: ")):
            raise pytest.UsageError(
                f"{source} line {number}: a rule is two lines, 'regex: PATTERN' then 'replace: TEXT'"
                f" (one space after each colon); found {line!r} followed by {following!r}"
            )
        if line.startswith("replace:") and not previous.startswith("regex: "):
            raise pytest.UsageError(
                f"{source} line {number}: {line!r} has no 'regex: PATTERN' line right before it"
            )
    rules = _RULE.findall("\n".join(lines))
    for regex, replace in rules:
        try:
            re.compile(regex).sub(replace, "")
        except re.error as error:
            raise pytest.UsageError(
                f"{source}: the rule 'regex: {regex}' / 'replace: {replace}' does not compile: {error}"
            ) from None
    return rules


def merged_sanitize_text(ours: list[tuple[str, str]], theirs: list[tuple[str, str]]) -> str:
    """One sanitize file: our rules, then the user's that are not already among them."""
    rules = list(ours) + [rule for rule in theirs if rule not in ours]
    head = "# Written by meowgent_nb's pytest plugin: its rules, then those of --nbval-sanitize-with.\n"
    return head + "".join(f"regex: {regex}\nreplace: {replace}\n" for regex, replace in rules)


def _nbval_active(config: pytest.Config) -> bool:
    option = config.option
    return bool(getattr(option, "nbval", False) or getattr(option, "nbval_lax", False)) and hasattr(
        option, "nbval_sanitize_with"
    )


@pytest.hookimpl(trylast=True)  # after nbval's own pytest_configure (it resolves --sanitize-with)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", REAL_MODEL_MARKER)
    if not _nbval_active(config):
        return
    ours_path = package_sanitize_file()
    theirs = config.option.nbval_sanitize_with
    if theirs is None:
        config.option.nbval_sanitize_with = str(ours_path)
        return
    path = Path(theirs)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise pytest.UsageError(f"--nbval-sanitize-with {theirs}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise pytest.UsageError(f"--nbval-sanitize-with {theirs}: cannot be read ({error})") from None
    ours = sanitize_rules(ours_path.read_text(encoding="utf-8"), str(ours_path))
    merged = merged_sanitize_text(ours, sanitize_rules(text, theirs))
    folder = tempfile.mkdtemp(prefix="meowgent-nbval-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    target = Path(folder) / "nbval_sanitize.cfg"
    target.write_text(merged, encoding="utf-8")
    config.option.nbval_sanitize_with = str(target)


# --- notebooks that need a real model ------------------------------------------------------------


def needs_real_model(path: Path) -> bool:
    """Whether the notebook's metadata says ``{"meowgent_nb": {"real_model": true}}``.

    A notebook that cannot be read says nothing here (its collector reports that).

    Raises:
        pytest.UsageError: ``meowgent_nb`` is not an object, or ``real_model`` not true or false.
    """
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False
    ours = metadata.get("meowgent_nb", {}) if isinstance(metadata, dict) else {}
    if not isinstance(ours, dict):
        raise pytest.UsageError(
            f"{path}: the notebook metadata 'meowgent_nb' must be an object such as"
            f' {{"real_model": true}}, got {json.dumps(ours)}'
        )
    value = ours.get("real_model", False)
    if not isinstance(value, bool):
        raise pytest.UsageError(
            f"{path}: the notebook metadata 'meowgent_nb.real_model' must be true or false,"
            f" got {json.dumps(value)}"
        )
    return value


def no_model_problem() -> str | None:
    """Why no real model can answer here, or None: the embedded model, else Ollama, is there."""
    import os

    from meowgent_nb.models.resolve import local_model_problem, ollama_answers

    problem = local_model_problem()
    if problem is not None and ollama_answers(os.environ.get("OLLAMA_HOST", "127.0.0.1:11434")):
        return None
    return problem


@pytest.hookimpl(tryfirst=True)  # before `-m "not real_model"` deselects by the marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    flags: dict[Path, bool] = {}
    real = []
    for item in items:
        path = Path(str(getattr(item, "path", "")))
        if path.suffix != ".ipynb":
            continue
        if path not in flags:
            flags[path] = needs_real_model(path)
        if flags[path]:
            real.append(item)
    if not real:
        return
    problem = no_model_problem()
    for item in real:
        item.add_marker(pytest.mark.real_model)
        if problem is not None:
            item.add_marker(pytest.mark.skip(reason=f"no model to run this notebook on: {problem}"))


# --- fixtures of meowgent_nb.testing -------------------------------------------------------------


@pytest.fixture
def scripted_model() -> Any:
    """Makes a `ScriptedModel` from answers: ``scripted_model("<tool_call>...", "Done.")``."""
    from meowgent_nb.testing import scripted_model as make

    return make


@pytest.fixture
def no_model_requests() -> Any:
    """Fail the test if it would reach a real model (a server, or the embedded model)."""
    from meowgent_nb.testing import no_model_requests as guard

    with guard():
        yield


@pytest.fixture
def run_notebook() -> Any:
    """`meowgent_nb.testing.run_notebook`: run a notebook headless, get its agent cells as data."""
    from meowgent_nb.testing import run_notebook as run

    return run
