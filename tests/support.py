"""Helpers shared by the test modules (imported as ``support``; conftest names are ambiguous)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_PLUGINS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nitpicker"])


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real `nitpicker` console entry point in a subprocess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "nitpicker_cli.main", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=timeout)


def crawl_subtree(url: str, workdir: Path, *flags: str) -> Path:
    """Crawl ``url`` and what is below it into ``workdir/crawl.nitpicker`` with the real CLI (2 workers)."""
    archive = workdir / "crawl.nitpicker"
    result = run_cli("crawl", "-o", str(archive), "--parallels", "2", *flags, url, cwd=workdir, timeout=300)
    assert result.returncode == 0, result.stderr
    return archive
