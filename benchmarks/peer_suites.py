"""Peers' own test suites with and without meowgent_nb: our pytest plugin must change no outcome.

pytest loads every installed ``pytest11`` plugin in every project of the environment, so with
meowgent_nb installed, our plugin (``pytest_meowgent_nb.py``) runs inside other projects' test
suites. This runs the suites of nbval, nbmake and attrs (their PyPI sdists) in up to four modes
and prints, per suite and mode, passed / failed / skipped / errors, and every test whose outcome
differs from the ``clean`` mode:

- ``clean``: a venv with the peers and their test needs, without meowgent_nb.
- ``plugin``: the same venv with our plugin module loaded (``PYTEST_PLUGINS=pytest_meowgent_nb``,
  the module alone on ``PYTHONPATH``, so it also loads in the pytest runs a suite makes inside
  itself) and the package not importable.
- ``installed``: a second venv, the same packages plus ``pip install -e .`` (no extras): the
  plugin by its entry point, the package importable, its dependencies installed.
- ``installed-off``: that venv with ``-p no:meowgent_nb`` (given to the outer pytest only): tells
  an effect of our dependencies from one of our plugin.

Set up once (sources and venvs in /tmp, never in the repository)::

    pip download --no-deps --no-binary :all: nbval==0.11.0 nbmake==1.5.5 attrs==26.1.0 -d /tmp/peersrc
    (cd /tmp/peersrc && for f in *.tar.gz; do tar xzf $f; done)
    for v in /tmp/peervenv /tmp/peervenv-installed; do python -m venv $v; $v/bin/pip install \\
        pytest==9.2.0 nbval==0.11.0 nbmake==1.5.5 attrs==26.1.0 hypothesis==6.170.17 pympler \\
        cloudpickle pytest-xdist typing-extensions ipykernel nbdime matplotlib sympy pytest-mock \\
        pytest-cov; done
    /tmp/peervenv-installed/bin/pip install -e .

Then ``python benchmarks/peer_suites.py`` (``--suites attrs nbval``, ``--modes clean installed``
to run fewer). A run of all suites in all modes takes half an hour on a loaded two-core machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = {  # name -> (source folder, [(cwd below it, pytest arguments)]): as each project runs them
    "nbval": (
        "nbval-0.11.0",
        [  # tests/Makefile
            ("tests", ["--nbval-current-env", "."]),
            (
                "tests",
                [
                    "--nbval",
                    "--nbval-current-env",
                    "--nbval-sanitize-with",
                    "sanitize_defaults.cfg",
                    "sample_notebook.ipynb",
                ],
            ),
            ("tests", ["--nbval", "--nbval-current-env", "latex-example.ipynb"]),
        ],
    ),
    "nbmake": ("nbmake-1.5.5", [(".", ["tests"])]),
    "attrs": ("attrs-26.1.0", [(".", [])]),  # its pyproject: --strict-markers, --strict-config
}
MODES = ["clean", "plugin", "installed", "installed-off"]


def outcomes(junit: Path, prefix: str) -> dict[str, str]:
    """Each test of a junit XML report: ``prefix::class::name`` -> passed/failed/skipped/error."""
    found: dict[str, str] = {}
    if not junit.exists():
        return {f"{prefix}::<no report>": "error"}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcome = (
            {"failure": "failed", "error": "error", "skipped": "skipped"}.get(kinds[0], "")
            if kinds
            else "passed"
        )
        if "error" in kinds:  # an error in setup or teardown of a test that also passed or failed
            outcome = "error"
        key = f"{prefix}::{case.get('classname')}::{case.get('name')}"
        while key in found:
            key += "+"
        found[key] = outcome
    return found


def run_suite(
    name: str, mode: str, src: Path, venvs: dict[str, Path], plugin_dir: Path
) -> tuple[dict[str, str], float]:
    folder, runs = SUITES[name]
    venv = venvs["installed" if mode.startswith("installed") else "clean"]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "MEOWGENT_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
    extra = ["-p", "no:meowgent_nb"] if mode == "installed-off" else []
    if mode == "plugin":
        env.update(PYTHONPATH=str(plugin_dir), PYTEST_PLUGINS="pytest_meowgent_nb")
    results: dict[str, str] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="peer-suite-") as reports:
        for number, (cwd, args) in enumerate(runs):
            junit = Path(reports) / f"{number}.xml"
            command = [
                str(venv / "bin" / "python"),
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *extra,
                f"--junitxml={junit}",
                *args,
            ]
            subprocess.run(
                command, cwd=src / folder / cwd, env=env, capture_output=True, text=True, timeout=3600
            )
            results.update(outcomes(junit, f"run{number}"))
    return results, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", type=Path, default=Path("/tmp/peersrc"))
    parser.add_argument("--clean-venv", type=Path, default=Path("/tmp/peervenv"))
    parser.add_argument("--installed-venv", type=Path, default=Path("/tmp/peervenv-installed"))
    parser.add_argument("--suites", nargs="+", choices=list(SUITES), default=list(SUITES))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=MODES)
    options = parser.parse_args()
    venvs = {"clean": options.clean_venv, "installed": options.installed_venv}
    check = subprocess.run(
        [str(venvs["clean"] / "bin" / "python"), "-c", "import meowgent_nb"], capture_output=True
    )
    if check.returncode == 0:
        sys.exit(f"{venvs['clean']} has meowgent_nb installed: the clean mode needs a venv without it")
    with tempfile.TemporaryDirectory(prefix="meowgent-plugin-only-") as plugin_dir:
        shutil.copy(ROOT / "pytest_meowgent_nb.py", plugin_dir)  # the module, without the package
        differing = 0
        for name in options.suites:
            print(f"== {name}", flush=True)
            base: dict[str, str] | None = None
            for mode in options.modes:
                results, seconds = run_suite(name, mode, options.src, venvs, Path(plugin_dir))
                counts = Counter(results.values())
                print(
                    f"  {mode:14} passed {counts['passed']:5}  failed {counts['failed']:3}  skipped"
                    f" {counts['skipped']:3}  errors {counts['error']:3}   ({seconds:.0f} s)",
                    flush=True,
                )
                if base is None:
                    base = results
                    for test, outcome in sorted(results.items()):
                        if outcome in ("failed", "error"):
                            print(f"    {outcome} here without meowgent_nb too: {test}")
                    continue
                for test in sorted(set(base) | set(results)):
                    if base.get(test) != results.get(test):
                        differing += 1
                        print(
                            f"    differs: {test}: {base.get(test, 'absent')} -> {results.get(test, 'absent')}"
                        )
        print(f"tests whose outcome differs from the clean mode: {differing}")


if __name__ == "__main__":
    main()
