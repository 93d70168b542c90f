"""A small MCP server for notebook 7: a library catalogue, written with the official `mcp` SDK.

Tools (search, lend, remove, count, and a reservation that asks the person for a form), two
resources (the lending rules, and each book's record by a URI template), a prompt, and
instructions for the model.

Run it on its own with ``python mcp_server_demo.py`` (it talks MCP over stdin and stdout), or let
the notebook start it with ``%tools mcp add library -- python mcp_server_demo.py``.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer(
    "library", instructions="Search the catalogue before lending; read library://rules for the rules."
)

BOOKS = {
    "978-0441013593": {"title": "Dune", "author": "Frank Herbert", "on_loan": False},
    "978-0547928227": {"title": "The Hobbit", "author": "J. R. R. Tolkien", "on_loan": True},
    "978-0307474278": {"title": "The Road", "author": "Cormac McCarthy", "on_loan": False},
}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_books(
    query: Annotated[str, Field(description="Words from the title or the author's name.")],
) -> str:
    """Find books in the library catalogue."""
    words = query.lower().split()
    found = [
        f"{isbn}: {book['title']} by {book['author']} ({'on loan' if book['on_loan'] else 'available'})"
        for isbn, book in BOOKS.items()
        if all(word in f"{book['title']} {book['author']}".lower() for word in words)
    ]
    return "\n".join(found) or f"No book matches {query!r}."


@server.tool()
def lend_book(isbn: str, reader: Annotated[str, Field(description="Who borrows the book.")]) -> str:
    """Lend a book to a reader."""
    book = BOOKS.get(isbn)
    if book is None:
        raise ToolError(f"no book has the ISBN {isbn}")
    if book["on_loan"]:
        raise ToolError(f"{book['title']} is already on loan")
    book["on_loan"] = True
    return f"{book['title']} is lent to {reader}."


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def remove_book(isbn: str) -> str:
    """Remove a book from the catalogue for good."""
    book = BOOKS.pop(isbn, None)
    return f"Removed {book['title']}." if book else f"No book has the ISBN {isbn}."


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def count_books() -> dict[str, int]:
    """How many books are available and how many are on loan."""
    on_loan = sum(book["on_loan"] for book in BOOKS.values())
    return {"available": len(BOOKS) - on_loan, "on_loan": on_loan}


class Pickup(BaseModel):
    reader: str = Field(title="Your name", min_length=2, max_length=40)
    day: Literal["Monday", "Wednesday", "Friday"] = Field(title="Pick-up day")


def pickup_form(isbn: str) -> Elicit[Pickup]:
    title = BOOKS.get(isbn, {}).get("title", isbn)
    return Elicit(f"Who picks up {title}, and when?", Pickup)


@server.tool()
async def reserve_book(isbn: str, pickup: Annotated[ElicitationResult[Pickup], Resolve(pickup_form)]) -> str:
    """Reserve a book; asks the person who picks it up, and when."""
    if pickup.action != "accept":
        return f"Not reserved: the form was {pickup.action}d."
    return f"Reserved for {pickup.data.reader}, to pick up on {pickup.data.day}."


@server.resource("library://rules", name="rules", title="Lending rules", description="How lending works.")
def rules() -> str:
    return "A loan lasts three weeks. A reader may borrow five books at a time. Reserved books wait a week."


@server.resource(
    "library://books/{isbn}", name="book", description="One book's record.", mime_type="application/json"
)
def book(isbn: str) -> str:
    if isbn not in BOOKS:
        raise ValueError(f"no book has the ISBN {isbn}")
    return json.dumps(BOOKS[isbn])


@server.prompt(title="Recommend a book", description="Ask for a book for a reader in a given mood.")
def recommend(reader: str, mood: str = "curious") -> str:
    return f"Recommend one book from the catalogue to {reader}, who feels {mood}. Search the catalogue first."


if __name__ == "__main__":
    server.run()
