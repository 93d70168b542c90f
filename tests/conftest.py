"""Shared test settings: no test reaches a real model server by accident, none takes long, and
none reads or writes the person's own config (the rules files they trusted)."""

from __future__ import annotations

import atexit
import copy
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import meowgent_nb.models

# The trust store (meowgent_nb.agent.rules.trust) of this process and of every kernel, server and
# subprocess the tests start (they inherit the environment): a fresh folder, never the real one.
_CONFIG = tempfile.mkdtemp(prefix="meowgent-test-config-")
os.environ["MEOWGENT_CONFIG_DIR"] = _CONFIG
os.environ.pop("MEOWGENT_TRUST_RULES", None)  # what a test trusts, it says
atexit.register(shutil.rmtree, _CONFIG, ignore_errors=True)


BUDGET = float(os.environ.get("MEOWGENT_TEST_BUDGET", "60"))
"""Seconds a test may take (its setup, call or teardown): a guard against one slow test slowing
every run, not a timing assertion (none takes half of it on a quiet machine). It fails the test
afterwards, whatever the test did with the time (pytest-timeout's alarm can be caught by the
IPython shell a test runs cells in), so the run goes on and names it.

On a machine busy with other work every test slows with it (a real-model test took 77 s beside two
engineers' model runs, 14 s quiet), so the budget grows with the load beyond one runnable process
per core (`budget`): a busy machine is not a slow test, and a 676-second test still fails."""


def budget() -> float:
    """`BUDGET` times the 1-minute load average per core, when that is over 1 (the suite's own two
    workers on two cores are a load of 2: no more than the budget)."""
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        load = 1.0
    return BUDGET * max(1.0, load)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    report = (yield).get_result()
    waited = item.stash.get(_WAITED, 0.0) if report.when == "setup" else 0.0
    allowed = budget() if report.passed and report.duration - waited > BUDGET else BUDGET
    if report.passed and report.duration - waited > allowed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} took {report.duration:.0f} s in its {report.when}, over the {allowed:.0f} s a test"
            " may take: make it cheaper (a smaller window, fewer turns, a fixture shared by the module)."
            " python benchmarks/suite_time.py shows where the suite's time goes."
        )
    return report


_WAITED = pytest.StashKey[float]()


_DIST_FOLDER = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's first process (pytest-xdist's controller, or the only one) makes the folder the
    wheel's background build goes to (tests/support/dist.py); its workers inherit the variable."""
    from tests.support.dist import DIST_DIR

    if os.environ.get(DIST_DIR) is None:
        os.environ[DIST_DIR] = tempfile.mkdtemp(prefix="meowgent-dist-")
        config.stash[_DIST_FOLDER] = Path(os.environ[DIST_DIR])


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once collected: the sdist, wheels and the wheel's environment start building in the
    background if the run holds their tests (one process of the run starts them)."""
    from tests.support.dist import DIST_TESTS, WHEEL_TESTS, run_folder, start_preparing

    folder = run_folder()
    files = {item.nodeid.split("::")[0] for item in session.items}
    if folder is not None and files & set(DIST_TESTS):
        start_preparing(folder, venv=WHEEL_TESTS in files)


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_DIST_FOLDER, None)
    if folder is not None:
        from tests.support.dist import DIST_DIR, stop_preparing

        stop_preparing(folder)
        os.environ.pop(DIST_DIR, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, list the files that hold real-model tests for the scheduler."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is not None and hasattr(config, "workerinput"):
        from tests.support.real_model_schedule import write_real_model_files

        write_real_model_files(
            run, (item.nodeid.split("::")[0] for item in items if item.get_closest_marker("real_model"))
        )


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` with the real-model files on one worker, first (tests/support/real_model_schedule.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.support.real_model_schedule import RealModelFirst

    return RealModelFirst(config, log)


@pytest.fixture(autouse=True)
def _one_real_model_at_a_time(request: pytest.FixtureRequest):
    """Under pytest-xdist, a real-model test waits for the other worker's to end (not counted in
    its budget): two llama.cpp models share the memory bandwidth, and each took 2-3x as long.
    With ``--dist loadfile`` they all run on one worker anyway (`pytest_xdist_make_scheduler`);
    this guards runs scheduled otherwise."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None or request.node.get_closest_marker("real_model") is None:
        yield
        return
    import fcntl

    with (Path(tempfile.gettempdir()) / f"meowgent-real-model-{run}.lock").open("a") as lock:
        started = time.perf_counter()
        fcntl.flock(lock, fcntl.LOCK_EX)
        request.node.stash[_WAITED] = time.perf_counter() - started
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _no_model_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch `ALLOW_MODEL_REQUESTS` off; a test talking to a local test server turns it back on."""
    monkeypatch.setattr(meowgent_nb.models, "ALLOW_MODEL_REQUESTS", False)


@pytest.fixture
def ip():
    """A real IPython shell with the extension loaded; names a test adds are removed after it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    start_ipython()  # once per process; later calls return None
    shell = get_ipython()
    before = set(shell.user_ns)
    # `%config AgentMagics.x = ...` stays in the shell's config, which the next test's magics read.
    configured = {
        name: copy.deepcopy(shell.config[name]) for name in list(shell.config) if name.endswith("Magics")
    }
    shell.run_line_magic("load_ext", "meowgent_nb")
    yield shell
    shell.run_line_magic("unload_ext", "meowgent_nb")
    for name in set(shell.user_ns) - before:
        del shell.user_ns[name]
    for name in [name for name in shell.config if name.endswith("Magics")]:
        if name in configured:
            shell.config[name] = configured[name]
        else:
            del shell.config[name]
