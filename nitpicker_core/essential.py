"""The built-in plugins nitpicker cannot work without, and the one-line refusal to disable them."""

from __future__ import annotations

from collections.abc import Iterable

from nitpicker_core.errors import UsageError

__all__ = ["ESSENTIAL", "check_disabling", "essential_reason"]

#: entry-point name → what would break without it. Disabling one would not switch a feature off, it would
#: leave half-done work (a crawl that writes no archive, an --exclude-keyword silently ignored).
ESSENTIAL: dict[str, str] = {
    "scrape": "a crawl renders no page without it",
    "archive-writer": "a crawl has no archive to write without it",
    "crawl-rules": "--exclude-keyword would be silently ignored without it",
    "cmd-crawl": "it is the crawl command",
}


def essential_reason(name: str) -> str | None:
    """Why ``name`` cannot be disabled, or None when it may be."""
    return ESSENTIAL.get(name)


def check_disabling(names: Iterable[str], source: str = "NITPICKER_DISABLE_PLUGINS") -> None:
    """Raise ``UsageError`` (one line) when ``names`` — plugins asked to be disabled — include an essential one.

    ``source`` says where the request came from (an environment variable, a config key), for the message.
    The plugin manager calls this before loading entry points, so nothing runs half-configured.
    """
    refused = sorted(name for name in set(names) if name in ESSENTIAL)
    if refused:
        why = "; ".join(f"{name}: {ESSENTIAL[name]}" for name in refused)
        raise UsageError(f"{source} cannot disable essential built-in plugin(s) ({why})")
