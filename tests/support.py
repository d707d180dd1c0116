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


def server_hits(site: str, path: str) -> int:
    """How many requests the test site has answered for ``path`` so far (its /__counts endpoint)."""
    import json
    import urllib.request

    with urllib.request.urlopen(f"{site}/__counts", timeout=30) as response:
        return int(json.load(response).get(path, 0))


def wait_until(condition: object, what: str, timeout: float = 120.0) -> None:
    """Poll ``condition()`` until it is true; fail naming ``what`` after a generous deadline."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


class RunningCli:
    """The real `nitpicker` CLI running in the background, its stderr collected line by line.

    ``own_group=True`` starts it in a process group of its own so ``interrupt_group()`` can send SIGINT
    the way a terminal's Ctrl-C does: to the whole foreground group, children included.
    """

    def __init__(self, *args: str, cwd: Path, env: dict[str, str] | None = None, own_group: bool = False) -> None:
        import threading

        self.lines: list[str] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "nitpicker_cli.main", *args], cwd=cwd,
                                     env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=own_group)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def interrupt_group(self) -> None:
        import signal

        os.killpg(self.proc.pid, signal.SIGINT)

    def wait_for_line(self, text: str, timeout: float = 120.0) -> None:
        wait_until(lambda: any(text in line for line in self.lines) or self.proc.poll() is not None,
                   f"{text!r} on stderr", timeout)
        assert any(text in line for line in self.lines), f"exited {self.proc.returncode} before {text!r}:\n{self.stderr}"

    def wait(self, timeout: float = 300.0) -> int:
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=30)
        return self.proc.returncode
