"""Find and launch Chromium, and own one browser per crawl: isolated pages, crash restarts, reaping."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from typing import Any

from nitpicker_core.crawler.chromium import (  # re-exported: where launchers look them up
    DEBIAN_CHROMIUM,
    NOT_FOUND,
    _playwright_chromium,
    _playwright_registry,
    browser_args,
    find_browser,
    launch_args,
)
from nitpicker_core.errors import NitpickerError

DEFAULT_VIEWPORT = {"width": 1280, "height": 960}
CLOSE_TIMEOUT = 10.0
# An unknown switch Chromium ignores; it marks the browser process so close() can find and reap it
MARKER_SWITCH = "--nitpicker-host"

__all__ = [
    "DEBIAN_CHROMIUM",
    "NOT_FOUND",
    "BrowserHost",
    "browser_args",
    "find_browser",
    "launch",
    "_playwright_chromium",
    "_playwright_registry",
]


async def launch(playwright: Any, *, extra_args: list[str] | None = None, headless: bool = True) -> Any:
    """Launch Chromium (headless unless told) with ``find_browser()``'s executable; NitpickerError when there is none."""
    executable = find_browser()
    if executable is None:
        env = os.environ.get("NITPICKER_BROWSER")
        raise NitpickerError(
            f"NITPICKER_BROWSER={env} does not exist or is not executable" if env else NOT_FOUND
        )
    kwargs: dict[str, Any] = {"headless": headless, "args": launch_args(extra_args)}
    own = _playwright_chromium()
    if own and own[0] == executable and not os.environ.get("NITPICKER_BROWSER"):
        if (
            own[1] == "full" and headless
        ):  # only the full build is installed: headless needs the "chromium" channel
            kwargs["channel"] = "chromium"
    else:
        kwargs["executable_path"] = executable
    return await playwright.chromium.launch(**kwargs)


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid → (parent pid, cmdline) for every live, non-zombie process."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields and fields[0] != "Z":
            table[int(entry.name)] = (int(fields[1]), cmdline)
    return table


def kill_marked(marker: str) -> int:
    """SIGKILL the browser process carrying ``marker`` and its descendants; returns how many were killed."""
    table = _proc_table()
    roots = {pid for pid, (_, cmdline) in table.items() if marker in cmdline}
    doomed = set(roots)
    grew = True
    while grew:
        children = {pid for pid, (ppid, _) in table.items() if ppid in doomed} - doomed
        grew = bool(children)
        doomed |= children
    for pid in doomed:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(doomed)


@contextlib.contextmanager
def _own_session() -> Iterator[None]:
    """Start Playwright's driver (and so the Chromium it launches) in a session of its own.

    A Ctrl-C in a terminal signals the whole foreground process group; were the driver and Chromium in
    it, they would die under the pages in flight while nitpicker is still stopping in order (pages
    recorded as TargetClosedError failures, "Connection closed while reading from the driver"). In their
    own session only nitpicker gets the signal, and it closes them itself; if nitpicker dies, the driver
    sees its pipe close and takes its browser down, and ``kill_marked`` reaps what is left.
    """
    spawn = asyncio.create_subprocess_exec

    async def in_new_session(*args: Any, **kwargs: Any) -> Any:
        if os.name == "posix":
            kwargs.setdefault("start_new_session", True)
        return await spawn(*args, **kwargs)

    asyncio.create_subprocess_exec = in_new_session  # type: ignore[assignment]
    try:
        yield
    finally:
        asyncio.create_subprocess_exec = spawn  # type: ignore[assignment]


class BrowserHost:
    """One Chromium for a crawl; every page gets its own context, a crashed browser is relaunched on demand."""

    def __init__(self, *, extra_args: list[str] | None = None) -> None:
        self.extra_args = list(extra_args or [])
        self.restarts = 0
        self._playwright: Any = None
        self._browser: Any = None
        self._marker = ""
        self._dead_markers: list[str] = []
        self._contexts: set[Any] = set()
        self._lock = asyncio.Lock()
        self._dead = False

    @property
    def browser(self) -> Any:
        return self._browser

    @property
    def browser_pid(self) -> int | None:
        """The pid of the current browser process (found by its marker switch), if it is alive."""
        if not self._marker:
            return None
        pids = [pid for pid, (_, cmdline) in _proc_table().items() if self._marker in cmdline]
        return min(pids) if pids else None

    async def start(self) -> None:
        """Start Playwright's driver and the browser; a failure leaves nothing running."""
        async with self._lock:
            try:
                await self._ensure_browser()
            except BaseException:
                await self._shutdown()
                raise

    async def _ensure_browser(self) -> Any:
        if self._browser is not None and not self._dead and self._browser.is_connected():
            return self._browser
        if self._playwright is None:
            # Playwright on first use (~0.1 s of imports): a crawl that renders nothing never loads it
            from playwright.async_api import async_playwright

            with _own_session():
                self._playwright = await async_playwright().start()
        if self._browser is not None:  # it crashed or lost its pipe: drop what belonged to it
            self.restarts += 1
            self._contexts.clear()
            old, self._browser = self._browser, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), CLOSE_TIMEOUT)
            self._reap_dead()
        self._marker = f"{MARKER_SWITCH}={uuid.uuid4().hex}"
        self._dead = False
        browser = await launch(self._playwright, extra_args=[*self.extra_args, self._marker])
        browser.on("disconnected", self._on_disconnected)
        self._browser = browser
        return browser

    def _on_disconnected(self, browser: Any) -> None:
        if browser is self._browser:  # the next new_page() relaunches
            self._dead = True

    def _reap_dead(self) -> None:
        if self._marker:
            self._dead_markers.append(self._marker)
        for marker in self._dead_markers:
            kill_marked(marker)
        self._dead_markers.clear()

    async def new_page(
        self,
        user_agent: str | None = None,
        extra_headers: dict[str, str] | None = None,
        http_credentials: dict[str, str] | None = None,
        viewport: dict[str, int] | None = None,
    ) -> Any:
        """A page in a fresh context of its own; the browser is relaunched first if it died."""
        options: dict[str, Any] = {"viewport": viewport or dict(DEFAULT_VIEWPORT)}
        if user_agent:
            options["user_agent"] = user_agent
        if extra_headers:
            options["extra_http_headers"] = extra_headers
        if http_credentials:
            options["http_credentials"] = http_credentials
        from playwright.async_api import Error as PlaywrightError

        for attempt in range(2):
            async with self._lock:
                browser = await self._ensure_browser()
            try:
                context = await browser.new_context(**options)
            except PlaywrightError:
                # The browser may have died before its "disconnected" event arrived: relaunch once
                if attempt:
                    raise
                if browser is self._browser:
                    self._dead = True
                continue
            self._contexts.add(context)
            context.on("close", lambda _ctx, c=context: self._contexts.discard(c))
            try:
                return await context.new_page()
            except BaseException:
                await self._close_context(context)
                raise
        raise NitpickerError("the browser keeps crashing")  # pragma: no cover - loop always returns

    async def _close_context(self, context: Any) -> None:
        self._contexts.discard(context)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(context.close(), CLOSE_TIMEOUT)

    async def close_page(self, page: Any) -> None:
        """Close the page together with its context; never raises."""
        await self._close_context(page.context)

    def kill_now(self) -> None:
        """SIGKILL the browser and its processes at once, without the driver (the process is about to end)."""
        for marker in (*self._dead_markers, self._marker):
            if marker:
                kill_marked(marker)

    async def close(self) -> None:
        """Close every context, the browser and the driver, then kill whatever of the browser survived."""
        async with self._lock:
            await self._shutdown()

    async def _shutdown(self) -> None:
        await asyncio.gather(*(self._close_context(context) for context in list(self._contexts)))
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._browser.close(), CLOSE_TIMEOUT)
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._playwright.stop(), CLOSE_TIMEOUT)
        self._browser = self._playwright = None
        # A hung or half-dead browser can outlive close(); its marker still finds it
        self._reap_dead()
        self._marker = ""

    async def __aenter__(self) -> BrowserHost:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
