"""The package as a package index shows it and pip installs it: the sdist and wheels built from the
clean checkout (tests/support/dist.py) pass ``twine check --strict``, the sdist builds the same
wheel as the tree, and the metadata names the license, the docs site and the changelog. Also the
one version (pyproject.toml's, which CHANGELOG.md's newest release names) and the Read the Docs
config, which must build the site the README's command builds.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest
import tomllib
import yaml

from meowgent_nb.course import GETTING_STARTED, is_course_file
from tests.support.dist import ROOT, BuiltDist, built_dist, clean_copy, wheel_record  # noqa: F401

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DOCS_SITE = "https://meowgent-nb.readthedocs.io/en/latest/"
CACHES = {"__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".venv", "_build"}


# --- the built distributions -----------------------------------------------------------------


def test_twine_check_strict_passes_on_the_sdist_and_both_wheels(built_dist: BuiltDist):
    files = [built_dist.sdist, built_dist.wheel, built_dist.wheel_from_tree]
    done = subprocess.run(
        [sys.executable, "-m", "twine", "--no-color", "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "1000"},  # one line per file
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(re.findall(r"Checking (\S+): PASSED\n", done.stdout)) == sorted(map(str, files))


def test_the_sdist_builds_the_wheel_the_tree_builds(built_dist: BuiltDist):
    from_sdist, from_tree = wheel_record(built_dist.wheel), wheel_record(built_dist.wheel_from_tree)
    assert sorted(from_sdist.keys() ^ from_tree.keys()) == []
    changed = sorted(path for path in from_sdist if from_sdist[path] != from_tree[path])
    assert changed == []
    assert "meowgent_nb/__init__.py" in from_sdist and "pytest_meowgent_nb.py" in from_sdist


def test_the_sdist_holds_the_license_changelog_and_readme_and_no_cache(built_dist: BuiltDist):
    names = built_dist.sdist_names()
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "PKG-INFO"} <= set(names)
    assert [name for name in names if CACHES & set(Path(name).parts) or name.endswith(".pyc")] == []
    # The suite runs from the repository (it needs notebooks/ and docs/): no half of it in the sdist.
    # Of docs/, only the getting-started notebook, which the wheel ships with the course (setup.py).
    assert [name for name in names if name.startswith(("tests/", "docs/"))] == ["docs/getting-started.ipynb"]
    course = {p.name for p in (ROOT / "notebooks").iterdir() if is_course_file(p)}
    assert {name.removeprefix("notebooks/") for name in names if name.startswith("notebooks/")} == course
    assert "setup.py" in names


def test_the_wheel_ships_the_course(built_dist: BuiltDist):
    shipped = {
        path.removeprefix("meowgent_nb/course/notebooks/")
        for path in wheel_record(built_dist.wheel)
        if path.startswith("meowgent_nb/course/notebooks/")
    }
    assert shipped == {p.name for p in (ROOT / "notebooks").iterdir() if is_course_file(p)} | {
        GETTING_STARTED
    }


def test_the_metadata_names_the_license_urls_classifiers_and_readme(built_dist: BuiltDist):
    with zipfile.ZipFile(built_dist.wheel) as wheel:
        info = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
        metadata = HeaderParser().parsestr(wheel.read(info).decode())
        licence = wheel.read(info.replace("METADATA", "licenses/LICENSE")).decode()
    assert metadata["License-Expression"] == "MIT" and metadata.get_all("License-File") == ["LICENSE"]
    assert licence == (ROOT / "LICENSE").read_text() and licence.startswith("MIT License\n")
    assert metadata.get_all("Project-URL") == [
        f"Documentation, {DOCS_SITE}",
        f"Changelog, {DOCS_SITE}changelog.html",
    ]
    classifiers = metadata.get_all("Classifier")
    assert {
        "Framework :: IPython",
        "Framework :: Jupyter",
        "Framework :: Jupyter :: JupyterLab :: 4",
        "Programming Language :: Python :: 3.11",
    } <= set(classifiers)
    # Only the Python versions CI runs the suite on (.ci/run's python3 is 3.11).
    versions = [c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r".*Python :: 3\.\d+", c)]
    assert versions == ["3.11"]
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload() == (ROOT / "README.md").read_text()


def test_the_clean_copy_holds_only_what_git_tracks(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg" / "__pycache__").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (repo / "notes.txt").write_text("untracked\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "add", "pkg/mod.py", ".gitignore"], cwd=repo, check=True)
    (repo / "pkg" / "mod.py").write_text("x = 2\n")  # an edit not yet staged: the tree's text goes
    copy = clean_copy(repo, tmp_path / "copy")
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()) == [
        ".gitignore",
        "pkg/mod.py",
    ]
    assert (copy / "pkg" / "mod.py").read_text() == "x = 2\n"


# --- one version -----------------------------------------------------------------------------


def newest_release(changelog: str) -> str:
    """The version of the newest release heading (``## [0.1.0] - 2026-12-05``) of a Keep a Changelog
    text, past an ``## [Unreleased]`` section."""
    versions = [v for v in re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE) if v != "Unreleased"]
    assert versions, "CHANGELOG.md has no release heading: write `## [VERSION] - YYYY-MM-DD`"
    return versions[0]


def test_the_changelogs_newest_release_is_the_packages_version():
    assert newest_release((ROOT / "CHANGELOG.md").read_text()) == PROJECT["version"]


def test_the_newest_release_is_read_past_unreleased():
    text = "# Changelog\n\n## [Unreleased]\n\n- x\n\n## [0.2.0] - 2027-01-02\n\n## [0.1.0] - 2026-12-05\n"
    assert newest_release(text) == "0.2.0"
    with pytest.raises(AssertionError, match="no release heading"):
        newest_release("# Changelog\n\n## [Unreleased]\n")


def test_the_docs_site_shows_the_changelog():
    # The page includes the file, so the site and the repository cannot disagree.
    assert (ROOT / "docs" / "changelog.md").read_text() == "```{include} ../CHANGELOG.md\n```\n"
    assert "changelog" in (ROOT / "docs" / "index.md").read_text().split()


# --- Read the Docs ---------------------------------------------------------------------------


def readme_docs_command() -> list[str]:
    """The README's command that builds the docs site, as words."""
    command = re.search(
        r"^pip install -e \"\.\[docs\]\" && (sphinx-build .*)$", (ROOT / "README.md").read_text(), re.M
    )
    assert command, "README.md no longer says how to build the docs site"
    return shlex.split(command.group(1))


def test_read_the_docs_builds_the_site_the_readme_builds():
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text())
    # README: sphinx-build -W -b html docs docs/_build/html, after pip install -e ".[docs]".
    words = readme_docs_command()
    assert words[:4] == ["sphinx-build", "-W", "-b", "html"]
    source = words[4]
    assert config["version"] == 2
    assert config["build"]["os"].startswith("ubuntu-") and config["build"]["tools"] == {"python": "3.11"}
    assert config["python"]["install"] == [{"method": "pip", "path": ".", "extra_requirements": ["docs"]}]
    assert config["sphinx"] == {
        "configuration": f"{source}/conf.py",
        "builder": "html",
        "fail_on_warning": True,  # sphinx-build -W
    }
    assert (ROOT / config["sphinx"]["configuration"]).is_file()


def test_the_docs_extra_holds_what_docs_conf_uses():
    names = [re.split(r"[<>=\[; ]", req, maxsplit=1)[0] for req in PROJECT["optional-dependencies"]["docs"]]
    assert names == ["sphinx", "myst-nb", "pydata-sphinx-theme"]
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert '"myst_nb"' in conf and 'html_theme = "pydata_sphinx_theme"' in conf
