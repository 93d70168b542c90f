"""What a student of a class on one model server sees (issue 46), in a real browser: JupyterLab's
light theme and Notebook 7's dark one.

Each test starts a local OpenAI-compatible server (werkzeug, on 127.0.0.1, in a thread of the
test) whose first answer is cut after some text, as llama-cpp-python's server cuts the answer it
streams when another request arrives, and whose second answer is held until the test has seen
the cell wait and taken its screenshot. One notebook then walks through:

- a ``%%agent -m openai:NAME`` cell: the cut answer asked again (its line in the cell), the card
  saying ``waiting for the server... 2 s`` while the answer is held, then the answer and the
  footer's ``waited for the server N s``;
- ``%agent policy reload`` after the notebook names a teacher's policy file in ``MEOWGENT_POLICY``:
  the policy's table, each value with its file;
- a call beside a colleague's ``approvals.toml`` (written once the first cell began) under that
  policy, which forbids trusting rules files: a line where the trust panel would be, saying so, no
  **Trust these rules** button, and the card's note saying the policy forbids it (not ``%agent trust``);
- ``%%agent --approve allow``: refused in one line naming the policy.

It saves class-waiting-{light,dark}.png (the cell while it waits), class-retried-{light,dark}.png
(the answered cell), class-policy-{light,dark}.png (the table), class-no-trust-{light,dark}.png
(the rules file's line and the waiting card) and class-refused-{light,dark}.png (the refusal) into
$MEOWGENT_SCREENSHOTS when set, else a tmp dir; docs/screenshots/ keeps them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug import Request, Response
from werkzeug.serving import make_server

from tests.support.browser_notebook import write_notebook
from tests.support.browser_pages import LAYOUT

SCREENSHOTS_ENV = "MEOWGENT_SCREENSHOTS"
MODEL = "qwen-class"
PROMPT = "In one line: what does a list comprehension do?"
ANSWER = "It builds a new list from an iterable in one expression."
CUT = "the server cut the answer (another request took its turn); asking again in 1 s, 2 of 8"
POLICY = """\
[defaults]
model = "openai:qwen-class"
approve = "ask"
tool_timeout = 30

[limits]
approve = "ask"
backends = ["openai", "ollama"]
tool_timeout = 60
allow_rules_on_always_tools = false
trust_rules_files = false
"""
RULES = 'rules = ["delete_file path=** -> allow"]\n'
DELETING = '''
import json, pathlib
from meowgent_nb import ScriptedModel, tool

@tool(approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    pathlib.Path(path).unlink()
    return f"deleted {path}"

pathlib.Path("old.txt").write_text("old")
call = json.dumps({"name": "delete_file", "arguments": {"path": "old.txt"}})
deleting = ScriptedModel([f"<tool_call>{call}</tool_call>", "Done."])
'''
NO_TRUST = "a rule in approvals.toml would allow this; the site's policy forbids trusting the file"
HOLD = 30.0
"""The most seconds the held answer waits for the test (it is released as soon as the screenshot is taken)."""


def chunk(content: str | None = None, finish_reason: str | None = None) -> str:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": MODEL, "choices": [choice]}
    return f"data: {json.dumps(event)}\n\n"


class ClassServer:
    """A model server shared by a class: it cuts its first answer and holds its second until released."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.release = threading.Event()
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @Request.application
    def _app(self, request: Request) -> Response:
        self.requests.append(f"{request.method} {request.path}")
        if request.path != "/v1/chat/completions":
            return Response("{}", status=404, content_type="application/json")
        if len([r for r in self.requests if r.endswith("/v1/chat/completions")]) == 1:
            # Some text, then the stream ends without a finish_reason: another request took its turn.
            return Response(chunk(ANSWER[:5]), content_type="text/event-stream")
        self.release.wait(HOLD)  # queued behind the rest of the class
        words = [ANSWER[:9], ANSWER[9:31], ANSWER[31:]]
        body = "".join(chunk(w) for w in words) + chunk(None, "stop") + "data: [DONE]\n\n"
        return Response(body, content_type="text/event-stream")

    def __enter__(self) -> ClassServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._thread.join(10)


@pytest.fixture
def class_server() -> Iterator[ClassServer]:
    with ClassServer() as server:
        yield server


@pytest.fixture
def policy_file() -> Iterator[Path]:
    """The teacher's policy file, at a short path as a hub image's is (the table shows it on every row)."""
    with tempfile.TemporaryDirectory(prefix="hub-") as folder:
        path = Path(folder) / "policy.toml"
        path.write_text(POLICY)
        yield path


def cells(port: int, policy: Path) -> list[str]:
    setup = (
        "%load_ext meowgent_nb\n"
        "import os\n"
        f'%config AgentMagics.openai_base_url = "http://127.0.0.1:{port}/v1"'
    )
    return [
        setup,
        f"%%agent -m openai:{MODEL}\n{PROMPT}",
        f'os.environ["MEOWGENT_POLICY"] = "{policy}"\n%agent policy reload',
        DELETING.strip(),
        "%%agent --model-object deleting --new\nDelete old.txt.",
        f"%%agent --approve allow -m openai:{MODEL}\n{PROMPT}",
    ]


@pytest.mark.parametrize(
    ("jupyter", "theme", "suffix"),
    [("lab", "JupyterLab Light", "light"), ("notebook7", "JupyterLab Dark", "dark")],
    indirect=["jupyter"],
)
def test_a_student_sees_the_server_s_wait_the_answer_asked_again_and_the_teacher_s_policy(
    jupyter, open_page, class_server, policy_file, tmp_path, theme, suffix
):
    server = jupyter
    screenshots = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    screenshots.mkdir(parents=True, exist_ok=True)
    folder = server.root / f"class_{suffix}"
    folder.mkdir()
    write_notebook(folder / "class.ipynb", cells(class_server.port, policy_file))
    nb = open_page(server, f"class_{suffix}/class.ipynb", theme)
    shown = nb.page.locator("body").get_attribute("data-jp-theme-name")
    nb.check(shown == theme, f"the page shows the theme {shown!r}, not {theme!r}")
    nb.run_all()
    where = str(policy_file)

    # (a) The cut answer asked again; the wait for the held one counted in the cell.
    agent = nb.cell(1)
    waiting = agent.locator(".meowgent-waiting")
    nb.wait_text(waiting, exactly("waiting for the server... 2 s"), "the cell's wait for the server", 60)
    retry = agent.locator(".meowgent-retry").all_inner_texts()
    nb.check(retry == [CUT], f"the cell's retry lines: {retry!r}")
    nb.check(
        ANSWER[:5] not in agent.locator(".meowgent-transcript").inner_text(), "the cut text is still shown"
    )
    nb.check(nb.prompt(1) == "[*]:", "the agent cell should still run while the server holds its answer")
    agent.screenshot(path=str(screenshots / f"class-waiting-{suffix}.png"))
    # A colleague's rules file arrives beside the notebook: the cells from the next one on meet it.
    (folder / "approvals.toml").write_text(RULES)
    class_server.release.set()

    nb.wait_finished(1, "the agent cell (after the held answer)")
    nb.wait_text(agent.locator(".meowgent-text"), exactly(ANSWER), "the answer")
    nb.check(agent.locator(".meowgent-waiting").count() == 0, "the waiting line is left in the finished cell")
    retry = agent.locator(".meowgent-retry").all_inner_texts()
    nb.check(retry == [CUT], f"the finished cell's retry lines: {retry!r}")
    footer = agent.locator(".meowgent-footer").inner_text()
    waited = re.fullmatch(
        r"1 turn · 0 tool calls · waited for the server (\d+\.\d\d) s · context ~\d+ tokens · \d+\.\d\d s",
        footer,
    )
    nb.check(waited is not None and 2.0 <= float(waited[1]) <= HOLD, f"the footer reads {footer!r}")
    chats = [r for r in class_server.requests if r == "POST /v1/chat/completions"]
    nb.check(len(chats) == 2, f"the server was asked {class_server.requests!r}")
    agent.screenshot(path=str(screenshots / f"class-retried-{suffix}.png"))

    # (b) The teacher's policy, as a table.
    nb.wait_finished(2, "the policy cell")
    table = nb.cell(2).locator(".meowgent-policy table")
    nb.wait_visible(table, "the policy's table")
    rows = [
        [c.strip() for c in row.locator("td").all_inner_texts()] for row in table.locator("tbody tr").all()
    ]
    nb.check(
        rows
        == [
            ["[defaults] model", '"openai:qwen-class"', where],
            ["[defaults] approve", '"ask"', where],
            ["[defaults] tool_timeout", "30", where],
            ["[limits] approve", '"ask"', where],
            ["[limits] backends", '["openai", "ollama"]', where],
            ["[limits] tool_timeout", "60", where],
            ["[limits] allow_rules_on_always_tools", "false", where],
            ["[limits] trust_rules_files", "false", where],
        ],
        f"the policy's rows: {rows!r}",
    )
    nb.cell(2).screenshot(path=str(screenshots / f"class-policy-{suffix}.png"))

    # (d) A folder's rules file: no Trust button, a line saying the policy forbids trusting it.
    trusting = nb.cell(4)
    deny = trusting.get_by_role("button", name="Deny", exact=True)
    nb.wait_visible(deny, "the Deny button of the delete_file call")
    forbidden = trusting.locator(".meowgent-trust-forbidden")
    told = nb.wait_text(forbidden, "The rules file", "the line about the rules file").strip()
    nb.check(
        told
        == f"The rules file {(folder / 'approvals.toml').resolve()} has 1 allow rule, ignored (its ask and"
        f" deny rules apply): the policy {where} ([limits] trust_rules_files = false) forbids trusting rules"
        " files: their allow rules decide nothing here.",
        f"the rules file's line reads {told!r}",
    )
    nb.check(
        trusting.get_by_role("button", name="Trust these rules").count() == 0, "a Trust button is offered"
    )
    path = forbidden.locator("code").all_inner_texts()
    nb.check(path == [str((folder / "approvals.toml").resolve())], f"the line's code: {path!r}")
    shown = forbidden.evaluate(LAYOUT)
    nb.check(shown["fits"] and shown["spacing"] <= 1.6, f"the line about the rules file is laid out: {shown}")
    note = trusting.locator(".meowgent-card .meowgent-server-asked").all_inner_texts()
    nb.check(note == [NO_TRUST], f"the waiting card's notes: {note!r}")
    trusting.screenshot(path=str(screenshots / f"class-no-trust-{suffix}.png"))
    deny.click()
    nb.wait_finished(4, "the rules file's cell (after Deny)")

    # (c) A looser setting refused, in one line naming the policy.
    refused = nb.cell(5).locator(".jp-OutputArea")
    text = nb.wait_text(refused, "PolicyError", "the refusal of --approve allow")
    nb.check(
        text.strip()
        == f'PolicyError: --approve allow is refused by the policy {where} ([limits] approve = "ask"):'
        " approval may not be looser than 'ask'; use one of ask, every, deny.\n(the full traceback: %agent"
        " traceback)",
        f"the refusal reads {text!r}",
    )
    chats = [r for r in class_server.requests if r == "POST /v1/chat/completions"]
    nb.check(len(chats) == 2, f"the refused cell asked the server: {class_server.requests!r}")
    nb.cell(5).screenshot(path=str(screenshots / f"class-refused-{suffix}.png"))


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(f"^{re.escape(text)}$")
