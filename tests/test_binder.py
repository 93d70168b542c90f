"""binder/: the mybinder.org setup (repo2docker), checked offline.

The YAML is parsed for real, both scripts go through ``bash -n``, and then run for real with a fake
``ollama`` first on PATH: a small bash script that records its arguments (and, for ``serve``, its
environment), answers ``list`` once its ``serve`` is up, and stops on SIGTERM. ``start``'s
background preload talks to a local test server standing in for Ollama's HTTP API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from meowgent_nb.models.ollama import DEFAULT_OPTIONS
from meowgent_nb.models.resolve import DEFAULT_MODEL

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
SCRIPTS = ["postBuild", "start"]
MODEL_EXPR = 'python -c "from meowgent_nb.models.resolve import DEFAULT_MODEL; print(DEFAULT_MODEL)"'
BASH = shutil.which("bash") or "/bin/bash"

FAKE_OLLAMA = r"""#!/bin/bash
# A stand-in for the ollama CLI: records each call in $FAKE_OLLAMA_DIR/calls.log.
dir="$FAKE_OLLAMA_DIR"
printf '%s\n' "$*" >>"$dir/calls.log"
case "${1:-}" in
    serve)
        echo $$ >"$dir/serve.pid"
        env | grep -E '^(OLLAMA|MEOWGENT)_' | sort >"$dir/serve.env"
        trap 'echo "serve stopped" >>"$dir/calls.log"; kill "$sleeper" 2>/dev/null; exit 0' TERM INT
        echo "fake ollama serve starting on $OLLAMA_HOST"
        sleep 0.3
        if [ "${FAKE_OLLAMA_READY:-1}" = 1 ]; then
            touch "$dir/ready"
        fi
        sleep 30 &
        sleeper=$!
        wait "$sleeper"
        ;;
    list)
        [ -e "$dir/ready" ] || { echo "Error: could not connect to ollama app" >&2; exit 1; }
        echo "NAME    ID    SIZE    MODIFIED"
        ;;
    pull)
        echo "pulling manifest"
        echo "success"
        ;;
esac
exit 0
"""


@pytest.fixture
def fake_env(tmp_path: Path) -> dict[str, str]:
    """A minimal environment: fake ``ollama`` and the test's ``python`` first on PATH, HOME in tmp."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ollama = bin_dir / "ollama"
    ollama.write_text(FAKE_OLLAMA)
    # A wrapper, not a symlink: a symlinked venv python would not find its pyvenv.cfg.
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for path in (ollama, python):
        path.chmod(0o755)
    calls_dir = tmp_path / "ollama-calls"
    calls_dir.mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    # Nothing from the outer environment: no OLLAMA_*, MEOWGENT_* or proxy variables leak in.
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "TMPDIR": str(tmp_path / "tmp"),
        "LANG": "C.UTF-8",
        "FAKE_OLLAMA_DIR": str(calls_dir),
    }


def _run(
    args: list[str], env: dict[str, str], timeout: float = 60
) -> tuple[subprocess.CompletedProcess[str], list[str], bool]:
    """Run ``args`` in its own process group, and end whatever of that group is left afterwards.

    Returns the result, the fake ollama's calls when ``args`` exited, and whether the fake server
    was still running then (both read before the group is ended, which stops the server too).
    """
    proc = subprocess.Popen(
        args,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        calls = _calls(env)
        pid_file = Path(env["FAKE_OLLAMA_DIR"]) / "serve.pid"
        serving = pid_file.exists() and _alive(int(pid_file.read_text()))
    finally:
        _kill_group(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, out, err), calls, serving


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _calls(env: dict[str, str]) -> list[str]:
    path = Path(env["FAKE_OLLAMA_DIR"]) / "calls.log"
    return path.read_text().splitlines() if path.exists() else []


def _serve_env(env: dict[str, str]) -> dict[str, str]:
    text = (Path(env["FAKE_OLLAMA_DIR"]) / "serve.env").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _wait_for(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _code_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


# --- environment.yml ---------------------------------------------------------------------------


def _environment() -> dict:
    return yaml.safe_load((BINDER / "environment.yml").read_text())


def test_environment_uses_only_conda_forge():
    assert _environment()["channels"] == ["conda-forge"]


def test_environment_has_python_and_cpu_ollama():
    deps = _environment()["dependencies"]
    conda_specs = [dep for dep in deps if isinstance(dep, str)]
    assert "python=3.11" in conda_specs
    assert "pip" in conda_specs
    ollama = [spec for spec in conda_specs if re.split(r"[=<>\s\[]", spec)[0] == "ollama"]
    # name=version=build: any version, a CPU build (conda-forge build strings are "cpu_h<hash>_<n>";
    # the CUDA ones start with "cuda_").
    assert ollama == ["ollama=*=cpu_*"]


def test_environment_pip_installs_this_repository_with_test_extra():
    deps = _environment()["dependencies"]
    pip_sections = [dep["pip"] for dep in deps if isinstance(dep, dict) and "pip" in dep]
    assert len(pip_sections) == 1
    (line,) = [line for line in pip_sections[0] if line.startswith("-e ")]
    target = line.split(None, 1)[1]
    path, extras = re.fullmatch(r"([^\[]+)(?:\[(.*)\])?", target).groups()
    # pip runs from the environment file's folder (conda and micromamba alike), so the path is
    # relative to binder/.
    assert (BINDER / path).resolve() == REPO
    assert extras == "test"
    assert (REPO / "pyproject.toml").is_file()


# --- the scripts, statically -------------------------------------------------------------------


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_is_executable_bash_with_set_e(name: str):
    path = BINDER / name
    assert path.stat().st_mode & stat.S_IXUSR, f"chmod +x binder/{name}"
    text = path.read_text()
    first = text.splitlines()[0]
    assert first in ("#!/bin/bash", "#!/usr/bin/env bash")
    assert _code_lines(text)[0].startswith("set -e")


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_passes_bash_syntax_check(name: str):
    result = subprocess.run(
        [BASH, "-n", str(BINDER / name)], check=False, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr


def test_start_ends_with_exec():
    lines = [line.strip() for line in (BINDER / "start").read_text().splitlines() if line.strip()]
    assert lines[-1] == 'exec "$@"'


def test_postbuild_reads_the_notebooks_default_model():
    assert MODEL_EXPR in (BINDER / "postBuild").read_text()
    assert MODEL_EXPR in (BINDER / "start").read_text()


def test_default_model_is_small():
    assert DEFAULT_MODEL == "qwen2.5:0.5b"  # 0.5B: mybinder gives 1-2 GB of RAM with the kernel


def test_readme_launch_url_opens_the_getting_started_notebook():
    readme = (BINDER / "README.md").read_text()
    urls = re.findall(r"https://mybinder\.org/v2/gh/OWNER/REPO/HEAD\?urlpath=lab/tree/(\S+?\.ipynb)", readme)
    assert urls == ["docs/getting-started.ipynb", "docs/getting-started.ipynb"]  # the URL and the badge
    assert (REPO / "docs" / "getting-started.ipynb").is_file()


# --- postBuild, run ----------------------------------------------------------------------------


def test_postbuild_pulls_the_default_model_and_stops_the_server(fake_env: dict[str, str]):
    result, calls, serving = _run([str(BINDER / "postBuild")], fake_env)
    assert result.returncode == 0, result.stderr
    assert not serving  # postBuild stopped the server itself before it exited
    assert calls.count("serve") == 1
    assert [call for call in calls if call.startswith("pull")] == [f"pull {DEFAULT_MODEL}"]
    pull = calls.index(f"pull {DEFAULT_MODEL}")
    # The server starts in the background, so its record and the first poll may come in either
    # order; what matters is that both came before the pull.
    assert calls.index("serve") < pull
    assert "list" in calls[:pull]  # waited for the server before pulling
    assert "serve stopped" in calls[pull + 1 :]

    home = Path(fake_env["HOME"])
    served = _serve_env(fake_env)
    assert served["OLLAMA_HOST"] == "127.0.0.1:11434"
    assert Path(served["OLLAMA_MODELS"]) == home / ".ollama" / "models"
    assert (home / ".ollama" / "models").is_dir()

    assert "ollama serve stopped" in result.stdout


def test_postbuild_fails_clearly_when_the_server_never_answers(fake_env: dict[str, str]):
    env = {**fake_env, "FAKE_OLLAMA_READY": "0", "OLLAMA_WAIT_SECONDS": "1"}
    started = time.monotonic()
    result, calls, serving = _run([str(BINDER / "postBuild")], env)
    assert time.monotonic() - started < 20
    assert result.returncode != 0
    assert "ollama serve did not answer on 127.0.0.1:11434 within 1 s" in result.stderr
    assert "fake ollama serve starting" in result.stderr  # the tail of the server's log
    assert not serving  # stopped on the way out, too
    assert not [call for call in calls if call.startswith("pull")]
    assert "serve stopped" in calls


# --- start, run --------------------------------------------------------------------------------


def test_start_serves_exports_the_model_preloads_and_execs(fake_env: dict[str, str], httpserver):
    httpserver.expect_request("/api/generate", method="POST").respond_with_json(
        {
            "model": DEFAULT_MODEL,
            "created_at": "2026-01-01T00:00:00Z",
            "response": "",
            "done": True,
            "done_reason": "load",
        }
    )
    env = {**fake_env, "OLLAMA_HOST": f"127.0.0.1:{httpserver.port}"}
    names = [
        "MEOWGENT_MODEL",
        "OLLAMA_HOST",
        "OLLAMA_MAX_LOADED_MODELS",
        "OLLAMA_NUM_PARALLEL",
        "OLLAMA_KEEP_ALIVE",
        "OLLAMA_MODELS",
    ]
    code = textwrap.dedent(
        f"""
        import json, os
        print('started')
        print(json.dumps({{name: os.environ.get(name) for name in {names!r}}}))
        """
    )
    started = time.monotonic()
    result, calls, serving = _run([str(BINDER / "start"), "python", "-c", code], env, timeout=30)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    out_lines = result.stdout.splitlines()
    assert out_lines[0] == "started"
    assert took < 10  # start must hand over to Jupyter within seconds

    exported = json.loads(out_lines[1])
    home = Path(env["HOME"])
    assert exported == {
        "MEOWGENT_MODEL": DEFAULT_MODEL,
        "OLLAMA_HOST": env["OLLAMA_HOST"],
        "OLLAMA_MAX_LOADED_MODELS": "1",
        "OLLAMA_NUM_PARALLEL": "1",
        "OLLAMA_KEEP_ALIVE": "24h",
        "OLLAMA_MODELS": str(home / ".ollama" / "models"),
    }

    # The server runs in the background, past the exec (`_run` ends it afterwards).
    assert calls.count("serve") == 1
    assert serving
    served = _serve_env(env)
    for name in (
        "OLLAMA_HOST",
        "OLLAMA_MAX_LOADED_MODELS",
        "OLLAMA_NUM_PARALLEL",
        "OLLAMA_KEEP_ALIVE",
        "OLLAMA_MODELS",
    ):
        assert served[name] == exported[name]
    assert (home / ".ollama" / "serve.log").is_file()


def test_start_preloads_the_model_in_the_background(fake_env: dict[str, str], httpserver):
    httpserver.expect_request("/api/generate", method="POST").respond_with_json(
        {
            "model": DEFAULT_MODEL,
            "created_at": "2026-01-01T00:00:00Z",
            "response": "",
            "done": True,
            "done_reason": "load",
        }
    )
    env = {**fake_env, "OLLAMA_HOST": f"127.0.0.1:{httpserver.port}"}
    # "$@" stays alive until the preload request arrives (or 20 s pass), like Jupyter would.
    code = textwrap.dedent(
        f"""
        import pathlib, time
        print('started', flush=True)
        deadline = time.monotonic() + 20
        flag = pathlib.Path({str(Path(env["FAKE_OLLAMA_DIR"]) / "seen")!r})
        while time.monotonic() < deadline and not flag.exists():
            time.sleep(0.05)
        """
    )
    proc = subprocess.Popen(
        [str(BINDER / "start"), "python", "-c", code],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        arrived = _wait_for(lambda: len(httpserver.log) > 0, timeout=20)
        (Path(env["FAKE_OLLAMA_DIR"]) / "seen").touch()
        out, err = proc.communicate(timeout=30)
    finally:
        _kill_group(proc.pid)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out.splitlines()[0] == "started"
    assert arrived, (Path(env["HOME"]) / ".ollama" / "serve.log").read_text()

    request, _ = httpserver.log[0]
    body = json.loads(request.get_data())
    assert body["model"] == DEFAULT_MODEL
    assert not body.get("prompt")  # an empty generate request only loads the model
    assert body["options"]["num_ctx"] == DEFAULT_OPTIONS["num_ctx"]
    assert "list" in _calls(env)  # it waited for the server first
