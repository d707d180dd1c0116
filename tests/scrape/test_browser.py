"""BrowserHost against real Chromium: finding it, isolated pages, crash restarts, and no orphan processes."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from nitpicker_core.crawler import browser as browser_mod
from nitpicker_core.crawler import chromium
from nitpicker_core.crawler.browser import BrowserHost, browser_args, find_browser, launch
from nitpicker_core.errors import NitpickerError
from test_server import serve

pytestmark = pytest.mark.browser
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"

# No skipping: bin/test installs Chromium, so a missing browser is a failure worth seeing
assert find_browser() is not None, "no Chromium found (bin/setup installs Debian's chromium)"


def chromium_pids() -> set[int]:
    """Live processes descending from this test process whose command line mentions chromium."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        parents[int(entry.name)] = int(fields[1])
        cmdlines[int(entry.name)] = cmdline
    me = os.getpid()
    found = set()
    for pid, cmdline in cmdlines.items():
        if "chromium" not in cmdline:
            continue
        ancestor = parents.get(pid)
        while ancestor and ancestor != me:
            ancestor = parents.get(ancestor)
        if ancestor == me:
            found.add(pid)
    return found


def wait_no_chromium(seconds: float = 5.0) -> set[int]:
    """Processes can take a moment to exit after their parent is gone; poll briefly."""
    deadline = time.monotonic() + seconds
    while (left := chromium_pids()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture(scope="module")
def base():
    server, url = serve()
    yield url
    server.shutdown()


@pytest.fixture(autouse=True)
def no_leftovers():
    assert chromium_pids() == set(), "a previous test left Chromium running"
    yield


def test_find_browser_order(tmp_path, monkeypatch):
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("NITPICKER_BROWSER", str(fake))
    assert find_browser() == str(fake)
    monkeypatch.setenv("NITPICKER_BROWSER", str(tmp_path / "missing"))
    assert find_browser() is None
    monkeypatch.delenv("NITPICKER_BROWSER")
    # A Playwright registry holding its own headless shell wins over Debian's Chromium
    revision = browser_mod._playwright_registry()[1]["chromium-headless-shell"]
    shell = (
        tmp_path
        / f"chromium_headless_shell-{revision}"
        / "chrome-headless-shell-linux64"
        / "chrome-headless-shell"
    )
    shell.parent.mkdir(parents=True)
    shell.write_text("#!/bin/sh\n")
    shell.chmod(0o755)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    assert find_browser() == str(shell)
    shell.unlink()
    debian = browser_mod.DEBIAN_CHROMIUM
    assert find_browser() == (debian if os.access(debian, os.X_OK) else None)


def test_launch_without_browser_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.delenv("NITPICKER_BROWSER", raising=False)
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    from nitpicker_core.crawler import chromium  # where the lookup reads it (without Playwright's API)

    monkeypatch.setattr(chromium, "DEBIAN_CHROMIUM", str(tmp_path / "chromium"))
    with pytest.raises(NitpickerError) as caught:
        asyncio.run(launch(None))
    assert str(caught.value) == browser_mod.NOT_FOUND


def test_browser_args_from_env(monkeypatch):
    monkeypatch.setenv("NITPICKER_BROWSER_ARGS", "--lang=ja '--window-size=800,600'")
    assert browser_args(["--x"]) == ["--lang=ja", "--window-size=800,600", "--x"]


def test_launch_switches_off_the_omnibox_popups_and_keeps_playwrights_features(monkeypatch):
    """Chromium reads only the last --disable-features: the launch passes one, Playwright's list and the unused
    features together with any the user names in NITPICKER_BROWSER_ARGS."""
    defaults = chromium.playwright_disabled_features()
    assert defaults and "PaintHolding" in defaults  # read from the installed Playwright
    monkeypatch.setenv("NITPICKER_BROWSER_ARGS", "--disable-features=Mine,PaintHolding --lang=ja")
    args = chromium.launch_args(["--x"])
    assert args[:2] == ["--lang=ja", "--x"]
    assert args[2:] == ["--disable-features=" + ",".join([*defaults, *chromium.UNUSED_FEATURES, "Mine"])]
    monkeypatch.setattr(chromium, "playwright_disabled_features", lambda: None)
    assert chromium.launch_args(["--x"]) == ["--disable-features=Mine,PaintHolding", "--lang=ja", "--x"]


def test_a_context_opens_no_omnibox_popup(base):
    """Every browser context is a window, where Chromium 15x builds the omnibox popup's WebUI pages (0.8 s of CPU
    a window): the crawl's browser has none."""
    from playwright.async_api import async_playwright

    async def main() -> list[str]:
        async with async_playwright() as playwright:
            browser = await launch(playwright, extra_args=[LOOPBACK_ONLY])
            try:
                for _ in range(2):
                    page = await (await browser.new_context()).new_page()
                    await page.goto(f"{base}/")
                session = await browser.new_browser_cdp_session()
                # the popups are built once a window is up (within 0.1 s here, without the switch): a while for one
                deadline = time.monotonic() + 2
                while True:
                    targets = (await session.send("Target.getTargets"))["targetInfos"]
                    urls = [t["url"] for t in targets if t["type"] != "page"]
                    if urls or time.monotonic() > deadline:
                        return urls
                    await asyncio.sleep(0.2)
            finally:
                await browser.close()

    assert not [url for url in asyncio.run(main()) if "omnibox" in url]


def test_pages_are_isolated_and_everything_is_reaped(base):
    async def main() -> None:
        host = BrowserHost(extra_args=[LOOPBACK_ONLY])
        await host.start()
        try:
            first = await host.new_page("UA-one", extra_headers={"X-Test": "1"})
            second = await host.new_page("UA-two")
            await first.goto(f"{base}/redirect/self")  # sets a cookie on its way
            assert await first.title() == "Self Redirect Done"
            assert [c["name"] for c in await first.context.cookies()] == ["seen"]
            assert await second.context.cookies() == []
            assert await first.evaluate("navigator.userAgent") == "UA-one"
            assert first.context is not second.context
            await host.close_page(first)
            assert first.is_closed()
            assert len(host._contexts) == 1
            assert chromium_pids()
        finally:
            await host.close()

    asyncio.run(main())
    assert wait_no_chromium() == set()


def test_crash_restarts_and_reaps(base):
    async def main() -> int:
        async with BrowserHost(extra_args=[LOOPBACK_ONLY]) as host:
            page = await host.new_page("Nitpicker/test")
            await page.goto(f"{base}/about")
            pid = host.browser_pid
            assert pid and pid in chromium_pids()
            os.kill(pid, signal.SIGKILL)
            # The very next page works without waiting for the "disconnected" event
            page = await host.new_page("Nitpicker/test")
            await page.goto(f"{base}/about")
            assert await page.title() == "About"
            assert host.restarts == 1
            assert host.browser_pid not in (None, pid)
            return host.restarts

    assert asyncio.run(main()) == 1
    assert wait_no_chromium() == set()


def test_exception_inside_the_host_still_reaps(base):
    async def main() -> None:
        async with BrowserHost(extra_args=[LOOPBACK_ONLY]) as host:
            page = await host.new_page("Nitpicker/test")
            await page.goto(f"{base}/")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(main())
    assert wait_no_chromium() == set()
