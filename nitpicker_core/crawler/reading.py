"""Reading pages without a browser in worker processes (``--render never``, and the pages ``auto`` leaves unread).

A page read from its HTML costs milliseconds of lxml and Python (parse, anchors, facts), which on a thread of
the crawler shares one core with the event loop, the fetches and the archive writer through the GIL; worse,
lxml lets the GIL go inside every XPath call and then waits up to the switch interval to take it back, so four
pages read on four threads took ~15x their CPU time. Here ``crawl_parse`` runs in a few worker processes of
the machine instead: each rebuilds the crawl's plugins from their entry-point names and the command's settings
(as analyzer workers do, and as a Dask worker does for rendering) and gets the page's fetched record and body,
never the crawler's state; the crawl context it sees is a copy whose ``state`` starts empty.

A crawl starts the workers only once it has read ``START_AFTER`` pages (a small crawl would spend more on
starting them than they save) and reads pages on a thread until they are ready. A ``crawl_parse`` of a plugin
that is not loadable by name (registered in this process only) keeps every page on the thread, as does
``NITPICKER_PARSE_PROCESSES=0``; a worker that dies sends the rest of the crawl back to the thread too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import gc
import logging
import multiprocessing
import os
import signal
import threading
import time
from typing import Any

from nitpicker_core.archive.lock import pid_alive
from nitpicker_core.config import Config
from nitpicker_core.crawler.auto import template_key
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.records import CrawlContext, ScrapeResult
from nitpicker_core.registries import setting_registry

log = logging.getLogger(__name__)

#: pages read on a thread before the worker processes are started (and while they start)
START_AFTER = 24
#: the environment variable that sets how many worker processes read pages (0: none, on a thread)
PROCESSES_ENV = "NITPICKER_PARSE_PROCESSES"
#: the environment variable that sets ``START_AFTER``; 0 starts the workers with the first page, which waits
#: for them (every page is then read on a worker process)
AFTER_ENV = "NITPICKER_PARSE_PROCESSES_AFTER"
#: how often a reader checks that the crawler is still there (seconds)
WATCH_EVERY = 0.5

_worker_pm: Any = None
_worker_crawl: CrawlContext | None = None


def for_workers(crawl: CrawlContext) -> CrawlContext:
    """The crawl context as the scrape hooks of another process see it (a copy; ``state`` starts empty)."""
    return dataclasses.replace(
        crawl, options=dict(crawl.options), environment=dict(crawl.environment), state={}
    )


def worker_plugin_manager(names: tuple[str, ...], values: dict[str, Any]) -> Any:
    """The crawl's plugins, loaded by entry-point name and configured with the command's settings."""
    pm = make_plugin_manager(allow=set(names), deny=set())
    pm.configure_plugins(Config(setting_registry(pm), dict(values)))
    return pm


def loadable_by_name(pm: Any, hook: str) -> bool:
    """Whether every implementation of ``hook`` comes from a plugin another process can load by name."""
    for impl in getattr(pm.hook, hook).get_hookimpls():
        info = pm.infos.get(impl.plugin_name)
        if info is None or not info.distribution:
            return False
    return True


def process_count(parallels: int) -> int:
    """Worker processes for reading pages: one per core, no more than pages in flight; the env var decides."""
    wanted = os.environ.get(PROCESSES_ENV, "").strip()
    if wanted:
        try:
            return max(0, int(wanted))
        except ValueError:
            log.warning(
                "%s=%r is not a number; reading pages in worker processes as by default",
                PROCESSES_ENV,
                wanted,
            )
    return max(1, min(os.cpu_count() or 1, parallels))


def _after() -> int:
    wanted = os.environ.get(AFTER_ENV, "").strip()
    try:
        return max(0, int(wanted)) if wanted else START_AFTER
    except ValueError:
        log.warning("%s=%r is not a number; the workers start after %d pages", AFTER_ENV, wanted, START_AFTER)
        return START_AFTER


def _watch(crawler: int) -> None:
    """End this reader once the crawler is gone: killed (SIGKILL, a second Ctrl-C), it never says so, and the
    queue a reader waits on stays open (every reader holds its pipe), so the reader would wait for good,
    holding the crawler's stdout and stderr."""
    while pid_alive(crawler):
        time.sleep(WATCH_EVERY)
    os._exit(0)


def _init(
    names: tuple[str, ...], values: dict[str, Any], env: dict[str, str], crawl: CrawlContext, crawler: int
) -> None:
    global _worker_pm, _worker_crawl
    threading.Thread(target=_watch, args=(crawler,), name="nitpicker-crawler-watch", daemon=True).start()
    # a Ctrl-C in the terminal reaches the whole process group: the crawler decides when its workers stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.update(env)
    _worker_pm = worker_plugin_manager(names, values)
    _worker_crawl = crawl
    # what is loaded now lives as long as the reader: the collector's full passes (a few in a crawl, each walking
    # every object) leave it out, as the pages' objects come and go
    gc.freeze()


def _ready() -> int:
    return os.getpid()


def _parse(result: ScrapeResult, body: bytes) -> ScrapeResult | None:
    assert _worker_pm is not None and _worker_crawl is not None
    parsed: ScrapeResult | None = _worker_pm.hook.crawl_parse(result=result, body=body, crawl=_worker_crawl)
    return parsed


def _keyed(result: ScrapeResult, body: bytes) -> tuple[str | None, ScrapeResult | None, str | None]:
    """``--render auto``'s read of a page on a worker process: see ``key_and_read``."""
    return key_and_read(_parse, result, body)


def key_and_read(
    parse: Any, result: ScrapeResult, body: bytes
) -> tuple[str | None, ScrapeResult | None, str | None]:
    """A page's template key, the page as ``parse(result, body)`` read it, and the reader's error in words.

    The key is the one the reader set (``ScrapeResult.template``, from the tree it parsed); a reader that sets
    none, or fails, leaves it to ``template_key``, which parses the page again.
    """
    try:
        parsed = parse(result, body)
    except Exception as exc:  # noqa: BLE001 - the key stands; the page's read error is the crawler's to record
        return template_key(body), None, f"{type(exc).__name__}: {exc}"
    key = parsed.template if isinstance(parsed, ScrapeResult) else None
    return key or template_key(body), parsed, None


@dataclasses.dataclass
class ReadAhead:
    """A page read before its template's verdict (``--render auto``): used when the verdict is to read it."""

    result: ScrapeResult  # the fetched record it was read from
    key: str | None  # its template key; None when the HTML as sent cannot be parsed
    parsed: ScrapeResult | None
    error: str | None  # the reader's exception, in words
    elsewhere: bool  # read on a worker process
    seconds: float  # wall time of the read


class PageReaders:
    """``crawl_parse`` for the crawler: on worker processes once they are up, on a thread until then."""

    def __init__(self, pm: Any, crawl: CrawlContext, parallels: int) -> None:
        self.pm, self.crawl = pm, crawl
        self.processes = process_count(parallels)
        if self.processes and not loadable_by_name(pm, "crawl_parse"):
            log.info("a crawl_parse plugin is not loadable by name: pages are read in this process")
            self.processes = 0
        self.after = _after()
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._ready: asyncio.Future[Any] | None = None
        self._read = 0  # pages read so far, wherever

    async def read(self, result: ScrapeResult, body: bytes) -> tuple[ScrapeResult | None, bool]:
        """The page read from ``body``, and whether a worker process read it."""
        parsed, elsewhere = await self._run(_parse, result, body)
        return parsed, elsewhere

    async def read_keyed(self, result: ScrapeResult, body: bytes) -> ReadAhead:
        """The page's template key and the page read, in one job: an ``auto`` crawl reads a page while its
        template's sample renders, off the crawler's process (the key is an lxml parse too), and keeps the read
        for a verdict to read it; a verdict to render it throws the read away."""
        started = time.perf_counter()
        (key, parsed, error), elsewhere = await self._run(_keyed, result, body)
        return ReadAhead(result, key, parsed, error, elsewhere, time.perf_counter() - started)

    async def _run(self, job: Any, result: ScrapeResult, body: bytes) -> tuple[Any, bool]:
        """``job(result, body)`` on a worker process once they are up, else on a thread; and which it was."""
        self._read += 1
        if self.processes and self._pool is None and self._read > self.after:
            self._start()
        if self._ready is not None and not self._ready.done() and self.after == 0:
            # every page to the workers: the first ones wait for them to start
            with contextlib.suppress(Exception):
                await asyncio.shield(self._ready)
        pool, ready = self._pool, self._ready
        if pool is not None and ready is not None and ready.done() and not ready.cancelled():
            if ready.exception() is None:
                try:
                    answer = await asyncio.wrap_future(pool.submit(job, result, body))
                except (concurrent.futures.process.BrokenProcessPool, RuntimeError) as exc:
                    # a worker died (or another page found so and shut the pool down): this page on a thread
                    self._lost(f"{type(exc).__name__}: {exc}")
                else:
                    return answer, True
        return await asyncio.to_thread(self._here, job, result, body), False

    def _here(self, job: Any, result: ScrapeResult, body: bytes) -> Any:
        """``job`` in this process, with the crawl's own plugins."""
        if job is _keyed:
            return key_and_read(self._parse_here, result, body)
        return self._parse_here(result, body)

    def _parse_here(self, result: ScrapeResult, body: bytes) -> ScrapeResult | None:
        parsed: ScrapeResult | None = self.pm.hook.crawl_parse(result=result, body=body, crawl=self.crawl)
        return parsed

    def _start(self) -> None:
        config = getattr(self.pm, "config", None)
        values = dict(config.values) if config is not None else {}
        env = {k: v for k, v in os.environ.items() if k.startswith("NITPICKER_")}
        try:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("forkserver"),
                initializer=_init,
                initargs=(tuple(self.pm.enabled_names()), values, env, for_workers(self.crawl), os.getpid()),
            )
            ready = [asyncio.wrap_future(self._pool.submit(_ready)) for _ in range(self.processes)]
        except Exception as exc:  # noqa: BLE001 - no process to be had: the thread reads every page
            self._lost(f"{type(exc).__name__}: {exc}")
            return
        self._ready = asyncio.ensure_future(asyncio.gather(*ready))
        self._ready.add_done_callback(self._started)

    def _started(self, ready: asyncio.Future[Any]) -> None:
        if ready.cancelled():
            return
        if ready.exception() is not None:
            self._lost(f"the worker processes did not start: {ready.exception()}")

    def _lost(self, why: str) -> None:
        if not self.processes:
            return  # said once
        log.warning("reading pages in worker processes stopped (%s); the rest are read in this process", why)
        self.processes = 0
        self.close(wait=False)

    def close(self, wait: bool = True) -> None:
        """Stop the worker processes (pages in flight are the caller's to have awaited or abandoned)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)
        if self._ready is not None and not self._ready.done():
            self._ready.cancel()
