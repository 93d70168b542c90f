"""A stand-in for the bigger embedded model: real part packages of a few bytes, importable from tmp_path.

`install_parts` writes one package per slice (each with ``get_part_path()``, as the real ones
have), puts them on ``sys.path``, and makes the 1.5B entry of `gguf.EMBEDDED_MODELS` point at
them with the joined bytes' real size and sha256; the cache directory is ``tmp_path / "cache"``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import uuid
from pathlib import Path

import pytest

from meowgent_nb.models import gguf


def install_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *contents: bytes, installed: bool = True
) -> gguf.EmbeddedModel:
    """The 1.5B model made of ``contents``' slices (or of packages that are not there)."""
    tag = uuid.uuid4().hex[:8]  # fresh module names: an import cached by another test never answers
    names = tuple(f"meowgent_fake_part_{tag}_{index}" for index in range(1, len(contents) + 1))
    if installed:
        root = tmp_path / "site"
        for name, content in zip(names, contents):
            package = root / name
            (package / "data").mkdir(parents=True)
            (package / "data" / "part.bin").write_bytes(content)
            (package / "__init__.py").write_text(
                "import os\n\ndef get_part_path():\n"
                "    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'part.bin')\n"
            )
        monkeypatch.syspath_prepend(str(root))
        importlib.invalidate_caches()
    joined = b"".join(contents)
    model = dataclasses.replace(
        gguf.CODER_1_5B, size=len(joined), sha256=hashlib.sha256(joined).hexdigest(), packages=names
    )
    monkeypatch.setattr(gguf, "EMBEDDED_MODELS", (gguf.DEFAULT_EMBEDDED, model))
    monkeypatch.setattr(gguf, "cache_dir", lambda: tmp_path / "cache")
    return model
