"""What a served notebook returns besides text, read by the SDK's real client: images (PIL,
IPython, bytes by their first bytes), audio, embedded resources, lists mixing them, prompts with
images and resources, completions of prompt arguments and template placeholders, and
subscriptions told when a resource changes."""

from __future__ import annotations

import asyncio
import base64
import enum
import io
from typing import Any, Literal

import httpx2
import mcp_types as types
import pytest
from IPython.display import Audio
from IPython.display import Image as DisplayImage
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

from meowgent_nb import tool
from meowgent_nb.mcp import ResourceContent, ToolServer, prompt, resource
from meowgent_nb.mcp.content.served import media_type

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
NOTES = {"groceries": "milk", "garden": "roses"}


@resource("notes://{name}", complete={"name": lambda typed: [n for n in NOTES if n.startswith(typed)]})
def note(name: str) -> str:
    return NOTES[name]


@resource("notes://index")
def index() -> str:
    return ", ".join(sorted(NOTES))


@tool
def pil() -> Image.Image:
    """A PIL image."""
    return Image.new("RGB", (2, 1), "blue")


@tool
def shown() -> Any:
    """IPython's Image."""
    return DisplayImage(data=PNG)


@tool
def sound() -> Any:
    """IPython's Audio."""
    return Audio(data=[0.0, 0.5, -0.5], rate=8000)


@tool
def raw(kind: str) -> bytes:
    """Bytes of a kind."""
    return {"png": PNG, "wav": WAV, "other": b"\x00\x01\x02"}[kind]


@tool
def mixed() -> list:
    """Text, an image, a resource and a number."""
    return ["Here:", PNG, note.embed(name="garden"), 7]


@tool
def blob() -> ResourceContent:
    """Bytes of a type no magic number tells, as a resource."""
    return ResourceContent("data://blob", b"\x00\x01", "application/x-thing")


@tool
def plain() -> list:
    """A list without media stays one JSON text."""
    return [1, "two"]


class Tone(enum.Enum):
    KIND = "kind"
    KEEN = "keen"
    HARSH = "harsh"


@prompt(complete={"topic": ["gardens", "groceries", "games"]})
def review(topic: str, tone: Tone = Tone.KIND, length: Literal["short", "long"] = "short") -> list:
    """Review a topic, with a picture."""
    return [
        {"role": "user", "content": DisplayImage(data=PNG)},
        {"role": "assistant", "content": note.embed(name="groceries")},
        {"role": "user", "content": f"Review {topic}"},
    ]


@pytest.fixture(scope="module")
def served():
    server = ToolServer(
        [pil, shown, sound, raw, mixed, blob, plain], resources=[note, index], prompts=[review], watch=0.1
    )
    yield server
    server.stop()


async def _session(server: ToolServer, work: Any, **options: Any) -> Any:
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {server.token}"}, timeout=120
    ) as http:  # a loaded machine is slow
        async with Client(
            streamable_http_client(server.url, http_client=http), cache=None, mode="legacy", **options
        ) as mcp:
            return await work(mcp)


def dumped(result: Any) -> list[dict[str, Any]]:
    return [c.model_dump(by_alias=True, exclude_none=True) for c in result.content]


def test_images_audio_and_resources_are_served_as_their_content(served):
    async def work(mcp: Any) -> dict[str, Any]:
        names = ["pil", "shown", "sound", "mixed", "blob", "plain"]
        found = {name: await mcp.call_tool(name, {}) for name in names}
        for kind in ("png", "wav", "other"):
            found[kind] = await mcp.call_tool("raw", {"kind": kind})
        return found

    found = asyncio.run(_session(served, work))
    buffer = io.BytesIO()
    Image.new("RGB", (2, 1), "blue").save(buffer, format="PNG")
    assert dumped(found["pil"]) == [
        {"type": "image", "data": base64.b64encode(buffer.getvalue()).decode(), "mimeType": "image/png"}
    ]
    assert dumped(found["shown"]) == [
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    ]
    audio = dumped(found["sound"])[0]
    assert (audio["type"], audio["mimeType"], base64.b64decode(audio["data"])[:4]) == (
        "audio",
        "audio/wav",
        b"RIFF",
    )
    assert dumped(found["png"]) == [
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    ]
    assert dumped(found["wav"]) == [
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}
    ]
    assert dumped(found["other"]) == [{"type": "text", "text": "[bytes: 3 bytes]"}]
    assert dumped(found["mixed"]) == [
        {"type": "text", "text": "Here:"},
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {"uri": "notes://garden", "mimeType": "text/plain", "text": "roses"},
        },
        {"type": "text", "text": "7"},
    ]
    assert dumped(found["blob"]) == [
        {
            "type": "resource",
            "resource": {"uri": "data://blob", "mimeType": "application/x-thing", "blob": "AAE="},
        }
    ]
    assert dumped(found["plain"]) == [{"type": "text", "text": '[1, "two"]'}]


@pytest.mark.parametrize(
    ("start", "kind"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (WAV, "audio/wav"),
        (b"ID3\x04rest", "audio/mpeg"),
        (b"OggS\x00rest", "audio/ogg"),
        (b"fLaC\x00rest", "audio/flac"),
        (b"RIFF\x00\x00\x00\x00AVI LIST", None),
        (b"%PDF-1.7", None),
        (b"", None),
    ],
)
def test_the_type_of_bytes_is_told_by_their_first_bytes_only(start, kind):
    assert media_type(start) == kind


def test_prompts_hold_images_and_resources_and_arguments_complete(served):
    async def work(mcp: Any) -> Any:
        got = await mcp.get_prompt("review", {"topic": "gardens"})
        ref = types.PromptReference(type="ref/prompt", name="review")
        template = types.ResourceTemplateReference(type="ref/resource", uri="notes://{name}")
        completed = [
            (await mcp.complete(ref, {"name": "topic", "value": "g"})).completion,
            (await mcp.complete(ref, {"name": "topic", "value": "GR"})).completion,
            (await mcp.complete(ref, {"name": "tone", "value": "k"})).completion,
            (await mcp.complete(ref, {"name": "length", "value": ""})).completion,
            (await mcp.complete(ref, {"name": "nothing", "value": ""})).completion,
            (await mcp.complete(template, {"name": "name", "value": "ga"})).completion,
            (
                await mcp.complete(
                    types.PromptReference(type="ref/prompt", name="absent"), {"name": "x", "value": ""}
                )
            ).completion,
        ]
        return got, completed

    got, completed = asyncio.run(_session(served, work))
    assert [(m.role, m.content.model_dump(by_alias=True, exclude_none=True)) for m in got.messages] == [
        ("user", {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}),
        (
            "assistant",
            {
                "type": "resource",
                "resource": {"uri": "notes://groceries", "mimeType": "text/plain", "text": "milk"},
            },
        ),
        ("user", {"type": "text", "text": "Review gardens"}),
    ]
    assert [(c.values, c.total, c.has_more) for c in completed] == [
        (["gardens", "groceries", "games"], 3, False),
        (["groceries"], 1, False),
        (["kind", "keen"], 2, False),
        (["short", "long"], 2, False),
        ([], 0, False),
        (["garden"], 1, False),
        ([], 0, False),
    ]


def test_a_subscribed_client_is_told_when_the_resource_changes_and_not_after_unsubscribing(served):
    updated: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async def work(mcp: Any) -> Any:
        await mcp.subscribe_resource("notes://groceries")
        await asyncio.sleep(0.3)  # the server has looked at it once
        NOTES["groceries"] = "milk, eggs"
        await asyncio.sleep(0.4)  # the watch tells it
        served.changed("notes://groceries")  # the content it told: nothing new to tell
        await asyncio.sleep(0.2)
        NOTES["groceries"] = "milk, eggs, tea"
        served.changed("notes://groceries")  # told outright, and only once (the watch sees it told)
        await asyncio.sleep(0.3)
        await mcp.unsubscribe_resource("notes://groceries")
        NOTES["groceries"] = "milk"
        served.changed("notes://groceries")
        await asyncio.sleep(0.3)
        try:
            await mcp.subscribe_resource("other://x")
        except Exception as error:  # noqa: BLE001
            return str(error)

    refused = asyncio.run(_session(served, work, message_handler=on_message))
    assert updated == ["notes://groceries", "notes://groceries"]
    assert refused == "no resource at other://x"
    assert served._events.subscribed("notes://groceries") == 0
