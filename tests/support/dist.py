"""The sdist and wheels of this checkout, built as a package index and its users get them.

`build_dist` copies the files git tracks (as the working tree holds them: untracked and ignored
files, such as caches and docs/_build, never get in) into a clean folder, then runs ``python -m
build`` there twice: once as a release is made (the sdist, then the wheel built FROM the sdist)
and once for a wheel built straight from the tree. Builds are isolated, as pip's are: the build
backend pyproject.toml requires is installed into a fresh environment each time (about 6 s for
the three here, from pip's cache).

The `built_dist` fixture hands out a `BuiltDist`; a test module uses it by importing it (``from
tests.support.dist import built_dist``). `make_venv` installs the wheel, not editable, with its
``course`` extra into a fresh virtual environment (tests/test_wheel_install.py).

Building and installing take about 40 s of a run, most of it pip resolving and unpacking: so that
no test waits that long, a run that collects these tests starts them in the background as soon as
collection ends (`start_preparing`, from tests/conftest.py), once for all workers, into the
folder ``MEOWGENT_DIST_DIR`` names (made by the run's first process and removed when it ends),
and the fixtures wait for what they need (`prepared`). Without that folder (a run of another
shape), the fixtures build in the foreground.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import traceback
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


def make_venv(wheel: Path, venv: Path) -> float:
    """A fresh virtual environment at ``venv`` with ``wheel`` installed (not editable) with its
    ``course`` extra, as a person installs it; returns the seconds it took."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile", f"{wheel}[course]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"pip install {wheel.name}[course] failed:\n{done.stderr[-3000:]}"
    return time.perf_counter() - started


DIST_DIR = "MEOWGENT_DIST_DIR"
"""The environment variable naming the run's folder for the background build (see the module's doc)."""
WHEEL_TESTS = "tests/test_wheel_install.py"
DIST_TESTS = (WHEEL_TESTS, "tests/test_packaging.py")


def start_preparing(folder: Path, venv: bool) -> bool:
    """Build the dists (and, if ``venv``, the environment) into ``folder`` in a process of its own;
    False if another process of the run started it already."""
    try:
        (folder / "started").open("x").close()
    except FileExistsError:
        return False
    log = (folder / "log.txt").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.dist", str(folder), *(["--venv"] if venv else [])],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    (folder / "pid").write_text(str(process.pid))
    return True


def stop_preparing(folder: Path) -> None:
    """End the background build if it still runs, and remove the folder."""
    try:
        os.killpg(int((folder / "pid").read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass
    shutil.rmtree(folder, ignore_errors=True)


def prepared(folder: Path, what: str, timeout: float = 600) -> dict:
    """Wait for the background build's ``what`` (``dist`` or ``venv``) and return its record."""
    path, deadline = folder / f"{what}.json", time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"the background build gave no {what} in {timeout:.0f} s: {folder / 'log.txt'}"
            )
        time.sleep(0.2)
    record = json.loads(path.read_text())
    assert "error" not in record, f"the background build of the {what} failed:\n{record['error']}"
    return record


def _write(path: Path, record: dict) -> None:
    fresh = path.with_suffix(".part")
    fresh.write_text(json.dumps(record))
    os.replace(fresh, path)


def _prepare(folder: Path, venv: bool) -> None:
    """The background build: the dists, then the environment, each recorded as it is done."""
    try:
        built = build_dist(ROOT, folder / "work")
        _write(folder / "dist.json", {k: str(v) for k, v in vars(built).items()})
    except BaseException:  # noqa: BLE001 - recorded for the waiting fixtures, which raise it
        _write(folder / "dist.json", {"error": traceback.format_exc()})
        _write(folder / "venv.json", {"error": "the dists were not built"})
        return
    if venv:
        try:
            seconds = make_venv(built.wheel, folder / "venv")
            _write(folder / "venv.json", {"venv": str(folder / "venv"), "seconds": seconds})
        except BaseException:  # noqa: BLE001 - as above
            _write(folder / "venv.json", {"error": traceback.format_exc()})


def run_folder() -> Path | None:
    """The run's background-build folder, when this run has one."""
    name = os.environ.get(DIST_DIR)
    return Path(name) if name and Path(name).is_dir() else None


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory) -> BuiltDist:
    """This checkout's sdist and wheels, built once per run (in the background, where it can)."""
    folder = run_folder()
    if folder is not None and (folder / "started").exists():
        return BuiltDist(**{k: Path(v) for k, v in prepared(folder, "dist").items()})
    return build_dist(ROOT, tmp_path_factory.mktemp("dist"))


if __name__ == "__main__":  # python -m tests.support.dist FOLDER [--venv]: the background build
    # At the lowest priority, it and its pip and build processes: it has until the wheel's tests,
    # late in their worker's run, and it must not slow the real-model tests that run meanwhile (a
    # summary test took 50 s beside it, 23 s without).
    os.nice(19)
    _prepare(Path(sys.argv[1]), "--venv" in sys.argv[2:])
