"""Where a crawl's time goes: seconds per phase summed over its pages, for the commit's stats and the benchmark."""

from __future__ import annotations

import threading
from typing import Any

#: ``ScrapeResult.extra`` key under which a scrape reports its own phases (seconds by name); not stored
SCRAPE_PHASES_KEY = "phase_seconds"
#: pages read from their HTML on the crawl's worker processes (``reading.py``): wall time, not this process's CPU
EXTRACTION_IN_PROCESSES = "extraction in worker processes"
#: events stored by the archive writer's child process (``writer_process.py``): its time, not this process's
ARCHIVE_WRITE_IN_PROCESS = "archive write in the writer process"
#: the phases in the order a page goes through them; "render other" is the page lease and the hooks around
#: the scrape, "links" the records and the queueing of what the page links to (on the event loop), "archive
#: write" runs on the writer thread (in parallel with the pages), or in the writer process
ORDER = (
    "preflight",
    "navigation",
    "settle",
    "extraction",
    EXTRACTION_IN_PROCESSES,
    "images",
    "render other",
    "links",
    "archive write",
    ARCHIVE_WRITE_IN_PROCESS,
)


class PhaseClock:
    """Thread-safe totals: the event loop adds page phases, the writer thread adds archive writes."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, phase: str, seconds: float, *, count: int = 1) -> None:
        """``count=0`` adds time to the phase of the page being counted (its resources' rows, say)."""
        with self._lock:
            self._seconds[phase] = self._seconds.get(phase, 0.0) + seconds
            self._counts[phase] = self._counts.get(phase, 0) + count

    def add_scrape(self, extra: dict[str, Any], render_seconds: float) -> None:
        """Take a scrape's own phases out of ``extra``; what the render took beyond them is "render other"."""
        phases = extra.pop(SCRAPE_PHASES_KEY, None) or {}
        inner = 0.0
        for phase, seconds in phases.items():
            if isinstance(seconds, int | float):
                self.add(str(phase), float(seconds))
                inner += float(seconds)
        self.add("render other", max(0.0, render_seconds - inner))

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        """phase → total seconds, times measured and mean milliseconds, in page order."""
        with self._lock:
            names = [p for p in ORDER if p in self._seconds] + sorted(set(self._seconds) - set(ORDER))
            return {
                name: {
                    "seconds": round(self._seconds[name], 3),
                    "count": self._counts[name],
                    "mean_ms": round(1000 * self._seconds[name] / max(1, self._counts[name]), 1),
                }
                for name in names
            }
