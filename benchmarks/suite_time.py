"""How long the test suite takes, and where its time goes.

Runs the README's test command and prints its wall time, the number of tests, the time per top
folder (tests/agent, tests/notebook, notebooks, ...) and the 25 slowest tests (setup, call and
teardown together, from pytest's JUnit XML report).

    python benchmarks/suite_time.py                    # pytest in this working tree
    python benchmarks/suite_time.py tests/models       # ... on part of it (pytest's arguments)
    python benchmarks/suite_time.py --burners 2        # with two CPU burners beside it
    python benchmarks/suite_time.py --ci [--ref main]  # CI as it runs: `CI=true bash .ci/run` in a
                                                       # fresh clone (install time, then pytest's)

With ``--ci`` the install time is the time from the start of ``.ci/run`` to pytest's first line
(creating the venv, pip, apt), and the clone is removed afterwards. A burner is a process that
spins a core (``while True: pass``); CI's goal is that two of them make the suite at most 2.5x
slower than on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOWEST = 25
_SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s")


def burners(count: int) -> list[subprocess.Popen]:
    """``count`` processes that each keep a core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def run_streamed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, float | None, str]:
    """Run ``command``, echoing its output; its exit code, wall seconds, the second pytest started
    (its "test session starts" line) and the whole output."""
    started = time.perf_counter()
    pytest_started = None
    lines = []
    with subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if pytest_started is None and "test session starts" in line:
                pytest_started = time.perf_counter() - started
            lines.append(line)
            sys.stdout.write(line)
        code = process.wait()
    return code, time.perf_counter() - started, pytest_started, "".join(lines)


def report(junit: Path) -> None:
    """The time per top folder and the slowest tests, from a JUnit XML report."""
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = (case.get("classname") or "").replace(".", "/") + "::" + (case.get("name") or "")
        cases.append((float(case.get("time") or 0), name))
    by_folder: dict[str, float] = defaultdict(float)
    for seconds, name in cases:
        parts = name.split("/")
        by_folder["/".join(parts[:2]) if parts[0] == "tests" and len(parts) > 2 else parts[0]] += seconds
    print(f"\n{len(cases)} tests, {sum(s for s, _ in cases):.0f} s in tests (setup, call and teardown)")
    print("\nseconds  folder")
    for folder, seconds in sorted(by_folder.items(), key=lambda item: -item[1]):
        print(f"{seconds:7.1f}  {folder}")
    print(f"\nthe {SLOWEST} slowest tests:\nseconds  test")
    for seconds, name in sorted(cases, reverse=True)[:SLOWEST]:
        print(f"{seconds:7.1f}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=0, help="CPU burners to run beside the suite")
    parser.add_argument("--ci", action="store_true", help="run `CI=true bash .ci/run` in a fresh clone")
    parser.add_argument("--ref", default="HEAD", help="with --ci: the commit to clone (default HEAD)")
    args, pytest_args = parser.parse_known_args()
    spinning = burners(args.burners)
    clone = None
    try:
        junit = Path(tempfile.mkdtemp()) / "suite.xml"
        env = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit} -p no:cacheprovider"}
        if args.ci:
            clone = Path(tempfile.mkdtemp(prefix="suite-ci-"))
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", args.ref], check=True)
            command, cwd = ["bash", ".ci/run"], clone
            env["CI"] = "true"
        else:
            command, cwd = [sys.executable, "-m", "pytest", *pytest_args], ROOT
        code, wall, pytest_started, output = run_streamed(command, cwd, env)
    finally:
        for process in spinning:
            process.kill()
        if clone is not None:
            shutil.rmtree(clone, ignore_errors=True)
    summary = _SUMMARY.findall(output)
    print(f"\nexit code {code}; wall {wall:.0f} s with {args.burners} burner(s)")
    if pytest_started is not None:
        print(f"before pytest (install, set-up): {pytest_started:.0f} s")
    if summary:
        counts, seconds = summary[-1]
        print(f"pytest: {counts} in {float(seconds):.0f} s")
    if junit.exists():
        report(junit)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
