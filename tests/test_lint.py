"""The code stays as ruff keeps it: its lint rules (pyproject's [tool.ruff.lint]) and its format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_ruff_finds_nothing():
    done = ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, (
        f"ruff check found (fix with: ruff check --fix .):\n{done.stdout}{done.stderr}"
    )


def test_the_code_is_formatted_as_ruff_formats_it():
    done = ruff("format", "--no-cache", "--check", ".")
    assert done.returncode == 0, f"not formatted (run: ruff format .):\n{done.stdout}{done.stderr}"
