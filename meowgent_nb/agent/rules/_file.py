"""The rules file: ``approvals.toml`` (``rules = [...]``) or pyproject.toml's
``[tool.meowgent_nb.approvals]`` table, found in a list of folders.

In each folder, in order, ``approvals.toml`` is the rules file when it exists; else a
pyproject.toml that has the table; the first folder that has one wins, and only that file is
read. ``approvals.toml`` wins over pyproject.toml in the same folder, as ruff.toml does over
pyproject.toml for ruff: a file made only for this is the one a person means.

A file is read when it is first looked at and again whenever it changes (its modification time
or size), so an edit applies from the next call on. A file that cannot be used (bad TOML, a rule
that is malformed, more than `MAX_FILE_BYTES` or `MAX_RULES`) raises `RuleError` naming it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._rule import Rule, RuleError

__all__ = ["MAX_FILE_BYTES", "MAX_RULES", "RulesFile"]

MAX_FILE_BYTES = 1 << 20
MAX_RULES = 1000
_EXAMPLE = 'rules = ["delete_file path=scratch/** -> allow"]'


class RulesFile:
    """The rules file of ``folders`` (the first found), read again when it changes."""

    def __init__(self, folders: Sequence[str | Path]):
        self.folders = [Path(f) for f in dict.fromkeys(Path(f).resolve() for f in folders)]
        self.path: Path | None = None
        """The file the rules were read from (None: no folder has one)."""
        self.rules: list[Rule] = []
        self._seen: tuple[Any, ...] | None = None
        self._tables: dict[Path, tuple[Any, bool]] = {}  # pyproject.toml files: has it the table, as of when

    def refresh(self) -> list[Rule]:
        """The file's rules, read again if it changed (or appeared, or went away) since the last look.

        Raises:
            RuleError: The file cannot be used; names it, the rule, and how to fix it.
        """
        path, stamp = self._find()
        if (path, stamp) != self._seen:
            self.rules = _read(path) if path is not None else []
            self.path, self._seen = path, (path, stamp)
        return self.rules

    def _find(self) -> tuple[Path | None, Any]:
        for folder in self.folders:
            for name in ("approvals.toml", "pyproject.toml"):
                path = folder / name
                try:
                    stat = path.stat()
                except OSError:
                    continue
                stamp = (stat.st_mtime_ns, stat.st_size)
                if name == "pyproject.toml":
                    if self._tables.get(path, (None,))[0] != stamp:
                        self._tables[path] = (stamp, _has_table(path, stat.st_size))
                    if not self._tables[path][1]:
                        continue
                return path, stamp
        return None, None


def _toml(path: Path, size: int) -> dict[str, Any]:
    if size > MAX_FILE_BYTES:
        raise RuleError(
            f"The rules file {path} is {size:,} bytes; a rules file may have at most {MAX_FILE_BYTES:,} bytes"
            f" and {MAX_RULES:,} rules. Keep to rules a person can read: a few globs cover many calls."
        )
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RuleError(f"The rules file {path} is not valid TOML: {error}. Write it as: {_EXAMPLE}") from None


def _has_table(path: Path, size: int) -> bool:
    if size > 4 * MAX_FILE_BYTES:  # not read to find out: a pyproject.toml this big is no project's
        return False
    try:
        data = _toml(path, min(size, MAX_FILE_BYTES))
    except (RuleError, OSError):
        return False  # a broken pyproject.toml is its tools' business, unless it has our table
    return isinstance(data.get("tool"), dict) and "meowgent_nb" in data["tool"] and "approvals" in (
        data["tool"]["meowgent_nb"] if isinstance(data["tool"]["meowgent_nb"], dict) else {}
    )


def _read(path: Path) -> list[Rule]:
    data = _toml(path, path.stat().st_size)
    where = "[tool.meowgent_nb.approvals]" if path.name == "pyproject.toml" else "the file"
    table = data["tool"]["meowgent_nb"]["approvals"] if path.name == "pyproject.toml" else data
    if not isinstance(table, dict):
        raise RuleError(f"In {path}, {where} must be a table with rules = [...]; e.g. {_EXAMPLE}")
    unknown = sorted(set(table) - {"rules"})
    if unknown:
        raise RuleError(
            f"In {path}, {where} has {', '.join(map(repr, unknown))}, which is not a setting; the only one is"
            f" rules (a list of rules as text), e.g. {_EXAMPLE}"
        )
    texts = table.get("rules", [])
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise RuleError(f"In {path}, rules must be a list of rules as text, e.g. {_EXAMPLE}")
    if len(texts) > MAX_RULES:
        raise RuleError(
            f"The rules file {path} has {len(texts):,} rules; a rules file may have at most {MAX_RULES:,}."
            " Keep to rules a person can read: a few globs cover many calls."
        )
    rules = []
    for number, text in enumerate(texts, 1):
        try:
            rules.append(Rule.parse(text))
        except RuleError as error:
            raise RuleError(f"In {path}, rules[{number - 1}]: {error}") from None
    return rules
