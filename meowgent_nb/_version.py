"""The package's version, read from its installed metadata: ``version`` in pyproject.toml is the one place it is written.

A bottom module (it imports nothing of the package), so the package and ``python -m meowgent_nb
--version`` read the same value.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("meowgent-nb")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
