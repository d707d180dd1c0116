"""Shared fixtures. Installed third-party plugins never autoload here: only the built-ins are allowed."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_PLUGINS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nitpicker"])

# Set at import time so subprocesses (the CLI, analyzer workers) inherit the same allow list.
os.environ["NITPICKER_LOAD_PLUGINS"] = ",".join(BUILTIN_PLUGINS)
os.environ.pop("NITPICKER_DISABLE_PLUGINS", None)


@pytest.fixture
def pm():
    """A fresh plugin manager with the built-in plugins and nothing else."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager()


@pytest.fixture
def bare_pm():
    """A plugin manager with the hookspecs and no plugins at all."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager(load=False)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real `nitpicker` console entry point in a subprocess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "nitpicker_cli.main", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli
