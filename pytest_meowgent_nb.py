"""meowgent_nb's pytest plugin: notebooks with ``%%agent`` cells under nbval, and test fixtures.

Installed with the package (the ``pytest11`` entry point ``meowgent_nb``), so a project that runs
its own notebooks needs no conftest.py of ours. It does three things:

- Under ``--nbval`` or ``--nbval-lax`` it adds the transcript's sanitize rules
  (``meowgent_nb/nbval_sanitize.cfg``: the measured times in the transcript's HTML) to each
  notebook's, before those nbval reads from a file given with ``--nbval-sanitize-with``. That file
  is nbval's to read, by nbval's code: the plugin neither reads, checks nor replaces it, so a run
  ends as it would without the plugin. Without nbval, or with nbval not asked for, it touches
  nothing of nbval's, and a project without our notebook metadata gets no ``real_model`` marker.
- A notebook whose metadata says ``{"meowgent_nb": {"real_model": true}}`` talks to a real
  model: its tests (nbval's cells, nbmake's notebook) get the ``real_model`` marker, and are
  skipped, with the reason, when no model is there (no embedded model installed, no Ollama).
- Under nbval, a ``%%agent`` cell with expected calls (``--expect`` on its first line, or
  ``{"meowgent": {"expect": ...}}`` in its metadata, which the plugin passes to the kernel as
  JupyterLab does) is checked on its calls: its words are not compared unless the cell asks
  (``# NBVAL_CHECK_OUTPUT``, or nbval's ``nbval-check-output`` tag). ``--meowgent-report FILE``
  writes a table of every agent cell: notebook, cell, expected, actual calls, how the run ended,
  the cell's outcome (Markdown; JSON for a ``.json`` file). ``--meowgent-trace FILE`` has
  every kernel the run starts write its ``%%agent`` runs' OpenTelemetry spans to FILE, as OTLP
  JSON lines (through ``MEOWGENT_TRACE_FILE``, which ``%load_ext meowgent_nb`` reads).
- The fixtures of `meowgent_nb.testing`: ``scripted_model``, ``no_model_requests``,
  ``run_notebook``.

It is a module of its own, outside the package, because pytest imports every plugin at start-up
in every project of the environment: importing ``meowgent_nb`` (pydantic, the agent) would cost
each of those runs a third of a second. Everything of the package is imported on use.
To switch the plugin off: ``pytest -p no:meowgent_nb``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

REAL_MODEL_MARKER = (
    "real_model: talks to a real local model (skipped when none is installed and no Ollama answers)"
)
_RULES = pytest.StashKey[list]()  # our sanitize rules, as nbval's parser reads them
TRACE_FILE_ENV = "MEOWGENT_TRACE_FILE"
"""What ``--meowgent-trace`` sets for the kernels (`meowgent_nb.agent.tracing.TRACE_FILE_ENV`)."""
_TRACE_BEFORE = pytest.StashKey[tuple]()  # (whether the variable was set, its value) before the run


# --- nbval's sanitize rules ----------------------------------------------------------------------


def package_sanitize_file() -> Path | None:
    """``meowgent_nb/nbval_sanitize.cfg``, found without importing the package (None if missing)."""
    from importlib.util import find_spec

    spec = find_spec("meowgent_nb")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "nbval_sanitize.cfg"
        if path.is_file():
            return path
    return None


def package_sanitize_rules(config: pytest.Config, nbval: Any) -> list[tuple[str, str]]:
    """Our rules, read once per run by nbval's own parser (``nbval`` is its plugin module)."""
    rules = config.stash.get(_RULES, None)
    if rules is None:
        path = package_sanitize_file()
        rules = nbval.get_sanitize_patterns(path.read_text(encoding="utf-8")) if path is not None else []
        config.stash[_RULES] = rules
    return rules


def pytest_collectstart(collector: pytest.Collector) -> None:
    """Give each notebook nbval collects our rules; nbval then reads its own files after them.

    nbval makes a notebook's ``sanitize_patterns`` empty when it collects the notebook, and adds
    the rules of ``--nbval-sanitize-with`` to it, reading that file with its own code, when the
    notebook's first cell runs. Ours are in it already: a user's rule with the same regex as one
    of ours replaces ours (as one file read after the other would), and whatever nbval does with
    the user's file (reads past a line it cannot read, fails on a missing file) it does as it
    does without the plugin, with the same messages: the plugin never reads that file.
    """
    nbval = collector.config.pluginmanager.get_plugin("nbval")
    notebook_file = getattr(nbval, "IPyNbFile", None)
    if notebook_file is None or not isinstance(collector, notebook_file):
        return
    patterns = getattr(collector, "sanitize_patterns", None)
    if hasattr(patterns, "update") and hasattr(nbval, "get_sanitize_patterns"):
        patterns.update(package_sanitize_rules(collector.config, nbval))


# --- agent cells with expected calls -------------------------------------------------------------

_AGENT_CELL = pytest.StashKey[dict]()  # an nbval item's agent cell: its expectation, where it is
_REPORT_QUERY = "__import__('meowgent_nb.notebook.magics._cell_expectation', fromlist=['_']).cell_report()"
METADATA_KEYS = ("meowgent", "meowgent_nb")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("meowgent_nb").addoption(
        "--meowgent-report",
        metavar="FILE",
        help="write a table of every %%agent cell nbval ran: notebook, cell, expected and actual calls,"
        " how the run ended, the outcome (Markdown; JSON for a .json file)",
    )
    parser.getgroup("meowgent_nb").addoption(
        "--meowgent-trace",
        metavar="FILE",
        help="write the OpenTelemetry spans of every %%agent run in the kernels the run starts (nbval's)"
        " to FILE, as OTLP JSON lines (needs opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--meowgent-trace FILE``: an empty FILE, named to the kernels this run starts."""
    path = config.getoption("meowgent_trace", None)
    if not path:
        return
    path = Path(path).absolute()
    if not hasattr(config, "workerinput"):  # the xdist controller (or a run without xdist) starts it
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    config.stash[_TRACE_BEFORE] = (TRACE_FILE_ENV in os.environ, os.environ.get(TRACE_FILE_ENV))
    os.environ[TRACE_FILE_ENV] = str(path)


def pytest_unconfigure(config: pytest.Config) -> None:
    before = config.stash.get(_TRACE_BEFORE, None)
    if before is None:
        return
    was_set, value = before
    if was_set:
        os.environ[TRACE_FILE_ENV] = value
    else:
        os.environ.pop(TRACE_FILE_ENV, None)


def cell_expectation(cell: Any) -> tuple[str | None, dict[str, Any]]:
    """An agent cell's expectation as written (``--expect`` or metadata), and its metadata of ours."""
    ours = {key: cell.metadata[key] for key in METADATA_KEYS if key in getattr(cell, "metadata", {})}
    for value in ours.values():
        if isinstance(value, dict) and isinstance(value.get("expect"), str):
            return value["expect"], ours
    first = cell.source.split("\n", 1)[0]
    found = re.search(r"(?:^|\s)--expect(?:=|\s+)(\"[^\"]*\"|'[^']*'|\S+)", first)
    if found is None:
        given = [value["expect"] for value in ours.values() if isinstance(value, dict) and "expect" in value]
        return (json.dumps(given[0]) if given else None), ours
    return found.group(1).strip("'\""), ours


def agent_cell_source(source: str, metadata: dict[str, Any]) -> str:
    """``source`` (a ``%%agent`` cell) as what the input transformer makes of it, with the cell's
    metadata passed: nbval, like nbclient, sends none with the request."""
    first, _, cell = source.partition("\n")
    line = first[len("%%agent") :].strip()
    module = "__import__('meowgent_nb.notebook.magics.agent_magics').notebook.magics.agent_magics"
    return f"await {module}.agent_cell({line!r}, {cell!r}, {metadata!r})"


def _agent_cells(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark nbval's agent cells; one with an expectation is checked on its calls, not its words."""
    nbval = config.pluginmanager.get_plugin("nbval")
    cell_type = getattr(nbval, "IPyNbCell", None)
    for item in items:
        if cell_type is None or not isinstance(item, cell_type) or not item.cell.source.startswith("%%agent"):
            continue
        expected, ours = cell_expectation(item.cell)
        item.stash[_AGENT_CELL] = cell = {"expected": expected, "calls_only": False, "found": None}
        if expected is None and not ours:
            continue
        asked = dict(nbval.find_comment_markers(item.cell.source))
        asked.update(nbval.find_metadata_tags(item.cell.metadata))
        if expected is not None and "check" not in asked:
            item.options["check"] = False  # its calls are checked in the kernel; its words may vary
            cell["calls_only"] = True
        if ours:
            item.cell.source = agent_cell_source(item.cell.source, ours)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """After an agent cell: ask the kernel what it did (for the report), and fail a cell checked
    on its calls whose run never got to the check: its error (a `UsageError`, which IPython writes
    to stderr rather than as an error nbval sees) would pass unseen with its words not compared."""
    cell = item.stash.get(_AGENT_CELL, None)
    if cell is None:
        return (yield)
    try:
        result = yield
    finally:
        if cell["calls_only"] or item.config.getoption("meowgent_report", None):
            cell["found"] = _ask_kernel(getattr(item.parent, "kernel", None))
    if cell["calls_only"] and isinstance(cell["found"], dict) and cell["found"].get("actual") is None:
        said = "".join(o.get("text", "") for o in item.test_outputs or () if o.get("name") == "stderr")
        item.raise_cell_error("The %%agent cell stopped before its calls could be checked", said.strip())
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = (yield).get_result()
    cell = item.stash.get(_AGENT_CELL, None)
    if cell is None or report.when != "call" or not item.config.getoption("meowgent_report", None):
        return
    found = cell["found"] or {}
    notebook, _, name = item.nodeid.partition("::")
    report.user_properties.append(
        (
            "meowgent_cell",
            {
                "notebook": notebook,
                "cell": name,
                "expected": cell["expected"],
                "actual": found.get("actual"),
                "ended": found.get("ended"),
                "outcome": report.outcome,
            },
        )
    )


def _ask_kernel(kernel: Any, timeout: float = 10.0) -> dict[str, Any] | None:
    """The last ``%%agent`` cell's calls, asked of nbval's kernel (a silent request, as a frontend
    asks for a variable); None if it cannot say (a dead kernel, no answer)."""
    try:
        msg_id = kernel.kc.execute(
            "", silent=True, store_history=False, user_expressions={"r": _REPORT_QUERY}
        )
        while True:
            reply = kernel.get_message(stream="shell", timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        value = reply["content"]["user_expressions"]["r"]["data"]["text/plain"]
        import ast

        return json.loads(ast.literal_eval(value))
    except Exception:  # noqa: BLE001 - the report says "unknown" rather than fail the run
        return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("meowgent_report", None)
    if not path or hasattr(session.config, "workerinput"):  # an xdist worker: the controller writes it
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reports = [
        r for each in getattr(reporter, "stats", {}).values() for r in each if hasattr(r, "user_properties")
    ]
    rows = [value for r in reports for key, value in r.user_properties if key == "meowgent_cell"]
    Path(path).write_text(report_text(rows, json_file=str(path).endswith(".json")), encoding="utf-8")


def report_text(rows: list[dict[str, Any]], json_file: bool = False) -> str:
    """The report of ``--meowgent-report``: a Markdown table, or JSON."""
    rows = sorted(
        rows,
        key=lambda r: (r["notebook"], int(r["cell"].split()[-1]) if r["cell"].split()[-1].isdigit() else 0),
    )
    if json_file:
        return json.dumps(rows, indent=1) + "\n"
    lines = ["| notebook | cell | expected | actual | ended | outcome |", "|---|---|---|---|---|---|"]
    for r in rows:
        actual = (
            "; ".join(r["actual"])
            if r["actual"]
            else ("(no calls)" if r["actual"] == [] else "(did not run)")
        )
        cells = [r["notebook"], r["cell"], r["expected"] or "-", actual, r["ended"] or "-", r["outcome"]]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


# --- notebooks that need a real model ------------------------------------------------------------


def needs_real_model(path: Path) -> bool:
    """Whether the notebook's metadata says ``{"meowgent_nb": {"real_model": true}}``.

    A notebook that cannot be read says nothing here (its collector reports that).

    Raises:
        pytest.UsageError: ``meowgent_nb`` is not an object, or ``real_model`` not true or false.
    """
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError, RecursionError):
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
    _agent_cells(config, items)
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
        return  # a project without our metadata: no marker registered, none added
    if not any(line.split(":")[0].split("(")[0].strip() == "real_model" for line in config.getini("markers")):
        config.addinivalue_line("markers", REAL_MODEL_MARKER)
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
