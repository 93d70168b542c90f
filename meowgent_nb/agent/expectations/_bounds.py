"""How much of an expectation is read: it may come from a notebook's metadata, so it is untrusted.

Bounded before Python's tokenizer and parser see it (their time and memory grow with the text,
and their stacks with its nesting): at most `MAX_CHARS` characters, nested at most `MAX_NESTING`
levels deep, whether by brackets (counted as they are read) or by operators, dotted names and
calls (counted in the tree `ast` reads, without recursion).
"""

from __future__ import annotations

import ast

__all__ = ["MAX_CHARS", "MAX_NESTING", "TOO_DEEP", "deeper_than", "too_long"]

MAX_CHARS = 2000
"""The longest expectation read, in characters."""
MAX_NESTING = 20
"""The deepest an expectation may nest brackets, operators (``-``, ``+``), dotted names and calls."""
TOO_DEEP = (
    f"The expectation nests more than {MAX_NESTING} levels deep here (brackets, operators or dotted"
    " names): write it flatter, or match a deep value with * (any value)."
)
_SHOWN = 60  # characters of an expectation too long to read shown in the error


def too_long(text: str) -> tuple[str, str] | None:
    """For ``text`` longer than `MAX_CHARS`: what is wrong, and its beginning to show; else None."""
    if len(text) <= MAX_CHARS:
        return None
    problem = (
        f"The expectation is {len(text):,} characters long; one may have at most {MAX_CHARS:,}: name the"
        " calls that matter, and match a long value with a glob ('Par*'), a regex ('re:...') or *."
    )
    return problem, text[:_SHOWN].replace("\r", " ").replace("\n", " ") + " ..."


def deeper_than(node: ast.AST, limit: int) -> ast.expr | None:
    """An expression nested ``limit + 1`` deep in ``node`` (names and constants, the leaves, not
    counted), else None; read without recursion, so any depth is safe."""
    stack: list[tuple[ast.AST, int]] = [(node, 0)]
    while stack:
        here, depth = stack.pop()
        if isinstance(here, ast.expr) and not isinstance(here, (ast.Name, ast.Constant)):
            depth += 1
            if depth > limit:
                return here
        stack.extend((child, depth) for child in ast.iter_child_nodes(here))
    return None
