"""README.md's "A 60-second tour", run as a newcomer runs it: its code blocks, in order, in a real kernel.
(The docs site's pages are run by tests/test_docs_pages.py, with the same mechanism: tests/support/doc_blocks.py.)

The blocks are read from the README itself, so the tour cannot drift from what is tested. The
deterministic tests replay ``tests/readme_tour.cassette.json`` (the deletion approved) and
``tests/readme_tour_denied.cassette.json`` (denied: a cassette records each approval decision, and
a replay must decide as recorded), recorded from the embedded model with the README's exact cells
(the kernel reads ``MEOWGENT_CASSETTE``, as a user's would); the ``real_model`` test runs the same
cells live. To record the cassettes again (after a change to the system prompt, the tools' XML,
the embedded models' protocol or the tour), with the embedded model installed::

    python -m tests.test_readme

The "same loop without the magics" block names a model, ``Agent("auto", ...)``: Ollama's
qwen2.5:0.5b if a server answers, else the embedded one. The deterministic test runs it against a local
Ollama double (pytest-httpserver speaking Ollama's wire format), so the README's exact code goes
through the real ``ollama`` client; the ``real_model`` test runs it on the embedded model.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import kernel_driver
from tests.support.doc_blocks import run_cells, section_blocks, start_kernel
from tests.support.kernel_driver import Kernel, Run
from tests.support.ollama_wire import FINAL, ndjson, part

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CASSETTE = Path(__file__).with_name("readme_tour.cassette.json")
DENIED = Path(__file__).with_name("readme_tour_denied.cassette.json")
SECTION = "## A 60-second tour"

# What the tour is made of, in order: (the fence's language, how the block begins). A README edit
# that adds, drops or reorders a block fails `tour()` with this list, so no block goes untested.
SHAPE = (
    ("python", "%load_ext meowgent_nb"),
    ("", "%tools"),
    ("xml", "<tools>"),
    ("", "%%agent"),
    ("", "%%agent"),
    ("python", "from meowgent_nb import Agent"),
)


@dataclass(frozen=True)
class Tour:
    """The tour's blocks by role."""

    setup: str
    tools: str
    tools_xml: str
    agent_cells: tuple[str, ...]
    loop: str

    @property
    def cells(self) -> tuple[str, ...]:
        """The notebook cells of the tour, in order (the XML is %tools' output, not a cell)."""
        return (self.setup, self.tools, *self.agent_cells)


def tour(text: str | None = None) -> Tour:
    """The tour of ``text`` (README.md by default), checked against `SHAPE`."""
    blocks = section_blocks(README.read_text() if text is None else text, SECTION)
    found = [(b.language, b.code.split("\n", 1)[0]) for b in blocks]
    fits = len(found) == len(SHAPE) and all(
        language == want and first.startswith(begin) for (language, first), (want, begin) in zip(found, SHAPE)
    )
    if not fits:
        listed = "\n".join(f"  line {b.line}: ```{b.language} {b.code.splitlines()[0]!r}" for b in blocks)
        raise AssertionError(
            f"The tour in README.md changed shape; tests/test_readme.py runs these blocks, in order:\n"
            f"  {list(SHAPE)}\nbut the section {SECTION!r} now has:\n{listed}\n"
            "Update SHAPE and the tests to run every block of the new tour."
        )
    return Tour(
        setup=blocks[0].code,
        tools=blocks[1].code,
        tools_xml=blocks[2].code,
        agent_cells=(blocks[3].code, blocks[4].code),
        loop=blocks[5].code,
    )


def transcript(run: Run) -> str:
    """The text/plain of an agent cell's transcript as it was last shown."""
    texts = [c["data"]["text/plain"] for c in run.of_type("display_data", "update_display_data")]
    assert texts, run.messages
    return texts[-1]


# --- the README's structure ------------------------------------------------------------------


def test_the_tour_is_the_blocks_this_test_runs():
    readme = tour()
    assert readme.agent_cells == ("%%agent\nWhat is the weather in {city}?", "%%agent\nNow delete old.txt.")
    assert "city = " in readme.setup and 'Path("old.txt").write_text(' in readme.setup


def test_a_changed_tour_fails_naming_its_blocks():
    text = f"{SECTION}\n\n```python\n%load_ext meowgent_nb\n```\n\n```\n%%agent\nHi\n```\n\n## Next\n"
    with pytest.raises(AssertionError) as error:
        tour(text)
    assert str(error.value) == (
        "The tour in README.md changed shape; tests/test_readme.py runs these blocks, in order:\n"
        "  [('python', '%load_ext meowgent_nb'), ('', '%tools'), ('xml', '<tools>'), ('', '%%agent'),"
        " ('', '%%agent'), ('python', 'from meowgent_nb import Agent')]\n"
        "but the section '## A 60-second tour' now has:\n"
        "  line 3: ```python '%load_ext meowgent_nb'\n"
        "  line 7: ``` '%%agent'\n"
        "Update SHAPE and the tests to run every block of the new tour."
    )


# --- the tour, replayed from its cassette ----------------------------------------------------

WEATHER = "[tool] get_weather(city='Paris') -> done\n  Paris: 21 degrees celsius\n"


@pytest.fixture(scope="module")
def readme() -> Tour:
    return tour()


def test_the_tour_approved_calls_both_tools_and_deletes_the_file(readme, tmp_path, monkeypatch):
    kernel = start_kernel(
        tmp_path,
        monkeypatch,
        MEOWGENT_CASSETTE=str(CASSETTE),
        MEOWGENT_CASSETTE_MODE="replay",
        MEOWGENT_APPROVE="allow",
    )
    try:
        setup, tools, weather, delete = run_cells(kernel, readme.cells)
        # The setup cell shows nothing (it printed 13, write_text's count, when it ended with that call).
        assert (setup.stdout, setup.of_type("execute_result")) == ("", [])
        assert tools.of_type("execute_result")[0]["data"]["text/plain"].endswith("\n" + readme.tools_xml)
        assert transcript(weather).startswith(WEATHER)
        assert transcript(delete).startswith(
            "[tool] delete_file(path='old.txt') -> done (approved by policy: approve='allow')\n  Deleted old.txt.\n"
        )
        assert not (tmp_path / "old.txt").exists()
        asked = kernel.ok(
            "for m in get_ipython().magics_manager.registry['AgentMagics'].messages:\n"
            "    if m['role'] == 'user' and not m['content'].startswith('<tool_response'): print(m['content'])"
        )
        assert asked.stdout == "What is the weather in Paris?\nNow delete old.txt.\n"  # {city} was filled
    finally:
        kernel.shutdown()


def test_the_tour_denied_keeps_the_file(readme, tmp_path, monkeypatch):
    kernel = start_kernel(
        tmp_path,
        monkeypatch,
        MEOWGENT_CASSETTE=str(DENIED),
        MEOWGENT_CASSETTE_MODE="replay",
        MEOWGENT_APPROVE="deny",
    )
    try:
        *_, delete = run_cells(kernel, readme.cells)
        assert transcript(delete).startswith(
            "[tool] delete_file(path='old.txt') -> denied (by policy: approve='deny')\n"
            "  Denied: the notebook's approval setting (approve='deny') denies calls that need approval\n"
        )
        assert (tmp_path / "old.txt").read_text() == "an old draft\n"
    finally:
        kernel.shutdown()


def test_the_loop_without_magics_runs_on_the_ollama_it_finds(readme, tmp_path, monkeypatch, httpserver):
    # A bare name resolves to Ollama when its server answers: here a local double of it.
    httpserver.expect_request("/api/version").respond_with_json({"version": "0.12.0"})
    call = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
    for answer in (f"<tool_call>{call}</tool_call>", "It is 21 degrees in Paris."):
        httpserver.expect_oneshot_request("/api/chat", method="POST").respond_with_data(
            ndjson(part(answer), FINAL), content_type="application/x-ndjson"
        )
    host = f"http://{httpserver.host}:{httpserver.port}"
    # A GGUF that is not there: were the double not found, the cell fails instead of loading the embedded model.
    kernel = start_kernel(tmp_path, monkeypatch, OLLAMA_HOST=host, MEOWGENT_GGUF=str(tmp_path / "none.gguf"))
    try:
        run_cells(kernel, (readme.setup,))
        assert kernel.ok(readme.loop).stdout == "It is 21 degrees in Paris.\n['Paris: 21 degrees celsius']\n"
    finally:
        kernel.shutdown()
    chats = [json.loads(request.get_data()) for request, _ in httpserver.log if request.path == "/api/chat"]
    assert [chat["model"] for chat in chats] == ["qwen2.5:0.5b", "qwen2.5:0.5b"]
    assert chats[0]["messages"][-1] == {"role": "user", "content": "How warm is it in Paris?"}
    assert '<tool name="get_weather">' in chats[0]["messages"][0]["content"]
    assert "delete_file" not in chats[0]["messages"][0]["content"]


# --- the tour, live on the embedded model ----------------------------------------------------


def _local_model_missing() -> str | None:
    from meowgent_nb.models.resolve import local_model_problem

    return local_model_problem()


NEEDS_MODEL = pytest.mark.skipif(
    _local_model_missing() is not None, reason="the local model is not installed"
)


@pytest.fixture(scope="module")
def live_tour(readme: Tour, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kernel, Path]]:
    """One kernel for the live tour's tests, its setup and %tools cells run, and its folder.

    OLLAMA_HOST at a closed port: the default name resolves to the embedded model, as on a machine
    without Ollama, even where one runs. The tour's two parts (the cells, the loop) are two tests
    of this one kernel, each well within a test's time however busy the machine is.
    """
    folder = tmp_path_factory.mktemp("live_tour")
    with pytest.MonkeyPatch.context() as patch:
        # Loading the model sends no message for a while; on a busy machine, longer than a minute.
        patch.setattr(kernel_driver, "TIMEOUT", 300)
        kernel = start_kernel(folder, patch, MEOWGENT_APPROVE="allow", OLLAMA_HOST="127.0.0.1:9")
        try:
            run_cells(kernel, readme.cells[:2])
            yield kernel, folder
        finally:
            kernel.shutdown()


@pytest.mark.real_model
@NEEDS_MODEL
def test_the_tour_live_on_the_embedded_model(readme, live_tour):
    kernel, folder = live_tour
    weather, delete = run_cells(kernel, readme.agent_cells)
    assert transcript(weather).startswith(WEATHER), transcript(weather)
    assert transcript(delete).startswith(
        "[tool] delete_file(path='old.txt') -> done (approved by policy: approve='allow')\n  Deleted old.txt.\n"
    ), transcript(delete)
    assert not (folder / "old.txt").exists()


@pytest.mark.real_model
@NEEDS_MODEL
def test_the_tours_loop_without_the_magics_live_on_the_embedded_model(readme, live_tour):
    kernel, _ = live_tour
    out = kernel.ok(readme.loop).stdout
    assert out.endswith("\n['Paris: 21 degrees celsius']\n"), out


# --- recording the cassette ------------------------------------------------------------------


def record() -> None:
    """Record `CASSETTE` (the tour approved) and `DENIED` (denied) from the embedded model."""
    os.environ.pop("MEOWGENT_MODEL", None)
    os.environ["OLLAMA_HOST"] = "127.0.0.1:9"  # the embedded model, not a local Ollama
    os.environ["MEOWGENT_CASSETTE_MODE"] = "record"
    readme = tour()
    for cassette, approve in ((CASSETTE, "allow"), (DENIED, "deny")):
        os.environ["MEOWGENT_CASSETTE"] = str(cassette)
        os.environ["MEOWGENT_APPROVE"] = approve
        with tempfile.TemporaryDirectory() as folder:
            kernel = Kernel(folder)
            try:
                for run in run_cells(kernel, readme.cells)[2:]:
                    print(re.sub(r"\n+", "\n", transcript(run)), file=sys.stderr)
            finally:
                kernel.shutdown()
        print(f"recorded {cassette}", file=sys.stderr)


if __name__ == "__main__":
    record()
