"""The suite's scheduler (tests/support/real_model_schedule.py): under ``--dist loadfile`` every file with a
real-model test goes to one worker as one unit, handed out first, and the browser tests to the
other as one unit, second; the other files stay one unit each, in pytest-xdist's own order."""

from __future__ import annotations

from types import SimpleNamespace

from tests.support.real_model_schedule import (
    BROWSER_UNIT,
    REAL_MODEL_UNIT,
    RealModelFirst,
    files_path,
    write_real_model_files,
)

COLLECTION = [
    "tests/a.py::test_one",
    "tests/a.py::test_two",
    "tests/a.py::test_three",
    "tests/live.py::test_live",
    "tests/b.py::test_one",
    "tests/b.py::test_two",
    "notebooks/05_real_model.ipynb::Cell 0",
    "tests/c.py::test_one",
    "tests/notebook/browser/test_x.py::test_one",
    "tests/notebook/browser/test_x.py::test_two",
    "tests/notebook/browser/test_y.py::test_one",
]
BROWSER = COLLECTION[-3:]


class Worker:
    """What the scheduler sees of a pytest-xdist worker: its test run and the tests it is sent."""

    def __init__(self, run: str, name: str) -> None:
        self.workerinput = {"testrunuid": run}
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[str] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += [COLLECTION[i] for i in indices]

    def shutdown(self) -> None:
        self.shutting_down = True


class Options(SimpleNamespace):
    """What the scheduler reads of pytest's options: ``-n 2`` and xdist's default order."""

    def getvalue(self, name: str) -> object:
        return {"tx": ["2*popen"]}[name]


def scheduled(run: str) -> tuple[list[str], list[str]]:
    scheduler = RealModelFirst(Options(option=SimpleNamespace(loadscopereorder=True)))
    workers = [Worker(run, "gw0"), Worker(run, "gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, COLLECTION)
    scheduler.schedule()
    return workers[0].sent, workers[1].sent


def test_the_real_model_files_run_on_one_worker_first():
    run = "test-schedule-listed"
    write_real_model_files(run, ["tests/live.py", "notebooks/05_real_model.ipynb", "tests/live.py"])
    assert files_path(run).read_text() == "notebooks/05_real_model.ipynb\ntests/live.py\n"
    first, second = scheduled(run)
    # The real-model unit first, whole, to one worker, the browser unit whole to the other; every
    # other file is one unit (the largest first: xdist's order), and a worker with fewer than two
    # tests waiting gets the next.
    assert first == [
        "tests/live.py::test_live",
        "notebooks/05_real_model.ipynb::Cell 0",
        "tests/a.py::test_one",
        "tests/a.py::test_two",
        "tests/a.py::test_three",
    ]
    assert second == BROWSER
    assert not files_path(run).exists()  # read once, then removed


def test_without_a_list_every_file_is_its_own_unit():
    first, second = scheduled("test-schedule-unlisted")
    # pytest-xdist's own loadfile but for the browser unit, first: the two real-model files are
    # units of their own, the larger handed out first.
    assert first == BROWSER
    assert second == ["tests/a.py::test_one", "tests/a.py::test_two", "tests/a.py::test_three"]
    assert REAL_MODEL_UNIT not in first + second and BROWSER_UNIT not in first + second
