"""Defaults the crawler and the built-in plugins share, defined once: fetch and scrape timeouts, image presets,
the Node prefix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: seconds the scrape waits for each step: the page's navigation, a DOM read, the network going idle, one
#: screenshot preset. ``nitpicker crawl --page-timeout`` sets ``navigation``.
SCRAPE_TIMEOUTS: dict[str, float] = {"navigation": 60.0, "dom": 5.0, "idle": 5.0, "preset": 30.0}
#: the total deadline, in seconds, of the 1st, 2nd, 3rd… plain HTTP fetch of a URL (before any rendering)
FETCH_TIMEOUTS: tuple[float, ...] = (10.0, 30.0, 60.0)
#: the viewport presets images are captured at when a crawl names none
IMAGE_PRESETS: tuple[str, ...] = ("desktop-compact", "mobile-small")

NODE_PREFIX_ENV = "NITPICKER_NODE_PREFIX"


def node_prefix() -> Path:
    """Where bin/install-lighthouse installs npm packages (lighthouse, axe-core): $NITPICKER_NODE_PREFIX,
    else ``<venv>/lighthouse``."""
    return Path(os.environ.get(NODE_PREFIX_ENV) or Path(sys.prefix) / "lighthouse")
