"""The tools, resources and prompts the MCP conformance suite calls, written as notebook cells are.

The suite (``@modelcontextprotocol/conformance``, see tests/mcp/conformance_suite.py) names what
it calls (``test_image_content``, ``test://static-text``, ``test_simple_prompt``, ...) and what
each should answer; these are plain ``@tool`` / ``@resource`` / ``@prompt`` functions a person
would write for that, served by `ToolServer` as ``%tools serve`` serves a notebook's.
"""

from __future__ import annotations

import base64
import json
import time

from meowgent_nb import tool
from meowgent_nb.mcp.published import prompt, resource

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
def test_image_content() -> bytes:
    """Returns a one-pixel red PNG."""
    return RED_PIXEL


@tool
def test_audio_content() -> bytes:
    """Returns a tiny WAV."""
    return SILENCE


@tool
def test_embedded_resource() -> str:
    """Returns an embedded text resource."""
    return "This is an embedded resource content."


@tool
def test_multiple_content_types() -> list:
    """Returns text, an image and a resource."""
    return ["Multiple content types test:", RED_PIXEL, {"test": "data", "value": 123}]


@tool
def test_tool_with_logging() -> str:
    """Logs three messages while it works."""
    time.sleep(0.1)
    return "Tool with logging executed successfully"


@tool
def test_tool_with_progress() -> str:
    """Reports its progress."""
    time.sleep(0.1)
    return "Progress tool completed"


@tool
def test_sampling(prompt: str) -> str:
    """Asks the client's model.

    Args:
        prompt: The prompt to send to the LLM.
    """
    return "LLM response: (no model)"


@tool
def test_elicitation(message: str) -> str:
    """Asks the client's person for a username and an email.

    Args:
        message: The message to show the user.
    """
    return "User response: (no one asked)"


@tool
def test_elicitation_sep1034_defaults() -> str:
    """Asks a form whose fields have defaults."""
    return "Elicitation completed: (no one asked)"


@tool
def test_elicitation_sep1330_enums() -> str:
    """Asks a form with every kind of choice."""
    return "Elicitation completed: (no one asked)"


@tool
def test_reconnection() -> str:
    """Answers after a short wait."""
    time.sleep(0.1)
    return "Reconnection test completed successfully."


@tool
def json_schema_2020_12_tool(name: str | None = None, address: dict[str, str] | None = None) -> str:
    """Takes a name and an address."""
    return f"JSON Schema 2020-12 tool called with: {json.dumps({'name': name, 'address': address})}"


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


@resource("test://static-binary", description="A static binary resource (image) for testing", mime_type="image/png")
def static_binary() -> bytes:
    return RED_PIXEL


@resource("test://template/{id}/data", description="A resource template with parameter substitution")
def template(id: str) -> dict:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


WATCHED = {"text": "Watched resource content"}


@resource("test://watched-resource", description="A resource that changes")
def watched_resource() -> str:
    return WATCHED["text"]


RESOURCES = [static_text, static_binary, template, watched_resource]


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
    return [{"role": "user", "content": "Please process the embedded resource above."}]


@prompt
def test_prompt_with_image() -> list:
    """A prompt that includes image content."""
    return [{"role": "user", "content": "Please analyze the image above."}]


PROMPTS = [test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource, test_prompt_with_image]
