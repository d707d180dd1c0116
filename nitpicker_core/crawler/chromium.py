"""Which Chromium to launch, and with which switches, without importing Playwright's API.

Every command configures every plugin, and the lighthouse plugin asks for the browser's path there: the
lookup only reads Playwright's package data, so a command that never starts a browser does not load
``playwright.async_api`` (~0.15 s warm).
"""

from __future__ import annotations

import functools
import json
import os
import re
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


#: Chromium features a headless browser has no use for, switched off besides Playwright's own: the omnibox popup's
#: two WebUI pages, which Chromium 15x builds in every window it opens, and Playwright's every browser context is a
#: window. Measured with Debian's Chromium 156, 4 contexts and 12 pages: 6.3 s of the browser's CPU, 3.0 s without.
UNUSED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup")
_FEATURES_SWITCH = "--disable-features="
# the list in Playwright's launcher (`disabledFeatures = [ "A", // why\n "B", ... ]`), in its bundle or its module
_PLAYWRIGHT_LIST = re.compile(r"disabledFeatures\s*=\s*\[(.*?)\]", re.S)
_PLAYWRIGHT_SOURCES = ("lib/coreBundle.js", "lib/server/chromium/chromiumSwitches.js")


@functools.cache
def playwright_disabled_features() -> tuple[str, ...] | None:
    """The features Playwright's launcher switches off, read from its package; None when they cannot be read."""
    try:
        import playwright
    except ImportError:
        return None
    package = Path(playwright.__file__).parent / "driver" / "package"
    for source in _PLAYWRIGHT_SOURCES:
        try:
            text = (package / source).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = _PLAYWRIGHT_LIST.search(text)
        if found is None:
            continue
        code = "\n".join(line.split("//", 1)[0] for line in found.group(1).splitlines())
        names = tuple(re.findall(r"[\"']([A-Za-z0-9_]+)[\"']", code))
        return names or None
    return None


def launch_args(extra_args: list[str] | None = None) -> list[str]:
    """``browser_args(extra_args)`` with one ``--disable-features`` switch last: Playwright's list, ``UNUSED_FEATURES``
    and any the arguments name. Chromium reads only the last such switch, so one given in $NITPICKER_BROWSER_ARGS
    would otherwise undo Playwright's. Without Playwright's list (a launcher that cannot be read), the arguments
    are left as they are."""
    args = browser_args(extra_args)
    defaults = playwright_disabled_features()
    if defaults is None:
        return args
    named = [a[len(_FEATURES_SWITCH) :] for a in args if a.startswith(_FEATURES_SWITCH)]
    features = dict.fromkeys([*defaults, *UNUSED_FEATURES, *(f for v in named for f in v.split(",") if f)])
    return [*(a for a in args if not a.startswith(_FEATURES_SWITCH)), _FEATURES_SWITCH + ",".join(features)]
