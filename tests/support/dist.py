"""The sdist and wheels of this checkout, built as a package index and its users get them.

`build_dist` copies the files git tracks (as the working tree holds them: untracked and ignored
files, such as caches and docs/_build, never get in) into a clean folder, then runs ``python -m
build`` there twice: once as a release is made (the sdist, then the wheel built FROM the sdist)
and once for a wheel built straight from the tree. Builds are isolated, as pip's are: the build
backend pyproject.toml requires is installed into a fresh environment each time (about 6 s for
the three here, from pip's cache).

The `built_dist` fixture builds once per session (per xdist worker) and hands out a `BuiltDist`;
a test module uses it by importing it (``from tests.support.dist import built_dist``).
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BuiltDist:
    """The built distributions of one checkout."""

    sdist: Path
    """The source distribution (``.tar.gz``)."""
    wheel: Path
    """The wheel built from the unpacked sdist, as pip builds one from an sdist."""
    wheel_from_tree: Path
    """The wheel built straight from the clean copy of the checkout."""
    source: Path
    """The clean copy both were built from."""

    def sdist_names(self) -> list[str]:
        """The sdist's paths, without its top folder (``meowgent_nb-0.1.0/``)."""
        with tarfile.open(self.sdist) as archive:
            return sorted(name.partition("/")[2] for name in archive.getnames() if "/" in name)


def clean_copy(root: Path, dest: Path) -> Path:
    """Copy the files git tracks in ``root``, as its working tree holds them, into ``dest``.

    Args:
        root: A git checkout.
        dest: A folder to create; it must not exist.

    Returns:
        ``dest``.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    dest.mkdir(parents=True)
    for name in filter(None, listed.split("\0")):
        source = root / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in git
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return dest


def _build(source: Path, out: Path, *kinds: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "build", *kinds, "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, (
        f"python -m build {' '.join(kinds)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {[p.name for p in found]}"
    return found[0]


def build_dist(root: Path, work: Path) -> BuiltDist:
    """Build the sdist, the wheel from the sdist and the wheel from the tree of ``root``.

    Args:
        root: A git checkout.
        work: An empty folder: the clean copy goes in ``work/src``, the builds in
            ``work/release`` (sdist and its wheel) and ``work/tree``.

    Returns:
        The three built files.
    """
    source = clean_copy(root, work / "src")
    _build(source, work / "release")  # no --sdist/--wheel: the sdist, then the wheel from it
    _build(source, work / "tree", "--wheel")
    return BuiltDist(
        sdist=_one(work / "release", "*.tar.gz"),
        wheel=_one(work / "release", "*.whl"),
        wheel_from_tree=_one(work / "tree", "*.whl"),
        source=source,
    )


def wheel_record(wheel: Path) -> dict[str, str]:
    """A wheel's RECORD as ``{path: "hash,size"}``, without the RECORD's own line."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        rows = csv.reader(archive.read(name).decode().splitlines())
        return {path: f"{digest},{size}" for path, digest, size in rows if path != name}


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory) -> BuiltDist:
    """This checkout's sdist and wheels, built once per session."""
    return build_dist(ROOT, tmp_path_factory.mktemp("dist"))
