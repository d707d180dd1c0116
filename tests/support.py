"""Helpers shared by the test modules (imported as ``support``; conftest names are ambiguous)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_PLUGINS = sorted(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nitpicker"]
)


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real `nitpicker` console entry point in a subprocess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "nitpicker_cli.main", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
    )


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a child the test will Ctrl-C: SIGINT at its default, as a terminal would start it.

    A child inherits an ignored SIGINT, and Python then never turns Ctrl-C into KeyboardInterrupt; a test
    worker can end up ignoring SIGINT (seen in CI under pytest-xdist), which made these tests hang.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


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

    def __init__(
        self, *args: str, cwd: Path, env: dict[str, str] | None = None, own_group: bool = False
    ) -> None:
        import threading

        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nitpicker_cli.main", *args],
            cwd=cwd,
            env=dict(os.environ, **(env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=own_group,
        )
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
        wait_until(
            lambda: any(text in line for line in self.lines) or self.proc.poll() is not None,
            f"{text!r} on stderr",
            timeout,
        )
        assert any(text in line for line in self.lines), (
            f"exited {self.proc.returncode} before {text!r}:\n{self.stderr}"
        )

    def wait(self, timeout: float = 300.0) -> int:
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=30)
        return self.proc.returncode


class McpStdio:
    """`nitpicker mcp` in a subprocess with one initialized MCP client session on a background event loop.

    Tests submit calls from their own thread; ``gather`` sends several at once and each must answer within
    ``deadline`` seconds (a hang fails the test instead of blocking it).
    """

    def __init__(
        self, cwd: Path, errlog: Any, env: dict[str, str] | None = None, *args: str, deadline: float = 90.0
    ) -> None:
        import asyncio
        import threading

        from mcp import StdioServerParameters

        self.deadline = deadline
        self.params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "nitpicker_cli.main", *args, "mcp"],
            env=dict(os.environ) if env is None else env,
            cwd=cwd,
        )
        self.errlog = errlog
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready = threading.Event()
        self.session: Any = None
        self.init: Any = None
        self.main = asyncio.run_coroutine_threadsafe(self._main(), self.loop)
        if not self.ready.wait(deadline):
            self.main.result(timeout=1)  # raises what went wrong
            raise RuntimeError("the MCP server did not initialize")

    async def _main(self) -> None:
        import asyncio

        from mcp import ClientSession, stdio_client

        self.stop = asyncio.Event()
        async with stdio_client(self.params, errlog=self.errlog) as (read, write):
            async with ClientSession(read, write) as session:
                self.init = await session.initialize()
                self.session = session
                self.ready.set()
                await self.stop.wait()

    def run(self, coroutine: Any) -> Any:
        import asyncio

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=self.deadline + 30)

    def gather(self, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
        """Send every call at once; each must answer within the deadline."""
        import asyncio

        session = self.session
        assert session is not None

        async def all_of() -> list[Any]:
            return await asyncio.gather(
                *(asyncio.wait_for(session.call_tool(name, args), self.deadline) for name, args in calls)
            )

        return self.run(all_of())

    def call(self, tool: str, **arguments: Any) -> Any:
        return self.gather((tool, arguments))[0]

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        try:
            self.main.result(timeout=60)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


def _writable(directory: Path) -> bool:
    try:
        (directory / "probe").touch()
    except OSError:
        return False
    (directory / "probe").unlink()
    return True


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """Make ``directory`` unwritable for whoever runs the tests, root included, and undo it afterwards.

    Root ignores permission bits, so as root the directory is made immutable (``chattr +i``, which root
    obeys); any other user gets mode 0555.
    """
    if os.geteuid() == 0:
        made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, text=True)
        undo = ["chattr", "-i", str(directory)]
        if made.returncode != 0:
            # no way to make a directory unwritable for root here: the case cannot be set up, so it is skipped, not passed
            pytest.skip(f"running as root and `chattr +i` fails on this filesystem: {made.stderr.strip()}")
    else:
        directory.chmod(0o555)
        undo = ["chmod", "755", str(directory)]
    try:
        if _writable(directory):
            pytest.skip("cannot make a directory unwritable here")
        yield directory
    finally:
        subprocess.run(undo, check=True)
