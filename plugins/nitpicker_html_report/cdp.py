"""Chromium driven over ``--remote-debugging-pipe`` to print one self-contained page: the DevTools protocol's
JSON messages on two pipes, without Playwright's Node driver.

Printing a report needs five commands (open a tab, load the file, print, read the stream, close). Through
Playwright they cost its Node driver, ~70-125 MB at the peak of a PDF print, as much as the page's renderer
(``benchmarks/report_throughput.py --to pdf``); Chromium reads commands from file descriptor 3 and writes
answers and events on 4, each message NUL-terminated.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: seconds one command may take (a large report's print included) before the browser is given up on
TIMEOUT = 300.0
#: bytes asked for per IO.read of the printed PDF's stream
CHUNK = 1 << 20
BASE_ARGS = (
    "--headless",
    "--no-sandbox",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-sync",
    "--mute-audio",
    "--hide-scrollbars",
)


class BrowserError(RuntimeError):
    """Chromium exited, answered with an error, or did not answer in time."""


class PipeBrowser:
    """One headless Chromium on a debugging pipe; ``print_file`` prints a local HTML file to PDF bytes."""

    def __init__(self, executable: str, args: list[str], timeout: float = TIMEOUT) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="nitpicker-pdf-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:
            # in the child, before exec: the two pipe ends become descriptors 3 and 4, inheritable (copied
            # first, so neither end is overwritten by the other's dup2); everything else of Python's is
            # close-on-exec (PEP 446), so close_fds is not needed and would close 3 and 4 after this runs
            first, second = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(first, 3)
            os.dup2(second, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        command = [executable, *BASE_ARGS, f"--user-data-dir={self._profile.name}", *args, "about:blank"]
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=wire,  # noqa: PLW1509 - the call only duplicates two descriptors
                close_fds=False,
            )
        except BaseException:
            for fd in (to_browser_r, from_browser_w, self._to_browser, self._from_browser):
                os.close(fd)
            self._profile.cleanup()
            raise
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    # -- the protocol ---------------------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        """Send one command and wait for its answer (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._to_browser, data) :]
        except OSError:
            raise self._exited() from None
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message', answer['error'])}")
                return answer.get("result", {})
            if "method" in answer:
                self._events.append(answer)

    def wait_for(self, method: str, session: str | None = None) -> dict[str, Any]:
        """The first event ``method`` (of ``session``), kept or still to come."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self._events:
                if event["method"] == method and event.get("sessionId") == session:
                    self._events.remove(event)
                    return event
            answer = self._receive(deadline)
            if "method" in answer:
                self._events.append(answer)

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout:.0f} s")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise self._exited()
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _exited(self) -> BrowserError:
        """The error for a pipe Chromium closed: it exited (with its status) or closed the pipe alone."""
        try:
            status = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return BrowserError("Chromium closed its debugging pipe")
        return BrowserError(f"Chromium exited (status {status})")

    # -- printing -------------------------------------------------------------------------------------------

    def print_file(self, page: Path, options: dict[str, Any]) -> bytes:
        """Load ``page`` (a local file) in a new tab and print it with ``Page.printToPDF``'s ``options``."""
        # the tab Chromium opened at start (about:blank): another tab would start a second renderer
        tabs = [t["targetId"] for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        target = tabs[0] if tabs else self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            self.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
            self.wait_for("Page.loadEventFired", session)
            stream = self.send(
                "Page.printToPDF", {**options, "transferMode": "ReturnAsStream"}, session=session
            )["stream"]
            parts = []
            while True:
                chunk = self.send("IO.read", {"handle": stream, "size": CHUNK}, session=session)
                data = chunk.get("data", "")
                parts.append(base64.b64decode(data) if chunk.get("base64Encoded") else data.encode("latin-1"))
                if chunk.get("eof"):
                    break
            self.send("IO.close", {"handle": stream}, session=session)
            return b"".join(parts)
        finally:
            with contextlib.suppress(BrowserError):
                self.send("Target.detachFromTarget", {"sessionId": session})

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def __enter__(self) -> PipeBrowser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
