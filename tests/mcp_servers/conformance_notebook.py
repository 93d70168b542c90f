"""The tools, resources and prompts the MCP conformance suite calls, written as notebook cells are.

The suite (``@modelcontextprotocol/conformance``, see tests/support/conformance_suite.py) names what
it calls (``test_image_content``, ``test://static-text``, ``test_simple_prompt``, ...) and what
each should answer; these are plain ``@tool`` / ``@resource`` / ``@prompt`` functions a person
would write for that, served by `ToolServer` as ``%tools serve`` serves a notebook's.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Literal

from IPython.display import Image as DisplayImage
from PIL import Image
from pydantic import BaseModel, Field

from meowgent_nb import Tool, ToolContext, tool
from meowgent_nb.mcp import ResourceContent, prompt, resource

RED_PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
SILENCE = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")


@tool
def test_simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@tool
def test_error_handling() -> str:
    """Always fails."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool
def test_image_content() -> Image.Image:
    """Returns a one-pixel red image."""
    return Image.new("RGB", (1, 1), "red")


@tool
def test_audio_content() -> bytes:
    """Returns a tiny WAV (bytes: its first bytes say it is WAV)."""
    return SILENCE


@resource("test://embedded-resource", description="Text to embed")
def embedded_resource() -> str:
    return "This is an embedded resource content."


@tool
def test_embedded_resource() -> ResourceContent:
    """Returns an embedded text resource."""
    return embedded_resource.embed()


@resource("test://mixed-content-resource", description="JSON to embed")
def mixed_content_resource() -> dict:
    return {"test": "data", "value": 123}


@tool
def test_multiple_content_types() -> list:
    """Returns text, an image and a resource."""
    return ["Multiple content types test:", DisplayImage(data=RED_PIXEL), mixed_content_resource.embed()]


@tool
def test_tool_with_logging(ctx: ToolContext) -> str:
    """Logs three messages while it works."""
    ctx.log("info", "Tool execution started")
    time.sleep(0.05)
    ctx.log("info", "Tool processing data")
    time.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@tool
def test_tool_with_progress(ctx: ToolContext) -> str:
    """Reports its progress."""
    for done in (0, 50, 100):
        ctx.progress(done, 100, f"Completed step {done} of 100")
        time.sleep(0.05 if done < 100 else 0)
    return "Progress tool completed"


@tool
def test_sampling(prompt: str, ctx: ToolContext) -> str:
    """Asks the client's model.

    Args:
        prompt: The prompt to send to the LLM.
    """
    return f"LLM response: {ctx.sample(prompt, max_tokens=100)}"


@tool
def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Asks the client's person for a username and an email.

    Args:
        message: The message to show the user.
    """

    class Contact(BaseModel):
        username: str = Field(description="User's response")
        email: str = Field(description="User's email address")

    answer = ctx.ask(message, Contact)
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@tool
def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Asks a form whose fields have defaults."""
    answer = ctx.ask("Please review and update the form fields with defaults", Defaults)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


CHOICES = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


@tool
def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Asks a form with every kind of choice."""
    answer = ctx.ask("Please select options from the enum fields", CHOICES)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@tool
def test_reconnection() -> str:
    """Answers after a short wait."""
    time.sleep(0.1)
    return "Reconnection test completed successfully."


def _with_address(name: str | None = None, address: dict | None = None) -> str:
    return f"JSON Schema 2020-12 tool called with: {json.dumps({'name': name, 'address': address})}"


# A tool whose schema is written by hand, with $defs (as a person may write one, or take one from elsewhere).
json_schema_2020_12_tool = Tool.from_schema(
    "json_schema_2020_12_tool",
    "Tool with JSON Schema 2020-12 features",
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
    _with_address,
)


TOOLS = [
    test_simple_text,
    test_error_handling,
    test_image_content,
    test_audio_content,
    test_embedded_resource,
    test_multiple_content_types,
    test_tool_with_logging,
    test_tool_with_progress,
    test_sampling,
    test_elicitation,
    test_elicitation_sep1034_defaults,
    test_elicitation_sep1330_enums,
    test_reconnection,
    json_schema_2020_12_tool,
]


@resource("test://static-text", description="A static text resource for testing")
def static_text() -> str:
    return "This is the content of the static text resource."


@resource(
    "test://static-binary", description="A static binary resource (image) for testing", mime_type="image/png"
)
def static_binary() -> bytes:
    return RED_PIXEL


@resource("test://template/{id}/data", description="A resource template with parameter substitution")
def template(id: str) -> dict:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


WATCHED = {"text": "Watched resource content"}


@resource("test://watched-resource", description="A resource that changes")
def watched_resource() -> str:
    return WATCHED["text"]


RESOURCES = [
    static_text,
    static_binary,
    template,
    watched_resource,
    embedded_resource,
    mixed_content_resource,
]


@prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt that includes an embedded resource."""
    embedded = ResourceContent(resourceUri, "Embedded resource content for testing.", "text/plain")
    return [
        {"role": "user", "content": embedded},
        {"role": "user", "content": "Please process the embedded resource above."},
    ]


@prompt
def test_prompt_with_image() -> list:
    """A prompt that includes image content."""
    return [
        {"role": "user", "content": Image.new("RGB", (1, 1), "red")},
        {"role": "user", "content": "Please analyze the image above."},
    ]


PROMPTS = [
    test_simple_prompt,
    test_prompt_with_arguments,
    test_prompt_with_embedded_resource,
    test_prompt_with_image,
]
