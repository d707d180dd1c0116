"""Live progress on a terminal (rich): the crawl line and the analyzer bars; nothing when stderr is not a TTY.

rich is imported only where a display may be shown (~0.03 s of every crawl's start otherwise).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from nitpicker_core import hookimpl

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from nitpicker_core import NitpickerPluginManager, ScrapeResult

RATE_WINDOW = 30.0  # seconds of recent progress the rate and ETA are taken from


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def progress_line(
    counts: Any,
    parallels: int,
    errors: tuple[int, int] = (0, 0),
    elapsed: float | None = None,
    rate: float | None = None,
) -> str:
    """The crawl's numbers in words: internal pages, external links and errors apart, rate and ETA.

    ``errors`` is (internal, external). Without ``elapsed`` the time columns are left out (the final line of a
    stage that is over, a unit test).
    """
    outside = getattr(counts, "outside_found", 0)  # same-host URLs outside the scope: internal, checked only
    checked = f", {counts.outside_done}/{outside} outside the scope checked" if outside else ""
    line = (
        f"internal {counts.internal_done}/{counts.internal_found} done ({counts.internal_rendered} rendered"
        f"{checked}) · "
        f"external {counts.external_done}/{counts.external_found} checked · "
        f"{counts.pending} queued · {counts.in_progress} in progress · "
        f"errors {errors[0]} internal / {errors[1]} external · {min(counts.percent, 100)}%"
    )
    if elapsed is not None:
        left = counts.remaining
        eta = _clock(left / rate) if rate and left else ("0:00:00" if not left else "-:--:--")
        line += f" · {rate or 0:.1f} URLs/s · ETA {eta} · {_clock(elapsed)}"
    line += f" · {parallels} parallel"
    slowed = getattr(counts, "slowed", ())
    return line + f" · slowed: {', '.join(slowed)}" if slowed else line


class ErrorTally:
    """Counts the crawl's failed URLs, internal and external apart, as they are recorded (a crawl hook)."""

    def __init__(self) -> None:
        self.internal = 0
        self.external = 0

    @hookimpl
    def crawl_page_scraped(self, result: ScrapeResult) -> None:
        # as the crawl's stats count them: hard failures, and external links answering 4xx/5xx
        if (result.extra or {}).get("error_kind"):
            if result.is_external:
                self.external += 1
            else:
                self.internal += 1
        elif result.is_external and (result.status or 0) >= 400:
            self.external += 1

    @property
    def counts(self) -> tuple[int, int]:
        return self.internal, self.external


class _CrawlView:
    """The crawl line, drawn from the latest counts at every refresh, so time, rate and ETA move on their own."""

    def __init__(self, parallels: int, errors: ErrorTally) -> None:
        self.parallels, self.errors = parallels, errors
        self.started = time.monotonic()
        self.counts: Any = None
        self.finished: float | None = None
        self.poll: Callable[[], Any] | None = None  # the queue's counts(), read at every refresh when given
        self._samples: deque[tuple[float, int]] = deque()

    def rate(self, now: float) -> float | None:
        """URLs done per second over the last half minute (the browser's start is not the crawl's pace)."""
        if self.counts is None:
            return None
        done = self.counts.internal_done + self.counts.external_done
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[0][0] > RATE_WINDOW:
            self._samples.popleft()
        then, before = self._samples[0]
        if done > before and now - then >= 2:
            return (done - before) / (now - then)
        return done / max(now - self.started, 1e-6) if done else None

    def __rich__(self) -> RenderableType:
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        now = self.finished or time.monotonic()
        elapsed = now - self.started
        if self.poll is not None and self.counts is not None and self.finished is None:
            self.counts = self.poll()  # between two pages too: taken, in progress, queued as they are now
        if self.counts is None:
            return Text(f"Crawling: starting (browser, robots.txt, the first page) · {_clock(elapsed)}")
        total = self.counts.internal_found + self.counts.external_found
        done = self.counts.internal_done + self.counts.external_done
        grid = Table.grid(padding=(0, 1))
        grid.add_row(
            Text("Crawling:"),
            ProgressBar(total=max(total, 1), completed=min(done, total), width=20),
            Text(progress_line(self.counts, self.parallels, self.errors.counts, elapsed, self.rate(now))),
        )
        return grid


class _AnalyzerView:
    """One bar per analyzer from ``bars()``: name → (done, total, violations)."""

    def __init__(self, bars: Callable[[], dict[str, tuple[int, int, int]]]) -> None:
        self.bars = bars

    def __rich__(self) -> RenderableType:
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        bars = self.bars()
        if not bars:  # the first analyzer is starting (its workers, the page count): say so at once
            return Text("Analyzing: starting the analyzers")
        grid = Table.grid(padding=(0, 1))
        for name, (done, total, violations) in list(bars.items()):
            grid.add_row(
                Text(f"{name:<14}"),
                ProgressBar(total=max(total, 1), completed=min(done, total), width=30),
                Text(f"{done}/{total} pages · {violations} violations"),
            )
        return grid


def _may_be_terminal() -> bool:
    """False where rich's ``Console(stderr=True).is_terminal`` is surely False: stderr is no TTY and neither
    TTY_COMPATIBLE=1 nor FORCE_COLOR says otherwise (rich decides the other cases, Jupyter and IDLE included)."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or "FORCE_COLOR" in os.environ:
        return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file: rich says no terminal too
        return False


class _Live:
    """A rich Live display on stderr when it is a terminal (and not --silent); otherwise nothing at all."""

    def __init__(self, silent: bool) -> None:
        self.console: Console | None = None
        self.enabled = False
        if not silent and _may_be_terminal():
            from rich.console import Console

            self.console = Console(stderr=True)
            self.enabled = self.console.is_terminal
        self._live: Live | None = None

    def renderable(self) -> RenderableType:  # pragma: no cover - every subclass draws its own
        raise NotImplementedError

    def __enter__(self) -> Any:
        if self.enabled:
            from rich.live import Live

            self._live = Live(self, console=self.console, refresh_per_second=2, transient=False)
            self._live.__enter__()
        return self

    def __rich__(self) -> RenderableType:
        return self.renderable()

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(*exc)


class Progress(_Live):
    """The crawl's live line: ``update(counts)`` is the crawler's progress callback; ``errors`` a crawl hook
    to register with the plugin manager while the crawl runs."""

    def __init__(self, parallels: int, silent: bool = False) -> None:
        super().__init__(silent)
        self.errors = ErrorTally()
        self.view = _CrawlView(parallels, self.errors)

    def update(self, counts: Any) -> None:
        self.view.counts = counts

    def watch(self, counts: Callable[[], Any]) -> None:
        """Read the queue's counts at every refresh, not only when a URL is done."""
        self.view.poll = counts

    @contextlib.contextmanager
    def errors_counted(self, pm: NitpickerPluginManager) -> Iterator[None]:
        """Count failed URLs through the crawl hooks while the crawl runs (only when the line is shown)."""
        if not self.enabled:
            yield
            return
        pm.register(self.errors, name="nitpicker-cli-progress")
        try:
            yield
        finally:
            pm.unregister(self.errors)

    def renderable(self) -> RenderableType:
        return self.view

    def __exit__(self, *exc: Any) -> None:
        self.view.finished = time.monotonic()
        super().__exit__(*exc)


class AnalyzeProgress(_Live):
    """One bar per analyzer (done/total pages, violations); ``update`` is the analyze engine's callback."""

    def __init__(self, silent: bool) -> None:
        super().__init__(silent)
        self._bars: dict[str, tuple[int, int, int]] = {}
        self.view = _AnalyzerView(lambda: self._bars)

    def update(self, name: str, done: int, total: int, violations: int) -> None:
        self._bars[name] = (done, total, violations)

    def renderable(self) -> RenderableType:
        return self.view


class PipelineProgress(Progress):
    """A pipeline's stages in order, in one display: the crawl line, then a bar per analyzer, then the report.

    The analyzer bars are read from the run's live progress (``Context.progress``) at each refresh.
    """

    def __init__(self, parallels: int, silent: bool = False) -> None:
        super().__init__(parallels, silent)
        self.ctx: Any = None
        self._last_bars: dict[str, tuple[int, int, int]] = {}

    def watch_run(self, ctx: Any) -> None:
        self.ctx = ctx

    def _bars(self) -> dict[str, tuple[int, int, int]]:
        # the run's progress is emptied when the next stage starts: the bars keep their last state
        progress = getattr(self.ctx, "progress", None) or {}
        by = progress.get("by_analyzer") or {}
        if by:
            self._last_bars = {name: (a["done"], a["total"], a["violations"]) for name, a in list(by.items())}
        return self._last_bars

    def renderable(self) -> RenderableType:
        from rich.console import Group
        from rich.text import Text

        ctx = self.ctx
        outputs = getattr(ctx, "outputs", {}) or {}
        parts: list[RenderableType] = []
        crawl = outputs.get("crawl")
        if crawl is not None and self.view.counts is None:  # the crawl was reused from an earlier run
            parts.append(Text(f"Crawl: reused commit {crawl.get('commit')}"))
        else:
            if crawl is not None and self.view.finished is None:
                self.view.finished = time.monotonic()
            parts.append(self.view)
        stages = (ctx.declaration.get("stages") if ctx is not None else None) or []
        if "analyze" in stages and crawl is not None:
            bars = self._bars()
            if "analyze" in outputs and not bars:
                parts.append(Text("Analyze: reused the earlier analysis"))
            else:
                parts.append(_AnalyzerView(lambda: bars))
        if "report" in stages and "analyze" in outputs:
            parts.append(Text("Report: done" if "report" in outputs else "Report: writing"))
        return Group(*parts)
