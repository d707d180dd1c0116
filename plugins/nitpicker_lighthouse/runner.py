"""Find the lighthouse CLI and Chromium, run one audit, and leave no Chromium behind whatever happens."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import uuid
from typing import Any

import nitpicker_core
from nitpicker_core import NotConfigured, node_prefix

PINNED = "12.2.3"  # 12.3–13.4 ship locks npm ci refuses, 13 needs Node 22 (bin/install-lighthouse)
MISSING = f"lighthouse binary not found; install it with: npm i -g lighthouse@{PINNED} (or run bin/install-lighthouse)"
# chrome-launcher starts Chromium in a session of its own; this switch marks it so it can always be reaped
MARKER = "--nitpicker-lighthouse"


def find_lighthouse(setting: str = "") -> str:
    """The lighthouse executable: the ``binary`` setting, else ``lighthouse`` on PATH, else the local install.

    Raises NotConfigured (the plugin shows as unavailable) when there is none, or no node to run it.
    """
    if setting:
        found = shutil.which(setting)
        if found is None:
            raise NotConfigured("setting plugins.lighthouse.binary does not name an executable; " + MISSING)
    else:
        local = node_prefix() / "node_modules" / ".bin" / "lighthouse"
        found = shutil.which("lighthouse") or (str(local) if os.access(local, os.X_OK) else None)
        if found is None:
            raise NotConfigured(MISSING)
    if shutil.which("node") is None:
        raise NotConfigured("node not found on PATH; lighthouse needs Node.js >= 18")
    return found


def find_chromium() -> str:
    found = nitpicker_core.find_browser()  # NITPICKER_BROWSER, Playwright's build, Debian's
    if found is None:
        raise NotConfigured("no Chromium found for lighthouse (install chromium or set NITPICKER_BROWSER)")
    return str(found)


def chrome_flags(marker: str) -> str:
    """``--chrome-flags`` as one string. Lighthouse parses it with yargs-parser, which takes a quoted
    ``'--a=b c'`` as the value of the switch before it, so only the value is quoted: ``--a="b c"``."""
    args = ["--headless=new", "--no-sandbox", *nitpicker_core.browser_args(), marker]
    parts = []
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and any(c.isspace() or c in "'\"" for c in value):
            value = value.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'{key}="{value}"')
        else:
            parts.append(shlex.quote(arg))
    return " ".join(parts)


def run_lighthouse(binary: str, chromium: str, url: str, extra: list[str], timeout: float) -> dict[str, Any]:
    """Audit ``url``; the parsed JSON report (RuntimeError when lighthouse fails or times out)."""
    marker = f"{MARKER}={uuid.uuid4().hex}"
    command = [
        binary,
        url,
        "--output=json",
        "--output-path=stdout",
        "--quiet",
        "--disable-full-page-screenshot",
        f"--chrome-flags={chrome_flags(marker)}",
        *extra,
    ]
    env = dict(os.environ, CHROME_PATH=chromium)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=timeout, start_new_session=True
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"lighthouse did not finish within {timeout:g} s") from None
    finally:
        nitpicker_core.kill_marked(marker)  # Chromium that lighthouse left behind, with its children
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(
            f"lighthouse exited with status {done.returncode}: {lines[-1][:300] if lines else ''}"
        )
    report = json.loads(done.stdout)
    problem = report.get("runtimeError")
    if problem:
        raise RuntimeError(f"lighthouse: {problem.get('code')}: {problem.get('message', '')}".strip())
    return report
