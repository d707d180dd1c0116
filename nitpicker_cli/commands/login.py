"""`nitpicker login URL --save FILE`: log in by hand in a visible browser, for `crawl --storage-state FILE`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from pathlib import Path

import click

from nitpicker_cli.app import get_app


def register_login(cli: click.Group) -> None:
    """Added to the CLI by `crawl`'s register_commands: the login serves the crawl."""

    @cli.command("login")
    @click.argument("url")
    @click.option(
        "--save",
        type=click.Path(path_type=Path),
        required=True,
        metavar="FILE",
        help="Where to write the storage state (cookies and localStorage) once you are logged in; readable by you only.",
    )
    def login(url: str, save: Path) -> None:
        """Open URL in a visible Chromium to log in by hand (a CAPTCHA, two factors, a login no script can
        pass); close the window or press Enter when logged in, and the browser's cookies and localStorage are
        saved to FILE for `nitpicker crawl --storage-state FILE`. Needs a display ($DISPLAY or $WAYLAND_DISPLAY)."""
        from nitpicker_cli.commands.crawl import _check_url
        from nitpicker_core.crawler.login import NO_DISPLAY, LoginError, has_display, save_login
        from nitpicker_core.writable import check_file_destination

        app = get_app()
        _check_url(url)
        if not has_display():
            raise LoginError(NO_DISPLAY)
        check_file_destination(save, save.name)
        app.info(f"log in in the browser window, then close it or press Enter here; cookies go to {save}")

        async def enter() -> None:
            """Enter pressed in the terminal. The end of the input is no Enter (``< /dev/null``, no terminal):
            then only closing the window ends the login. Read in a daemon thread, from the file descriptor:
            a thread still waiting for a line once the window was closed must neither keep the command from
            exiting nor hold the lock of ``sys.stdin`` that the interpreter takes as it exits."""
            loop = asyncio.get_running_loop()
            pressed: asyncio.Future[None] = loop.create_future()

            def press() -> None:
                if not pressed.done():
                    pressed.set_result(None)

            def read() -> None:
                try:
                    fd = sys.stdin.fileno()
                except (AttributeError, OSError, ValueError):
                    return  # no input to read at all
                while True:
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        return
                    if not chunk:
                        return
                    if b"\n" in chunk:
                        break
                with contextlib.suppress(RuntimeError):  # the loop is gone: the window was closed first
                    loop.call_soon_threadsafe(press)

            threading.Thread(target=read, name="nitpicker-login-enter", daemon=True).start()
            await pressed

        count = asyncio.run(save_login(url, save, enter))
        app.info(f"saved {count} cookie(s) to {save}: crawl with --storage-state {save}")
