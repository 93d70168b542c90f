"""A small MCP server for notebook 7: a library catalogue, written with the official `mcp` SDK.

Run it on its own with ``python mcp_server_demo.py`` (it talks MCP over stdin and stdout), or let
the notebook start it with ``%tools mcp add library -- python mcp_server_demo.py``.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

server = MCPServer("library")

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


if __name__ == "__main__":
    server.run()
