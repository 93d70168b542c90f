"""Where policy files are found, how one is read, and the policy this process follows.

A site's policy file is ``meowgent_nb/policy.toml`` in a folder of Jupyter's config path
(``/etc/jupyter``, ``{sys.prefix}/etc/jupyter``, ``~/.jupyter``...), or
``{sys.prefix}/etc/meowgent_nb/policy.toml``, or the file ``MEOWGENT_POLICY`` names. Every file
found applies, combined by the strictest limit (`combine`). `current_policy` reads them once per
process; `reload_policy` reads them again. A file that cannot be used is refused loudly, and
keeps being refused until it is fixed: no kernel runs an agent without the limits it sets.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from .policy import Policy, PolicyError, Secret, combine

__all__ = ["POLICY_ENV", "current_policy", "load_policy", "policy_locations", "reload_policy"]

POLICY_ENV = "MEOWGENT_POLICY"
"""An environment variable naming one more policy file (it can only tighten the others)."""
_NAME = Path("meowgent_nb") / "policy.toml"
_MAX_BYTES = 1 << 20
_LOCK = threading.Lock()
_current: Policy | PolicyError | None = None


def policy_locations(environ: dict[str, str] | None = None) -> list[Path]:
    """Where policy files are looked for, most site-wide first: Jupyter's system config folders,
    the environment's (``{sys.prefix}/etc/jupyter``), ``{sys.prefix}/etc/meowgent_nb/policy.toml``,
    then the person's (``JUPYTER_CONFIG_PATH``'s folders, ``~/.jupyter``), then ``MEOWGENT_POLICY``'s
    file.

    The order is this one whatever Jupyter prefers for its own config in a virtual environment
    (``JUPYTER_PREFER_ENV_PATH``): a person's files come after the site's, so their defaults never
    stand in for the site's, and their limits, combined by the strictest, can only tighten."""
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH, jupyter_config_dir

    environ = os.environ if environ is None else environ  # type: ignore[assignment]
    site = [*reversed(SYSTEM_CONFIG_PATH), *reversed(ENV_CONFIG_PATH)]
    persons = [
        folder for folder in (environ or {}).get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if folder
    ]
    paths = [Path(folder) / _NAME for folder in site]
    paths.append(Path(sys.prefix) / "etc" / _NAME)
    paths += [Path(folder).expanduser() / _NAME for folder in reversed(persons)]
    paths.append(Path(jupyter_config_dir()) / _NAME)
    named = (environ or {}).get(POLICY_ENV, "").strip()
    if named:
        paths.append(Path(named).expanduser())
    unique: list[Path] = []
    for path in paths:
        if path not in unique:
            unique.append(path)
    return unique


def load_policy(paths: list[Path] | None = None, environ: dict[str, str] | None = None) -> Policy:
    """The policy of the files at ``paths`` (default: `policy_locations`) that exist, combined.

    Args:
        paths: Policy files, most site-wide first.
        environ: The environment that names ``MEOWGENT_POLICY`` (default: this process's).

    Raises:
        PolicyError: A file cannot be read, is not TOML, or has an unknown key or a wrong value
            (one error listing each problem, naming the file); or ``MEOWGENT_POLICY`` names a file
            that is not there.
    """
    environ = dict(os.environ) if environ is None else environ
    paths = policy_locations(environ) if paths is None else paths
    named = environ.get(POLICY_ENV, "").strip()
    found: list[tuple[str, dict[str, dict[str, Any]]]] = []
    for path in paths:
        if not path.is_file():
            if named and path == Path(named).expanduser():
                raise PolicyError(
                    f"{POLICY_ENV}={named!r} names no file: agents are refused until it names a policy"
                    f" file that exists, or {POLICY_ENV} is unset."
                )
            continue
        found.append((str(path), _read(path)))
    return combine(found, looked=tuple(str(path) for path in paths))


def current_policy() -> Policy:
    """The policy this process follows, read on first use (see `reload_policy`).

    Raises:
        PolicyError: A policy file cannot be used; raised on every use until `reload_policy`
            reads a fixed file.
    """
    global _current
    with _LOCK:
        if _current is None:
            try:
                _current = load_policy()
            except PolicyError as error:
                _current = error
        current = _current
    if isinstance(current, PolicyError):
        raise PolicyError(str(current))
    return current


def reload_policy() -> Policy:
    """Read the policy files again (``%agent policy reload``); returns the policy now followed.

    Raises:
        PolicyError: As `current_policy`.
    """
    global _current
    with _LOCK:
        _current = None
    return current_policy()


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PolicyError(f"The policy file {path} cannot be read ({error.strerror}); {_FIX}") from None
    if len(data) > _MAX_BYTES:
        raise PolicyError(f"The policy file {path} is over 1 MiB; {_FIX}")
    try:
        tables = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise PolicyError(f"The policy file {path} is not TOML ({error}); {_FIX}") from None
    from ._schema import parse_policy

    parsed, problems = parse_policy(tables)
    if parsed is None:
        lines = "".join(f"\n- {problem}" for problem in problems)
        raise PolicyError(f"The policy file {path} cannot be used; {_FIX}{lines}")
    read = parsed.model_dump(exclude_none=True)
    key = parsed.defaults.api_key
    if key is not None:
        read["defaults"]["api_key"] = Secret(key.get_secret_value())
    return read


_FIX = "agents are refused until it is fixed (then `%agent policy reload`, or restart the kernel)."
