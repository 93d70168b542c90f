"""The rules file: ``approvals.toml`` (``rules = [...]``) or pyproject.toml's
``[tool.meowgent_nb.approvals]`` table, found in a list of folders.

`RulesFile` finds the first folder that has one (``approvals.toml`` wins over pyproject.toml in
the same folder), reads it again whenever it changes, and keeps the sha256 of the bytes parsed
for `trust`. `read_bytes` reads only a regular file, without blocking and never past
`MAX_FILE_BYTES`. A file that cannot be used raises `RuleError` naming it.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._rule import Rule, RuleError

__all__ = ["MAX_FILE_BYTES", "MAX_RULES", "RulesFile", "read_bytes"]

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
        self.sha256: str | None = None
        """The sha256 (hex) of the bytes the rules were read from (None: no file)."""
        self._seen: tuple[Any, ...] | None = None
        self._tables: dict[Path, tuple[Any, bool]] = {}  # pyproject.toml files: has it the table, as of when

    def refresh(self) -> list[Rule]:
        """The file's rules, read again if it changed (or appeared, or went away) since the last look.

        Raises:
            RuleError: The file cannot be used; names it, the rule, and how to fix it.
        """
        path, stamp = self._find()
        if (path, stamp) != self._seen:
            self.rules, self.sha256 = _read(path) if path is not None else ([], None)
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
                stamp = (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino, stat.st_dev)
                if name == "pyproject.toml":
                    if self._tables.get(path, (None,))[0] != stamp:
                        self._tables[path] = (stamp, _has_table(path, stat.st_size))
                    if not self._tables[path][1]:
                        continue
                return path, stamp
        return None, None


def read_bytes(path: Path, limit: int = MAX_FILE_BYTES, what: str = "rules file") -> bytes:
    """The bytes of the rules file ``path``, read safely: only a regular file (a symlink to one is
    followed), opened without blocking, and never more than ``limit`` bytes.

    Raises:
        RuleError: It is no regular file (a folder, a FIFO, a device), cannot be opened or read,
            or is longer than ``limit``; the message names it (as ``what``).
    """
    flags = os.O_RDONLY
    for name in ("O_NONBLOCK", "O_NOCTTY", "O_BINARY"):  # a FIFO opens without waiting for a writer
        flags |= getattr(os, name, 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise RuleError(
            f"The {what} {path} cannot be opened ({error.strerror or error}); check that it exists and can be"
            " read, or remove it."
        ) from None
    try:
        status = os.fstat(descriptor)
        if not stat_module.S_ISREG(status.st_mode):
            raise RuleError(
                f"The {what} {path} is {_kind(status.st_mode)}, not a regular file; a {what} is a text file"
                " (and a symlink to one is followed). Replace it with one, or remove it."
            )
        if status.st_size > limit:
            raise _too_big(path, f"{status.st_size:,} bytes", limit, what)
        chunks, left = [], limit + 1
        while left > 0:  # bounded however the file grows while it is read
            chunk = os.read(descriptor, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as error:
        raise RuleError(
            f"The {what} {path} cannot be read ({error.strerror or error}); check that it can be read, or"
            " remove it."
        ) from None
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > limit:
        raise _too_big(path, f"more than {limit:,} bytes", limit, what)
    return data


def _kind(mode: int) -> str:
    kinds = [
        (stat_module.S_ISDIR, "a folder"),
        (stat_module.S_ISFIFO, "a FIFO (named pipe)"),
        (stat_module.S_ISCHR, "a character device"),
        (stat_module.S_ISBLK, "a block device"),
        (stat_module.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _too_big(path: Path, size: str, limit: int, what: str) -> RuleError:
    if what != "rules file" or limit != MAX_FILE_BYTES:
        return RuleError(f"The {what} {path} is {size}; it may have at most {limit:,} bytes.")
    return RuleError(
        f"The rules file {path} is {size}; a rules file may have at most {MAX_FILE_BYTES:,} bytes"
        f" and {MAX_RULES:,} rules. Keep to rules a person can read: a few globs cover many calls."
    )


def _toml(path: Path, data: bytes) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RuleError(
            f"The rules file {path} is not valid TOML: {error}. Write it as: {_EXAMPLE}"
        ) from None


def _has_table(path: Path, size: int) -> bool:
    if size > 4 * MAX_FILE_BYTES:  # not read to find out: a pyproject.toml this big is no project's
        return False
    try:
        data = _toml(path, read_bytes(path, 4 * MAX_FILE_BYTES))
    except RuleError:
        return False  # a broken pyproject.toml is its tools' business, unless it has our table
    return (
        isinstance(data.get("tool"), dict)
        and "meowgent_nb" in data["tool"]
        and "approvals"
        in (data["tool"]["meowgent_nb"] if isinstance(data["tool"]["meowgent_nb"], dict) else {})
    )


def _read(path: Path) -> tuple[list[Rule], str]:
    """The file's rules and the sha256 of the bytes they were parsed from (one read: what is
    trusted is what was parsed)."""
    raw = read_bytes(path)
    data = _toml(path, raw)
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
    return rules, hashlib.sha256(raw).hexdigest()
