"""The troubleshooting page's line (docs/troubleshooting.md): a kernel config that loads the extension in every kernel, so a
``%%agent`` cell works without ``%load_ext`` (IPython gives an unloaded package no way to suggest it)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.support.kernel_driver import Kernel

README = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"
CHECK = 'print(get_ipython().find_cell_magic("agent") is not None)'


def _config_line() -> str:
    found = re.findall(r"`(c\.InteractiveShellApp\.extensions = [^`]+)`", README.read_text())
    assert len(found) == 1, found
    return found[0]


def _agent_magic_in_a_fresh_kernel(ipython_dir: Path) -> str:
    kernel = Kernel(str(ipython_dir), env={**os.environ, "IPYTHONDIR": str(ipython_dir)})
    try:
        return kernel.ok(CHECK).stdout
    finally:
        kernel.shutdown()


def test_the_readmes_kernel_config_loads_the_extension_in_every_kernel(tmp_path):
    plain, configured = tmp_path / "plain", tmp_path / "configured"
    plain.mkdir()
    profile = configured / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(_config_line() + "\n")
    assert _agent_magic_in_a_fresh_kernel(plain) == "False\n"  # the control: no %%agent without it
    assert _agent_magic_in_a_fresh_kernel(configured) == "True\n"
