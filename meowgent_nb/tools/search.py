"""Finding tools by what they do: a small lexical index (BM25) over names, descriptions, parameters.

`ToolIndex` backs the agent's ``search_tools`` tool (`meowgent_nb.agent.tool_search`): when more
tools are offered than a small model reads well, it is shown only that tool and finds the others
by a few words. The words of a tool are those of its name (``get_stock_price``, ``getStockPrice``
and ``stock.price`` split into words), its description, and its parameters' names, descriptions
and enum values; the name counts double. Words are lower-cased and lightly stemmed
(``emails``, ``emailed``, ``emailing`` -> ``email``); a few common words are left out. Pure
Python, no model, the same ranking in every process.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .render import ToolSpec

__all__ = ["SEARCH_TOOL", "ToolIndex", "words"]

SEARCH_TOOL = "search_tools"
"""The name of the agent's tool search tool (`meowgent_nb.agent.tool_search`)."""

MAX_QUERY_CHARS = 1000
"""Only this much of a query is read: a search is a few words, and a huge one costs no time."""

_WORD = re.compile(r"[A-Z]+s?(?![a-z])|[A-Z]?[a-z]+|[0-9]+")  # "URLs", "HTTPServer", "getX"
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "the",
        "this",
        "to",
        "what",
        "which",
        "with",
        "you",
        "your",
    ]
)
_SUFFIXES = ("ing", "ed", "es", "s")


def words(text: str) -> list[str]:
    """The search words of ``text``: split at case changes and non-letters, lower-cased, stemmed."""
    found = []
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in _STOP:
            continue
        found.append(_stem(word))
    return found


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


class ToolIndex:
    """BM25 over the words of some tools; `search` ranks them for a query.

    Args:
        tools: The tools to search, in the order ties are broken by.
    """

    K1 = 1.2
    B = 0.75

    def __init__(self, tools: Iterable[ToolSpec]):
        self.tools: list[ToolSpec] = list(tools)
        self._terms = [Counter(_tool_words(tool)) for tool in self.tools]
        lengths = [sum(terms.values()) for terms in self._terms]
        self._lengths = lengths
        self._average = (sum(lengths) / len(lengths)) if lengths else 0.0
        documents = Counter(word for terms in self._terms for word in terms)
        count = len(self.tools)
        self._idf = {word: math.log(1 + (count - n + 0.5) / (n + 0.5)) for word, n in documents.items()}

    def search(self, query: str, limit: int = 5) -> list[ToolSpec]:
        """The tools that share a word with ``query``, best first, at most ``limit``.

        Only the first `MAX_QUERY_CHARS` characters of ``query`` are read. Tools with the same
        score keep their order in the index.
        """
        scores = self.scores(query)
        ranked = sorted((i for i, score in enumerate(scores) if score > 0), key=lambda i: (-scores[i], i))
        return [self.tools[i] for i in ranked[:limit]]

    def scores(self, query: str) -> list[float]:
        """Each tool's BM25 score for ``query`` (0: no word in common)."""
        wanted = set(words(query[:MAX_QUERY_CHARS]))
        scores = []
        for terms, length in zip(self._terms, self._lengths):
            score = 0.0
            for word in wanted:
                n = terms.get(word, 0)
                if n:
                    norm = self.K1 * (1 - self.B + self.B * length / self._average)
                    score += self._idf[word] * n * (self.K1 + 1) / (n + norm)
            scores.append(score)
        return scores


def _tool_words(tool: ToolSpec) -> list[str]:
    name = words(tool.name)
    return [*name, *name, *words(tool.description), *_schema_words(tool.parameters)]


def _schema_words(schema: Any) -> Iterator[str]:
    """The words of a schema's property names, descriptions and string enum values, nested too."""
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                yield from words(str(name))
                yield from _schema_words(sub)
        description = schema.get("description")
        if isinstance(description, str):
            yield from words(description)
        values = schema.get("enum")
        if isinstance(values, Sequence) and not isinstance(values, str):
            for value in values:
                if isinstance(value, str):
                    yield from words(value)
        for key in ("items", "anyOf", "oneOf", "allOf", "$defs", "additionalProperties"):
            sub = schema.get(key)
            if key == "$defs" and isinstance(sub, Mapping):
                for item in sub.values():
                    yield from _schema_words(item)
            elif isinstance(sub, (Mapping, list)):
                yield from _schema_words(sub)
    elif isinstance(schema, list):
        for item in schema:
            yield from _schema_words(item)
