"""A class on one model server: six real kernels ask one llama-cpp-python server at the same moment.

Each kernel is a real ipykernel with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` in its environment,
as a hub's spawner sets them, and runs one ``%%agent -m openai:NAME`` cell with a sum of its own
(temperature 0) at the same moment as the others (`benchmarks/classroom.py`, which measures the
same for 1, 6, 12 and 30 kernels, and queued). The server runs with its defaults, as a teacher
starts it (``interrupt_requests`` on: each new request cuts the answer it is streaming: without
asking again, one or two students of six got an answer; asking again after a cut, every one does).
Marked ``real_model``; skipped where llama-cpp-python's server
extra or the model's part packages are missing.
"""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks.classroom import KEY, Answer, ask_at_once, question, start_kernels, stop_kernels
from meowgent_nb.models.gguf import missing_packages
from tests.support.llama_server import free_port, llama_server

HAVE_SERVER = all(
    importlib.util.find_spec(name) is not None
    for name in ("llama_cpp", "fastapi", "sse_starlette", "uvicorn")
)
HAVE_OPENAI = importlib.util.find_spec("openai") is not None
STUDENTS = 6

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not (HAVE_SERVER and HAVE_OPENAI and not missing_packages()),
        reason='needs pip install "meowgent-nb[test,local]" (llama-cpp-python[server], openai, the model)',
    ),
]


@pytest.fixture(scope="module")
def port() -> int:
    """The one port both servers take in turn, so the kernels' ``OPENAI_BASE_URL`` stays right."""
    return free_port()


@pytest.fixture(scope="module")
def kernels(port, tmp_path_factory):
    """Six kernels started at once, the server's address in their environment, for the module."""
    started = start_kernels(STUDENTS, f"http://127.0.0.1:{port}/v1", str(tmp_path_factory.mktemp("class")))
    yield started
    stop_kernels(started)


@pytest.fixture(scope="module")
def server(request, port, tmp_path_factory):
    """The server, started the way the test's parameter names, for the tests of that way."""
    log = tmp_path_factory.mktemp("classroom-server") / "server.log"
    with llama_server(*request.param, key=KEY, port=port, log=log) as base_url:
        yield base_url


def expected() -> list[tuple[None, str, str]]:
    return [(None, question(student)[1], question(student)[1]) for student in range(STUDENTS)]


def outcome(answers: list[Answer]) -> list[tuple[str | None, str, str]]:
    """Each student's error (None), the run's answer, and the last line the cell showed (lines
    about asking the server again come before it)."""
    return [
        (answer.error, answer.text.strip(), (answer.shown.strip().splitlines() or [""])[-1])
        for answer in answers
    ]


@pytest.mark.parametrize(
    "server",
    [
        # With its defaults, as a teacher starts it. Queued (--interrupt_requests False) every
        # student is served without asking again; benchmarks/classroom.py measures that way too.
        pytest.param((), id="defaults"),
    ],
    indirect=True,
)
def test_six_students_asking_at_once_all_get_their_answer(server, kernels):
    answers = ask_at_once(kernels)
    assert outcome(answers) == expected()
