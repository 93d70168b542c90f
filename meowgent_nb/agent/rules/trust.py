"""Trust in a rules file: a folder's file may raise approval at once, and lower it only once trusted.

A rules file comes with the project, not from the person who runs it, so its ``allow`` rules
decide only once that file, at that path, with exactly that content is trusted: in the person's
own store (`trust_store`, written by `trust_rules`; keyed by `rules_file_key` and the sha256 of
the bytes) or for one run in ``MEOWGENT_TRUST_RULES`` (`TRUST_ENV`). `is_trusted` asks both,
unless the site's policy forbids trusting rules files (`trust_forbidden`): then nothing is. A
store that cannot be read trusts nothing, with one warning. docs/guides/approvals.md has the rules.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...policy import PolicyError, current_policy
from ._file import read_bytes
from ._rule import Rule, RuleError

__all__ = [
    "CONFIG_ENV",
    "TRUST_ENV",
    "TrustedRules",
    "UntrustedRules",
    "is_trusted",
    "rules_file_key",
    "trust_forbidden",
    "trust_rules",
    "trust_store",
    "trusted_rules",
    "untrust_rules",
    "untrusted_file",
]

TRUST_ENV = "MEOWGENT_TRUST_RULES"
"""Rules files (or folders, or ``sha256=HEX``) a run trusts, separated by ``os.pathsep``."""
CONFIG_ENV = "MEOWGENT_CONFIG_DIR"
"""The folder of the person's meowgent_nb config (the trust store); default: the platform's."""
_STORE_NAME = "trusted_rules.json"
_STORE_LIMIT = 1 << 20
_HEX = re.compile(r"[0-9a-f]{64}")
_LOCK = threading.Lock()
_cache: dict[str, Any] = {}  # the store as last read: its path, its stamp, its entries


@dataclass(frozen=True)
class TrustedRules:
    """A rules file a person trusted: where it was found, and the sha256 of its content."""

    path: str
    """`rules_file_key` of the file."""
    sha256: str
    """The sha256 (hex) of its bytes when it was trusted."""
    trusted_at: str = ""
    """When, in UTC (ISO 8601)."""


@dataclass(frozen=True)
class UntrustedRules:
    """A rules file with ``allow`` rules that is not trusted: they decide nothing until it is."""

    path: Path
    sha256: str
    """The sha256 of the content read (the content a person trusts with `trust_rules`)."""
    allow: tuple[tuple[int, Rule], ...]
    """Its allow rules, with their numbers in the agent's `Rules`."""
    rules: tuple[Rule, ...] = ()
    """All its rules, in order."""

    @property
    def counted(self) -> str:
        """How many allow rules it has: "1 allow rule", "3 allow rules"."""
        return f"{len(self.allow)} allow rule" + "s" * (len(self.allow) != 1)

    @property
    def line(self) -> str:
        """The one line a person reads about it."""
        return (
            f"The rules file {self.path} has {self.counted}, ignored until you trust it (its ask and deny"
            " rules apply)."
        )

    @property
    def headless_line(self) -> str:
        """The one line on stderr where no one can trust it (nbval, papermill, a script)."""
        return (
            f"meowgent_nb: ignoring the {self.counted} of {self.path}: the file is not trusted, so the calls"
            f" they would allow are asked. To use them, set {TRUST_ENV}={self.path} for this run, or trust"
            " the file with %agent trust."
        )


def untrusted_file(path: Path | None, sha256: str | None, rules: list[Rule]) -> UntrustedRules | None:
    """The rules file at ``path`` (its content's sha256, its ``rules``) as `UntrustedRules` when
    it has allow rules and is not trusted; else None (they decide, or there are none)."""
    allow = tuple((n, rule) for n, rule in enumerate(rules, 1) if rule.action == "allow")
    if not allow or path is None or sha256 is None or is_trusted(path, sha256):
        return None
    return UntrustedRules(path, sha256, allow, tuple(rules))


def config_dir() -> Path:
    """``$MEOWGENT_CONFIG_DIR``, else the platform's user config folder for meowgent_nb."""
    given = os.environ.get(CONFIG_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("meowgent_nb"))


def trust_store() -> Path:
    """The file that keeps the person's trusted rules files (`TrustedRules`)."""
    return config_dir() / _STORE_NAME


def rules_file_key(path: str | os.PathLike[str]) -> str:
    """Where a rules file is, for trust: its folder resolved (symlinks and ``..`` followed), its
    own name as it is. A symlink to a trusted file is another key, so it is not trusted."""
    path = Path(os.path.abspath(path))
    return str(Path(os.path.realpath(path.parent)) / path.name)


def trusted_rules() -> list[TrustedRules]:
    """The rules files the person trusted, from `trust_store` (a store that cannot be read: none,
    with a warning on stderr)."""
    store = trust_store()
    try:
        stat = store.stat()
    except OSError:
        return []
    stamp = (str(store), stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino)
    with _LOCK:
        if _cache.get("stamp") != stamp:
            _cache["stamp"], _cache["entries"] = stamp, _read_store(store)
        return list(_cache["entries"])


def _read_store(store: Path) -> list[TrustedRules]:
    try:
        data = json.loads(read_bytes(store, _STORE_LIMIT, what="trust store").decode("utf-8"))
        entries = data["trusted"] if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ValueError('it has no list "trusted"')  # noqa: TRY004 - a store of another shape is corrupt
        found = []
        for entry in entries:
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("path"), str)
                and isinstance(entry.get("sha256"), str)
                and _HEX.fullmatch(entry["sha256"])
            ):
                raise ValueError(f"an entry is not a path and a sha256: {str(entry)[:80]}")
            found.append(TrustedRules(entry["path"], entry["sha256"], str(entry.get("trusted_at", ""))))
        return found
    except (RuleError, ValueError, KeyError, TypeError, RecursionError) as error:
        print(
            f"meowgent_nb: the trust store {store} cannot be read ({error}); no rules file is trusted until"
            " it is fixed or removed (trusting a file again writes a new one).",
            file=sys.stderr,
        )
        return []


def is_trusted(path: str | os.PathLike[str], sha256: str) -> bool:
    """Whether the rules file found at ``path``, with content of this sha256, is trusted: by the
    person (`trust_store`) or by this run (``MEOWGENT_TRUST_RULES``); never when the site's
    policy forbids it."""
    if trust_forbidden() is not None:
        return False
    key = rules_file_key(path)
    if _trusted_by_env(key, sha256):
        return True
    return any(entry.path == key and entry.sha256 == sha256 for entry in trusted_rules())


def _trusted_by_env(key: str, sha256: str) -> bool:
    for entry in os.environ.get(TRUST_ENV, "").split(os.pathsep):
        entry = entry.strip()
        if not entry:
            continue
        if entry.startswith("sha256="):
            if entry.removeprefix("sha256=").lower() == sha256:
                return True
            continue
        named = Path(entry).expanduser()
        if named.is_dir():
            if str(Path(key).parent) == os.path.realpath(named):
                return True
        elif rules_file_key(named) == key:
            return True
    return False


def trust_forbidden() -> str | None:
    """Why no rules file may be trusted here (the site's policy, named with its file and key), or
    None when one may."""
    forbidden = current_policy().trust_rules_files
    if forbidden is None or forbidden.value:
        return None
    return f"{forbidden.where} forbids trusting rules files: their allow rules decide nothing here"


def trust_rules(path: str | os.PathLike[str], sha256: str) -> TrustedRules:
    """Record that the person trusts the rules file found at ``path`` with this content (the
    sha256 of the bytes they were shown); an earlier entry for the same path is replaced.

    Raises:
        OSError: The store cannot be written (the message names it).
        ValueError: ``sha256`` is not 64 hex digits.
        PolicyError: The site's policy forbids trusting rules files.
    """
    forbidden = trust_forbidden()
    if forbidden is not None:
        raise PolicyError(forbidden[:1].upper() + forbidden[1:] + ".")
    if not isinstance(sha256, str) or not _HEX.fullmatch(sha256):
        raise ValueError(f"sha256 must be 64 lowercase hex digits, got {sha256!r}")
    key = rules_file_key(path)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    entry = TrustedRules(key, sha256, now)
    with _LOCK:
        _cache.clear()
    kept = [e for e in trusted_rules() if e.path != key]
    _write_store([*kept, entry])
    return entry


def untrust_rules(path: str | os.PathLike[str]) -> list[TrustedRules]:
    """Forget the person's trust in the rules file at ``path`` (every content of it); returns
    the entries removed.

    Raises:
        OSError: The store cannot be written.
    """
    key = rules_file_key(path)
    entries = trusted_rules()
    removed = [e for e in entries if e.path == key]
    if removed:
        _write_store([e for e in entries if e.path != key])
    return removed


def _write_store(entries: list[TrustedRules]) -> None:
    """Write the store atomically (a temporary file in its folder, then a rename), 0600 in 0700."""
    store = trust_store()
    folder = store.parent
    if not folder.is_dir():
        folder.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
    text = json.dumps({"trusted": [asdict(e) for e in entries]}, indent=1) + "\n"
    with _LOCK:
        descriptor, temporary = tempfile.mkstemp(prefix=".trusted_rules.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.chmod(temporary, 0o600)
            os.replace(temporary, store)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _cache.clear()
