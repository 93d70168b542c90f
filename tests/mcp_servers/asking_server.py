"""An MCP server that asks back during its calls, written with the `mcp` SDK: input from the
person (elicitation), an answer from the client's model (sampling), the client's roots.

``asking_server.py`` serves the 2026-07-28 protocol (the questions come inside the call's result);
``asking_server.py legacy`` refuses that protocol's probe as an older server does, so the client
falls back to the 2025 handshake and the same questions arrive as requests of their own;
``asking_server.py http PORT`` serves streamable HTTP on 127.0.0.1. Each
tool returns exactly what came back, as JSON, for the tests to compare.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Literal

import mcp.types as types
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, create_model

server = MCPServer("asking")
READ_ONLY = ToolAnnotations(read_only_hint=True)


class Signup(BaseModel):
    name: str = Field(title="Your name", min_length=2, max_length=40)
    age: int = Field(title="Age", ge=0, le=150)
    email: str = Field(title="Email", json_schema_extra={"format": "email"})
    plan: Literal["free", "pro"] = Field(default="free", title="Plan")
    newsletter: bool = Field(default=False, title="Send me the newsletter")


def signup_form() -> Elicit[Signup]:
    return Elicit("Please sign up <script>alert(1)</script> to continue.", Signup)


@server.tool(annotations=READ_ONLY)
async def sign_up(answer: Annotated[ElicitationResult[Signup], Resolve(signup_form)]) -> str:
    """Sign the person up: asks for their details."""
    data = answer.data.model_dump() if answer.action == "accept" else None
    return json.dumps({"action": answer.action, "data": data}, sort_keys=True)


# Forms whose schemas hold what no form can: a number of 401 digits as a bound or a default, a
# choice among 100,000. Made by pydantic, sent by the SDK as they are.
ODD_FIELDS = {
    "huge maximum": (int, Field(json_schema_extra={"maximum": 10**400})),
    "huge default": (int, Field(default=10**400)),
    "huge minLength": (str, Field(json_schema_extra={"minLength": -(10**400)})),
    "enormous enum": (Literal[tuple(f"option {i}" for i in range(100_000))], Field()),  # type: ignore[misc]
}


def odd_form(kind: str) -> Elicit[BaseModel]:
    annotation, field = ODD_FIELDS[kind]
    return Elicit(f"An odd form: {kind}.", create_model("Odd", n=(annotation, field)))


@server.tool(annotations=READ_ONLY)
async def ask_odd(kind: str, answer: Annotated[ElicitationResult[BaseModel], Resolve(odd_form)]) -> str:
    """Asks with a form no client can show (see ODD_FIELDS); returns what came back."""
    return json.dumps({"action": answer.action})


def poem_request(topic: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=f"A haiku about {topic}.")
    )
    return Sample([message], system_prompt="You write haiku.", max_tokens=60)


@server.tool(annotations=READ_ONLY)
async def write_poem(topic: str, poem: Annotated[types.CreateMessageResult, Resolve(poem_request)]) -> str:
    """A poem about a topic, written by the client's model."""
    return json.dumps({"text": poem.content.text, "model": poem.model, "stop": poem.stop_reason})


def roots_request() -> ListRoots:
    return ListRoots()


@server.tool(annotations=READ_ONLY)
async def my_roots(found: Annotated[types.ListRootsResult, Resolve(roots_request)]) -> str:
    """The client's roots, as file URIs."""
    return json.dumps([str(root.uri) for root in found.roots])


LATER: dict[str, str] = {}


@server.tool(annotations=READ_ONLY)
async def ask_later(ctx: Context) -> str:
    """Returns at once, then asks for input while no call runs (the older protocol only)."""
    session = ctx.session

    async def later() -> None:
        await asyncio.sleep(0.3)
        try:
            answer = await session.elicit_form("Still there?", {"type": "object", "properties": {}})
            LATER["answer"] = answer.action
        except Exception as error:  # noqa: BLE001 - the test reads what happened
            LATER["answer"] = f"error: {error}"

    asyncio.get_running_loop().create_task(later())
    return "asked"


@server.tool(annotations=READ_ONLY)
def asked_later() -> str:
    """What the question of `ask_later` got back."""
    return LATER.get("answer", "nothing yet")


if __name__ == "__main__":
    from legacy import run_server  # beside this file, on the path of a script run as one

    run_server(server, sys.argv[1:])
