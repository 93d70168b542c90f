"""A recorded notebook tool whose value holds images: the cassette keeps the text the model read and
the images (as an MCP result's are kept), and replay shows the same card without running the tool."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

from IPython.utils.capture import capture_output
from PIL import Image

from meowgent_nb import ScriptedModel, tool
from meowgent_nb.tools.media import McpImage, McpText

RAN: list[str] = []


@tool(record=True)
def chart(title: str) -> list:
    """Draw a chart."""
    RAN.append(title)
    return [f"Chart: {title}", Image.new("RGB", (2, 2), "blue")]


def blue_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "blue").save(buffer, format="PNG")
    return buffer.getvalue()


def cell(ip, line: str) -> dict:
    with capture_output() as captured:
        ip.run_cell_magic("agent", line, "Draw sales")
    return captured.outputs[-1].data


def test_a_recorded_tools_image_replays_with_the_same_text_and_card(ip, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("MEOWGENT_CASSETTE", "MEOWGENT_CASSETTE_MODE", "MEOWGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    call = '<tool_call>{"name": "chart", "arguments": {"title": "sales"}}</tool_call>'
    ip.user_ns.update(chart=chart, scripted=ScriptedModel([call, "A blue chart."]))
    ip.run_line_magic("agent", "reset")
    RAN.clear()
    recorded = cell(ip, "--model-object scripted --new --record c.cassette.json")
    assert RAN == ["sales"]
    encoded = base64.b64encode(blue_png()).decode("ascii")
    lines = Path("c.cassette.json").read_text().splitlines()
    entry = next(
        json.loads("\n".join(lines[i : i + 3])) for i, t in enumerate(lines) if t.startswith('{"tool"')
    )
    assert entry["result"] == {
        "kind": "ok",
        "output": "Chart: sales\n[image: image/png]",
        "value": {
            "text": "Chart: sales\n[image: image/png]",
            "media": [{"image": encoded, "mime_type": "image/png"}],
        },
    }
    ip.user_ns["scripted"] = ScriptedModel([])  # replay asks no model
    replayed = cell(ip, "--model-object scripted --new --replay c.cassette.json")
    assert RAN == ["sales"]
    assert (
        replayed["text/plain"]
        == recorded["text/plain"]
        == ("[tool] chart(title='sales') -> done\n  Chart: sales\n  [image: image/png]\nA blue chart.")
    )
    shown = [re.findall(r"<img [^>]*>", output["text/html"]) for output in (recorded, replayed)]
    assert (
        shown[0] == shown[1]
        and len(shown[0]) == 1
        and f'src="data:image/png;base64,{encoded}"' in shown[0][0]
    )
    result = ip.magics_manager.registry["AgentMagics"].last_result.tool_results[0]
    assert result.value == McpText("Chart: sales\n[image: image/png]")
    assert result.value.media == (McpImage(blue_png(), "image/png"),)
