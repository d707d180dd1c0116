"""The crawl progress line, drawn with rich on a terminal and quiet otherwise."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text


def progress_line(counts: Any, parallels: int) -> str:
    return (f"Crawling: {counts.internal_done}({counts.internal_rendered}) done / {counts.internal_found} found URLs "
            f"(+{counts.external_done}/{counts.external_found} ext) ({counts.percent}%) "
            f"[{counts.remaining} remaining] [{parallels} parallel]")


class Progress:
    """``update(counts)`` redraws the line at most a few times a second; silent or not a TTY: nothing."""

    def __init__(self, parallels: int, silent: bool = False) -> None:
        self.parallels = parallels
        self.console = Console(stderr=True)
        self.enabled = not silent and self.console.is_terminal
        self._live: Live | None = None
        self.last = ""

    def __enter__(self) -> Progress:
        if self.enabled:
            self._live = Live(Text(""), console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def update(self, counts: Any) -> None:
        self.last = progress_line(counts, self.parallels)
        if self._live is not None:
            self._live.update(Text(self.last))

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
