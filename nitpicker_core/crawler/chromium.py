"""Which Chromium to launch, and with which switches, without importing Playwright's API.

Every command configures every plugin, and the lighthouse plugin asks for the browser's path there: the
lookup only reads Playwright's package data, so a command that never starts a browser does not load
``playwright.async_api`` (~0.15 s warm).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

DEBIAN_CHROMIUM = "/usr/bin/chromium"
NOT_FOUND = "no Chromium found: install Debian's chromium (apt-get install chromium) or set NITPICKER_BROWSER"


def _playwright_registry() -> tuple[Path, dict[str, str]] | None:
    """Playwright's browser directory and the pinned revision of each browser, read from its package."""
    try:
        import playwright
    except ImportError:
        return None
    package = Path(playwright.__file__).parent / "driver" / "package"
    try:
        pins = json.loads((package / "browsers.json").read_text())["browsers"]
    except (OSError, ValueError, KeyError):
        return None
    env = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if env == "0":
        root = package / ".local-browsers"
    elif env:
        root = Path(env)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms-playwright"
    return root, {pin["name"]: str(pin["revision"]) for pin in pins if "name" in pin}


def _playwright_chromium() -> tuple[str, str] | None:
    """(path, kind) of Playwright's own Chromium: the headless shell it launches by default, or the full one."""
    registry = _playwright_registry()
    if registry is None:
        return None
    root, revisions = registry
    # Same layout Playwright's registry uses; the glob covers the x64 and arm64 platform folders
    wanted = (
        ("chromium-headless-shell", "chromium_headless_shell", "chrome-headless-shell", "shell"),
        ("chromium", "chromium", "chrome", "full"),
    )
    for name, folder, binary, kind in wanted:
        revision = revisions.get(name)
        if revision:
            for candidate in sorted((root / f"{folder}-{revision}").glob(f"*/{binary}")):
                if os.access(candidate, os.X_OK):
                    return str(candidate), kind
    return None


def find_browser() -> str | None:
    """The Chromium to use: $NITPICKER_BROWSER, Playwright's own Chromium, then Debian's; None if none exists."""
    env = os.environ.get("NITPICKER_BROWSER")
    if env:
        # An explicit choice that does not exist is an error, not a reason to pick another browser;
        # a bare name is looked up on PATH
        return shutil.which(env)
    own = _playwright_chromium()
    if own:
        return own[0]
    return DEBIAN_CHROMIUM if os.access(DEBIAN_CHROMIUM, os.X_OK) else None


def browser_args(extra_args: list[str] | None = None) -> list[str]:
    """$NITPICKER_BROWSER_ARGS (shell-split) followed by ``extra_args``."""
    return [*shlex.split(os.environ.get("NITPICKER_BROWSER_ARGS", "")), *(extra_args or [])]
