"""``pytest --nbval --meowgent-trace FILE``: the kernels nbval starts write their ``%%agent`` runs'
spans to FILE as OTLP JSON lines. A real pytest in a subprocess, on a copy of a user's notebook
(tests/user_project/scripted_agent.ipynb), compared strictly: tracing changes no output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "tests" / "user_project" / "scripted_agent.ipynb"


def spans_in(path: Path) -> list[dict[str, Any]]:
    return [
        span
        for line in path.read_text().splitlines()
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def test_nbval_with_meowgent_trace_writes_the_agent_cells_spans(tmp_path):
    shutil.copy(NOTEBOOK, tmp_path)
    (tmp_path / "trace.jsonl").write_text("left from an earlier run\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEOWGENT_", "OTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--meowgent-trace", "trace.jsonl"]
    done = subprocess.run(
        [sys.executable, *args, NOTEBOOK.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("3 passed in ")  # every output as saved
    spans = spans_in(tmp_path / "trace.jsonl")
    assert Counter(span["name"] for span in spans) == {
        "invoke_agent meowgent": 1,
        "chat scripted": 2,
        "execute_tool add": 1,
    }
    [run] = [span for span in spans if span["name"] == "invoke_agent meowgent"]
    assert "parentSpanId" not in run
    assert {span["traceId"] for span in spans} == {run["traceId"]}
    assert [span.get("parentSpanId") for span in spans if span is not run] == [run["spanId"]] * 3
    [call] = [span for span in spans if span["name"] == "execute_tool add"]
    assert {k: v for k, v in attributes(call).items() if k != "meowgent.tool.run_seconds"} == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.type": "function",
        "meowgent.tool.result_kind": "ok",
    }
    found = attributes(run)
    assert (found["gen_ai.request.model"], found["meowgent.turns"], found["meowgent.stopped"]) == (
        "scripted",
        "2",
        "answer",
    )


def test_load_ext_with_meowgent_trace_file_traces_to_it_and_status_says_where(ip, tmp_path, monkeypatch):
    from IPython.utils.capture import capture_output

    from meowgent_nb import ScriptedModel

    target = tmp_path / "kernel.jsonl"
    monkeypatch.setenv("MEOWGENT_TRACE_FILE", str(target))
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    ip.run_line_magic("unload_ext", "meowgent_nb")
    ip.run_line_magic("load_ext", "meowgent_nb")
    ip.user_ns["model"] = ScriptedModel(["Hello."])
    with capture_output() as out:
        ip.run_line_magic("agent", "trace status")
        ip.run_cell_magic("agent", "--model-object model", "Hi")
    assert out.stdout.splitlines()[0] == (
        f"Tracing is on: each %%agent run's spans are written to {target} as OTLP JSON lines, without"
        " content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true adds it, masked)."
    )
    assert [span["name"] for span in spans_in(target)] == ["chat scripted", "invoke_agent meowgent"]
    with capture_output() as out:
        ip.run_line_magic("agent", "trace off")
    assert out.stdout.startswith("Tracing is off;")
    assert ip.meowgent.trace_file is None
