"""Helpers shared by the test modules (imported as ``support``; conftest names are ambiguous)."""

from __future__ import annotations

import contextlib
import http.server
import importlib.metadata
import io
import os
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_PLUGINS = sorted(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["nitpicker"]
)


class CliResult:
    """What a CLI run left: the exit code and its output as text (the fields of ``subprocess.CompletedProcess``)."""

    def __init__(self, args: list[str], returncode: int, stdout: str, stderr: str) -> None:
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr

    def __repr__(self) -> str:
        return f"CliResult(args={self.args!r}, returncode={self.returncode}, stderr={self.stderr[-2000:]!r})"


# What an in-process run cannot apply, so a run given one of these starts a process: where Python finds
# modules and entry points (a plugin "installed" on PYTHONPATH), read once at a start, and the archive's
# test hook that SIGKILLs the process running the command (it would kill the test worker).
_START_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "NITPICKER_TEST_KILL_AT")


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    subprocess: bool = False,
) -> CliResult:
    """Run the real `nitpicker` CLI (``nitpicker_cli.main.main``) in this process, as a user's run would.

    ``cwd``, ``env`` and ``input`` apply for the run only; stdout and stderr (click, rich, logging) are
    captured as text, as from a child. ``subprocess=True`` (and any ``env`` naming where Python finds
    modules, e.g. PYTHONPATH) runs it in a new interpreter instead: what a test about processes needs.
    Past ``timeout`` an in-process run is interrupted as Ctrl-C would (SIGINT, so the command stops cleanly)
    and its stderr says it timed out.
    """
    if subprocess or any(name in (env or {}) for name in _START_ENV):
        return run_cli_subprocess(*args, cwd=cwd, env=env, input=input, timeout=timeout)
    return _run_in_process(list(args), cwd=cwd, env=env, input=input, timeout=timeout)


def run_cli_subprocess(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> CliResult:
    """Run the real `nitpicker` console entry point in a new interpreter (tests about processes)."""
    full_env = dict(os.environ, **(env or {}))
    done = subprocess.run(
        [sys.executable, "-m", "nitpicker_cli.main", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
    )
    return CliResult(list(args), done.returncode, done.stdout, done.stderr)


class _Output(io.TextIOWrapper):
    """A captured stdout/stderr: text over bytes (``.buffer`` works), never a terminal, as a pipe."""

    def __init__(self, name: str) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)
        self._name = name

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._name

    def text(self) -> str:
        self.flush()
        raw = self.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
        return raw.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as text=True reads a pipe


_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM") if hasattr(signal, name)
)


def _run_in_process(
    args: list[str], cwd: Path | None, env: dict[str, str] | None, input: str | None, timeout: float
) -> CliResult:
    """``nitpicker_cli.main.main(args)`` with the process state it may change saved and put back after."""
    import _thread
    import logging
    import threading
    import traceback

    from nitpicker_cli.main import main

    assert threading.current_thread() is threading.main_thread(), "the in-process CLI runs on the main thread"
    saved_environ = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_argv = sys.argv
    saved_signals = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    root = logging.getLogger()
    saved_root = root.handlers[:], root.level
    saved_levels = {
        name: logger.level
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    out, err = _Output("<stdout>"), _Output("<stderr>")
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _thread.interrupt_main(signal.SIGINT)

    watchdog = threading.Timer(timeout, expire)
    watchdog.daemon = True
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(input or "")
        sys.stdout, sys.stderr = out, err
        sys.argv = ["nitpicker", *args]
        # logging as in a fresh process: no handlers, so the CLI's basicConfig writes to the captured stderr
        # (pytest's own capture handlers come back afterwards)
        root.handlers = []
        root.setLevel(logging.WARNING)
        # Ctrl-C as a process started from a terminal has it (a test worker may ignore SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            watchdog.start()
            code = main(args)
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            if not expired.is_set():
                raise  # the user's Ctrl-C of the test run
            code = 130
        except Exception:  # what an uncaught exception does to a process: a traceback and exit 1
            traceback.print_exc()
            code = 1
    finally:
        watchdog.cancel()
        if expired.is_set():
            print(f"run_cli: timed out after {timeout:.0f} s and was interrupted", file=err)
        for handler in root.handlers:
            handler.flush()
            if getattr(handler, "stream", None) in (out, err):
                handler.close()
        root.handlers, _ = saved_root
        root.setLevel(saved_root[1])
        for name, logger in logging.root.manager.loggerDict.items():
            if isinstance(logger, logging.Logger):
                logger.setLevel(saved_levels.get(name, logging.NOTSET))
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environ)
    return CliResult(args, code, out.text(), err.text())


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


def stub_count(archive: Path, sql: str) -> int:
    """A count read from the live working database of ``archive`` (0 while it does not exist yet)."""
    import sqlite3

    db = archive.with_name(archive.name + ".stub") / "archive.db"
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:  # created but not initialised yet
        return 0


def crawled_pages(archive: Path) -> int:
    """Pages a running crawl of ``archive`` has stored so far."""
    return stub_count(archive, "SELECT COUNT(*) FROM commit_page WHERE last_crawled_at IS NOT NULL")


def wait_until(condition: object, what: str, timeout: float = 120.0) -> None:
    """Poll ``condition()`` until it is true; fail naming ``what`` after a generous deadline."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _hangup_by_default() -> None:
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_DFL)


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
            # as from a terminal: a suite run under nohup (or a CI runner) ignores SIGHUP, and the child would
            # inherit that (nitpicker keeps an ignored SIGHUP ignored)
            preexec_fn=_hangup_by_default,
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


def structured_data_env(tmp: Path) -> dict[str, str]:
    """PYTHONPATH that makes `structured-data` a plugin by entry point, as an installed nitpicker has it.

    An environment installed before the plugin existed lacks the entry point: a distribution of one
    entry point in ``tmp`` gives it (nothing when the installed nitpicker already declares it)."""
    paths = [str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]
    if not any(ep.name == "structured-data" for ep in importlib.metadata.entry_points(group="nitpicker")):
        info = tmp / "nitpicker_structured_data_entry-0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: nitpicker-structured-data-entry\nVersion: 0\n"
        )
        (info / "entry_points.txt").write_text("[nitpicker]\nstructured-data = nitpicker_structured_data\n")
        paths.insert(0, str(tmp))
    return {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler], state: dict[str, Any]) -> Iterator[str]:
    """A threaded HTTP server on 127.0.0.1 with ``handler`` (which reads ``self.server.state``): its base URL.

    ``state["release"]``, an Event when present, is set before the server stops, so that a request still held
    lets go.
    """
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.state = state  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        release = state.get("release")
        if release is not None:
            release.set()
        server.shutdown()
        server.server_close()
