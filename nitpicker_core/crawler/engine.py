"""The crawl loop: queue → policy → preflight → browser → scrape hooks → archive sink, with bounded parallelism."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_core.content_types import binary_body
from nitpicker_core.crawler.auto import AutoRender, Decision
from nitpicker_core.crawler.errors import PERMANENT_KINDS, DnsBurnList
from nitpicker_core.crawler.events import EventSink
from nitpicker_core.crawler.fetch import Fetcher, FetchResult, HostThrottle
from nitpicker_core.crawler.limits import ArchivedDepths, Limits, record_held
from nitpicker_core.crawler.login import LoginSession
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.pagination import PaginationPredictor
from nitpicker_core.crawler.phases import EXTRACTION_IN_PROCESSES, PhaseClock
from nitpicker_core.crawler.policy import CrawlPolicy
from nitpicker_core.crawler.queue import QueueCounts, QueueItem, UrlQueue
from nitpicker_core.crawler.reading import PageReaders, ReadAhead
from nitpicker_core.crawler.render import RenderFailure, render_page
from nitpicker_core.crawler.results import (
    HTML_TYPES,
    ResultsMixin,
    declined_by_browser,
    mark_blocked,
    not_a_page,
    unrenderable,
)
from nitpicker_core.crawler.revalidation import Revalidation
from nitpicker_core.crawler.slots import PageSlots
from nitpicker_core.crawler.stopping import PageAbandoned, StopSignals, given_secrets, resume_hint
from nitpicker_core.indexing import Indexer
from nitpicker_core.layout import stub_path
from nitpicker_core.records import Anchor, CrawlContext, PageError, Resource, ScrapeResult
from nitpicker_core.sinks import ArchiveSink, auto_render_sink, check_sink, revalidating
from nitpicker_core.urls import looks_like_html, normalize, split_credentials

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager

log = logging.getLogger(__name__)
STOP_GRACE_SECONDS = 5.0  # in-flight pages after the first stop request; then they go back to pending
# URLs an update revalidates at once: a conditional request costs the server a stat, not a render, so more
# are in flight than there are tabs (rendering stays at --parallels); none extra when --interval spaces them
REVALIDATING_WORKERS = 8
# Workers per tab: the extra one preflights (policy, skip hooks, HEAD/GET) the next URL while the tab renders
PREFLIGHT_AHEAD = 2
# --render auto: pages that may wait for their template's verdict (its sample rendering) while other workers go
# on fetching and reading the next URLs; the requests at once stay those of the usual workers
VERDICT_WAITERS = 64
RENDER_MODES = ("always", "never", "auto")
# --render never: a page's body is read up to this many bytes (the limit of the HTML as sent a render keeps)
PARSE_BODY_LIMIT = 10 * 1024 * 1024
NOT_RENDERED = "--render never: read from the HTML the server sent"
# --render never: progress told at most this often (seconds); a page takes milliseconds, and counting the queue
# walks every URL found, so counting at each page's start and end cost more than reading the pages
PARSED_PROGRESS_EVERY = 0.2
# a logged-in crawl: how often one page is asked again after the session expired under it (each time after a
# login again, by this page or another; the logins of a whole crawl are bounded by [login] max_renewals)
PAGE_RELOGINS = 3


@dataclass
class CrawlStats:
    status: str = "complete"
    pages: int = 0
    rendered: int = 0
    parsed: int = 0  # pages read from the HTML as sent, without a browser (--render never, auto)
    auto: dict[str, Any] = field(default_factory=dict)  # --render auto: templates, samples, degradation
    skipped: int = 0
    internal_errors: int = 0
    external_errors: int = 0
    browser_restarts: int = 0
    seconds: float = 0.0
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    limits: dict[str, Any] = field(default_factory=dict)  # --max-pages/--max-depth and what they left out
    start_links: dict[str, Any] = field(default_factory=dict)  # the start page's same-host links vs the scope
    unextracted: int = 0  # rendered pages stored without title and links (the extraction timed out)
    phases: dict[str, Any] = field(default_factory=dict)  # this run's seconds per page phase (PhaseClock)
    revalidation: dict[str, Any] = field(default_factory=dict)  # --update: conditional requests and 304s
    # seconds this run waited before requests to each host (Retry-After, slowdown, --max-rps, Crawl-delay)
    waited: dict[str, float] = field(default_factory=dict)
    # a logged-in crawl: cookies used, cookies of other hosts dropped, logins again, logout links left out
    login: dict[str, Any] = field(default_factory=dict)
    # hosts whose DNS lookup failed in an earlier run of the commit → URLs of this run not asked for it
    dns_failed_before: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Crawler(ResultsMixin):
    """One crawl into one archive commit. ``run()`` returns the stats; the archive is written at the end."""

    def __init__(
        self,
        pm: NitpickerPluginManager,
        options: CrawlOptions,
        output: Path,
        *,
        mode: str = "new",
        list_urls: list[str] | None = None,
        kind: str = "crawl",
        inventory: bytes | None = None,
        progress: Any = None,
        browser_factory: Any = None,
        stop: StopSignals | None = None,
        stop_message: Any = None,
        revalidate: bool = True,
        executor: Any = None,
        executor_flag: str | None = None,
    ) -> None:
        self.pm, self.options, self.output = pm, options, output
        self._executor = executor  # a connected distributed.Client: pages render on its workers
        self.executor_flag = (
            executor_flag  # ``--executor`` as given (dask://HOST:PORT…): the resume repeats it
        )
        self.cluster_lost: str | None = (
            None  # why the Dask cluster went away, for the caller to say at the end
        )
        self.list_urls = list_urls
        self.inventory = inventory
        self.progress = progress
        self.stats = CrawlStats()
        self.dns = DnsBurnList()
        self.fetcher = Fetcher(
            options.user_agent,
            retries=max(1, options.retry),
            max_retry_after=options.max_retry_after,
            throttle=HostThrottle(max_rps=options.max_rps),
            timeouts=options.preflight_timeouts,
            dns_burn=self.dns,
            pool_size=max(10, options.parallels * 2),
        )
        storage = options.for_storage()
        self.crawl = CrawlContext(
            output=output, roots=storage["roots"], options=storage, kind=kind, mode=mode
        )
        # the plugins the environment manifest records: what this manager found loading the entry points,
        # so the archive writer reads no installed distribution's METADATA again
        distributions = getattr(pm, "distributions", None)
        if callable(distributions):
            self.crawl.environment["plugins"] = distributions()
        self.policy = CrawlPolicy(options)
        self.scope = self.policy.scope
        self.archive: ArchiveSink | None = None  # from crawl_open_archive, when run() starts
        limits = Limits(options.max_pages, options.max_depth)
        # a continued commit knows depths from its stored links; a fresh one only its roots'
        graph = None if mode in ("new", "update") else (lambda: self._sink().link_graph())
        self.queue = UrlQueue(
            disable_queries=options.disable_queries,
            limits=limits,
            on_hold=record_held(self),
            is_internal=self.scope.is_internal,
            same_host=self.scope.same_host,
            depth_of=None
            if options.max_depth is None
            else ArchivedDepths(
                graph, list_urls or options.roots, options.max_depth, disable_queries=options.disable_queries
            ),
        )
        self.predictor = PaginationPredictor(max(1, options.parallels))
        # the limits and what they left out go into the commit's stats (a live dict the queue keeps current)
        self.stats.limits = self.queue.limit_stats()
        self.crawl.options.update(options.scrape_options())
        self._linked: set[str] = set()  # URLs some page really links to (a prediction of one is no guess)
        self._held: dict[str, Any] = {}  # guessed pages read, stored once a page links to them
        self._outside_depth: dict[str, int] = {}  # out-of-scope pages crawled under --max-excluded-depth
        self._where: dict[str, tuple[bool, bool]] = {}  # URL → (in the scope, on its hosts): asked per link
        self._claimed: dict[str, str] = {}  # rendered destination → the URL that rendered it
        self._captured: dict[str, Resource] = {}  # 2xx non-HTML sub-resources seen while rendering
        self._stopping = False
        self._stop = stop
        self.stop_message = stop_message  # called with a line to show when a stop is requested
        self.stop_grace = STOP_GRACE_SECONDS
        self._grace: asyncio.TimerHandle | None = None
        self._host: Any = None
        self._browser_factory = browser_factory
        self.sink: EventSink | None = None
        self._writer: Any = None  # the archive writer's child process, when the sink lives there
        self.clock = PhaseClock()
        self._revalidate = revalidate  # False: --update --full renders every page again
        self.revalidation = Revalidation()
        self._browser_lock = asyncio.Lock()
        self._tabs: asyncio.Queue[int] = asyncio.Queue()  # free tab numbers: --parallels pages render at once
        self._browser_started = False
        self._remote: Any = None  # the DaskRenderer standing for the browser when an executor is given
        self._sitemap_reader: Any = None  # reading the sitemaps, while it does (aborted on a stop)
        self._parsing = options.render == "never"  # no browser: pages read from the HTML as sent
        # --render auto: pages read as sent unless their template's rendered sample showed JavaScript at work
        self._auto = AutoRender() if options.render == "auto" else None
        self._rendered_once = asyncio.Event()  # a page was rendered: the warm-up opens the other tabs then
        self._reading = options.render != "always"  # a page's preflight is one GET taking its body
        self._checked: dict[str, asyncio.Task[Resource | None]] = {}  # --render never: sub-resources asked
        # --render never, auto: pages read from their HTML, on worker processes once there are enough of them
        self._readers = PageReaders(pm, self.crawl, options.parallels)
        self._waiting = 0  # --render auto: pages waiting for their template's verdict
        self._spares: set[asyncio.Task[None]] = set()  # workers started for them (VERDICT_WAITERS at most)
        self._workers = 0  # the usual workers: as many requests at once (``_requests``)
        self._requests: asyncio.Semaphore | None = None
        self._progress_at = 0.0  # when progress was last told
        self.login: LoginSession | None = None  # --cookies, --storage-state, a scripted login
        if options.login is not None:
            hosts = {entry.host for entry in self.scope.entries}
            self.login = LoginSession(options.login, hosts, pm, options.user_agent, own=self.scope.same_host)
            self.fetcher.use_login(self._login_cookie)
            self.policy.robots.use_login(self._login_cookie)  # a robots.txt behind the login is the members'

    def _login_cookie(self, url: str) -> str | None:
        """The login's ``Cookie`` header for a request of the crawler's own: to the site's own hosts only (a
        cookie of ``localhost`` or ``.example.com`` would match other ports and hosts too)."""
        return self.login.header(url) if self.login is not None and self.scope.same_host(url) else None

    # -- lifecycle -------------------------------------------------------------------------------------
    async def run(self) -> CrawlStats:
        from nitpicker_core.crawler.browser import BrowserHost

        started = time.monotonic()
        # Signals are ours from here on, before the archive or the browser exist: a stop requested
        # while either is being set up still ends in a written, resumable archive
        owned = self._stop is None
        stop = self._stop if self._stop is not None else StopSignals().install()
        self._stop = stop
        stop.attach_loop(asyncio.get_running_loop())
        stop.on_first(self._request_stop)
        self._stub_existed = stub_path(self.output).exists()
        try:
            if self.login is not None:  # a login that fails ends the crawl before anything is written
                await self.login.start()
            self._open_archive()
            self.pm.hook.crawl_started(crawl=self.crawl)
        except BaseException:
            self._abandon()
            if owned:
                stop.remove()
            raise
        self.sink = EventSink(self.pm, self.crawl, self._sink(), clock=self.clock, writer=self._writer)
        if self._executor is not None:
            from nitpicker_core.crawler.remote import DaskRenderer

            self._remote = DaskRenderer(self._executor, self.pm, self.crawl, self.options, self.scope)
            self._remote.on_lost = self._cluster_lost
        host = self._remote or (self._browser_factory or BrowserHost)()
        self._host = host
        stop.on_second(self._kill_browser)
        self.slots = PageSlots(host, self.options.user_agent)
        warming: asyncio.Task[None] | None = None
        try:
            self._seed()
            self._restore_auto()
            self._prepare_revalidation()
            warming = self._warm_up()
            await self._read_sitemaps()
            # an update that may render nothing starts Chromium only when a page needs it
            if not self._stopping and not self.revalidation.validators and not self._reading:
                await self._start_browser()
        except BaseException:
            await self._cold(warming)
            await host.close()
            self._abandon()
            if owned:
                stop.remove()
            raise
        try:
            count = max(1, self.options.parallels)
            for tab in range(count):
                self._tabs.put_nowait(tab)
            self._workers = self._worker_count(count)
            self._requests = asyncio.Semaphore(self._workers)
            workers = [asyncio.create_task(self._worker(i)) for i in range(self._workers)]
            await asyncio.gather(*workers)
            while self._spares:  # workers started while pages waited for a verdict
                await asyncio.gather(*list(self._spares))
            self._tell_progress(force=True)
        except asyncio.CancelledError:
            self._stopping = True
        finally:
            for spare in list(self._spares):
                spare.cancel()
            await asyncio.gather(*self._spares, return_exceptions=True)
            if self._grace is not None:
                self._grace.cancel()
            self.stats.browser_restarts = getattr(host, "restarts", 0)
            await self._cold(warming)
            await self.slots.close()
            await host.close()
            self._readers.close()
            self.stats.seconds = round(time.monotonic() - started, 3)
            self.stats.phases = self.clock.as_dict()
            if self.login is not None:
                self.stats.login = self.login.stats()
            if self._auto is not None:
                self.stats.auto = self._auto.as_dict()
            if self.crawl.mode == "update":
                self.stats.revalidation = self.revalidation.as_dict()
            if self._stopping or not self.queue.idle():
                self.stats.status = "interrupted"
            try:
                self._finish()
            finally:
                stop.attach_loop(None)
                if owned:
                    stop.remove()
        return self.stats

    def _open_archive(self) -> None:
        """The archive sink from ``crawl_open_archive``, kept by the crawler; none means no crawl at all."""
        from nitpicker_core.crawler import writer_process

        if writer_process.wanted(self.options.render) and writer_process.child_can_host(self.pm):
            writer = writer_process.WriterProcess(self.pm, self.crawl)
            started = writer.open()  # the sink's refusal (nothing to resume…) is raised as from the hook
            if started is not None:
                self._writer = writer
                self.archive = writer_process.RemoteSink(writer, *started)
                self.crawl.commit = self.archive.commit
                if self._stop is not None:  # a second Ctrl-C ends this process now: the writer's too
                    self._stop.on_second(writer.kill_now)
                return
        opened = self.pm.hook.crawl_open_archive(crawl=self.crawl, indexer=Indexer(self.pm))
        try:
            self.archive = check_sink(opened)
        except BaseException:
            abandon = getattr(opened, "abandon", None)  # a sink short of the protocol still let go of
            if callable(abandon):
                with contextlib.suppress(Exception):
                    abandon()
            raise
        self.crawl.commit = self.archive.commit

    def _sink(self) -> ArchiveSink:
        if self.archive is None:
            raise RuntimeError("the archive sink is not open")  # run() opens it before anything uses it
        return self.archive

    def _finish(self) -> None:
        assert self.sink is not None
        self._store_robots_files()
        self.sink.drain()
        self.fetcher.close()
        self.stats.waited = self.fetcher.throttle.waits()
        self.stats.dns_failed_before = dict(self.dns.skipped_before)
        try:
            self.sink.close()
        except BaseException:
            if self.crawl.mode in ("append", "inventory"):  # a failed ingestion leaves the archive as it was
                self._abandon()
                raise
            self.stats.status = "interrupted"
            self._sink().finish(self.stats.status, self.stats.as_dict())
            self.pm.hook.crawl_finished(crawl=self.crawl, stats=self.stats.as_dict())
            raise
        self._whole_commit_stats()
        self._sink().finish(self.stats.status, self.stats.as_dict())
        self.pm.hook.crawl_finished(crawl=self.crawl, stats=self.stats.as_dict())

    def _store_robots_files(self) -> None:
        """The robots.txt files this run read of the site's hosts, with the commit (a sink that takes them): what
        well-known crawlers may fetch is judged from them afterwards (nitpicker_core.crawler_access)."""
        from nitpicker_core.sinks import robots_sink

        sink = robots_sink(self._sink())
        # the site's own hosts: what the judging reads (an external link's host's robots.txt is not the site's)
        files = [f for f in self.policy.robots.files() if self.scope.same_host(f.origin + "/")]
        if files and sink is not None and self.sink is not None:
            self.sink.call("put_robots_files", files)

    def _whole_commit_stats(self) -> None:
        """Counts of the whole commit, earlier runs into it included (--resume, --append), from its rows.

        The in-memory counters see only this run; the exit code and the summary must describe the commit.
        """
        whole = self._sink().commit_stats()
        for key in (
            "pages",
            "rendered",
            "parsed",
            "skipped",
            "internal_errors",
            "external_errors",
            "errors_by_kind",
            "unextracted",
        ):
            if key in whole:
                setattr(self.stats, key, whole[key])

    def _abandon(self) -> None:
        """Nothing of this run is kept: close without writing; drop the working directory it created."""
        self.fetcher.close()
        if self.sink is not None:
            with contextlib.suppress(BaseException):
                self.sink.close()
        archive, self.archive = self.archive, None
        if archive is not None:
            archive.abandon()
        if not self._stub_existed:
            shutil.rmtree(stub_path(self.output), ignore_errors=True)

    def _seed(self) -> None:
        """Fill the queue for this mode: what the commit already holds is done, the rest is to do."""
        archive, mode = self._sink(), self.crawl.mode
        done = dict(archive.done_urls()) if mode != "new" and mode != "update" else {}
        if mode == "append":  # former external pages now in scope are crawled again, fully
            done = {url: r for url, r in done.items() if r or not self.scope.is_internal(url)}
        retry: list[str] = []
        failed = archive.failed_urls() if mode in ("resume", "append", "retry-failed") else {}
        for url, kind in failed.items():  # the DNS burn list lives in the commit: not looked up again
            if kind == "dns":
                self.dns.carry(urlsplit(url).hostname or "")
        if mode == "retry-failed":  # permanent kinds stay failed, so repeated retries converge
            retry = [url for url, kind in failed.items() if kind not in PERMANENT_KINDS]
            done = {url: r for url, r in done.items() if url not in set(retry)}
        for url, rendered in done.items():
            self.queue.add_done(url, rendered=rendered)
        seeds = self.list_urls if self.list_urls is not None else self.options.roots
        for listed in self.list_urls or ():  # a listed URL is a root: it and what lies below it are in scope
            self.scope.add(listed)
        if mode == "retry-failed":
            seeds = retry
        items = []
        for raw in seeds:
            url = normalize(split_credentials(raw)[0], disable_queries=self.options.disable_queries)
            items.append(self._placed(url, metadata_only=False))
        self._seeds = {item.url for item in items}
        fresh = self.queue.add(items)
        if mode in ("resume", "append"):
            for url in archive.pending_urls():
                self.queue.add([self._placed(url)])
        if mode == "inventory" and self.inventory is not None:
            import hashlib

            counts = {"listed": len(items), "new": len(fresh), "known": len(items) - len(fresh)}
            assert self.sink is not None  # set when run() starts
            self.sink.call("put_inventory_run", hashlib.sha256(self.inventory).hexdigest(), counts)

    def _restore_auto(self) -> None:
        """--render auto continuing a commit: the templates its stored samples settled keep their verdicts."""
        if self._auto is None or self.crawl.mode in ("new", "update"):
            return
        sink = auto_render_sink(self._sink())
        if sink is None:  # a sink that cannot tell: its templates are sampled again
            return
        if self.sink is not None:  # the sink is asked nothing while a write is queued (--inventory's run)
            self.sink.drain()
        self._auto.restore(sink.render_decisions())

    async def _read_sitemaps(self) -> None:
        """The crawl's sitemaps, read once per run of a commit: stored with it (a sink that takes them) and,
        unless ``--no-sitemap-seed``, their URLs in scope queued as well as the roots. ``--resume`` reads them
        again (the stop may have come before they were stored; URLs already done stay done)."""
        from nitpicker_core.crawler.sitemaps import SitemapReader, seed_urls, sitemap_starts
        from nitpicker_core.sinks import sitemap_sink

        if self.crawl.mode not in ("new", "update", "resume") or self._stopping:
            return
        options, scope = self.options, self.scope
        reader = SitemapReader(
            options.user_agent or "Nitpicker",
            fetchable=scope.same_host,
            credentials=scope.credentials_for,
            headers=lambda url: options.headers if scope.is_internal(url) else None,
            cookies=self._login_cookie if self.login is not None else None,
            disable_queries=options.disable_queries,
        )
        self._sitemap_reader = reader
        try:
            starts = await asyncio.to_thread(sitemap_starts, options, self.policy.robots)
            files = await asyncio.to_thread(reader.read, starts) if starts else []
        except Exception as exc:  # a stop cut robots.txt, or a bug: the crawl goes on without sitemaps
            if not self._stopping:
                log.warning("sitemaps not read: %s: %s", type(exc).__name__, exc)
            return
        if self._stopping:  # what a stop cut short is read again by --resume
            return
        sink = sitemap_sink(self._sink())
        if files and sink is not None and self.sink is not None:
            self.sink.call("put_sitemaps", files)
        if options.sitemap_seed and options.recursive:
            urls = [url for url in seed_urls(files, scope.is_internal) if url not in self._seeds]
            self.queue.add([self._placed(url, metadata_only=False) for url in urls])

    def _warm_up(self) -> asyncio.Task[None] | None:
        """Chromium starts, and the tabs' pages open, while robots.txt, the sitemaps and the first pages are
        fetched. --render always: the launch came after the sitemaps, which a large site's take seconds to
        read. --render auto: the first page is a template's sample, and nothing else is known until it is
        rendered: a start when it asks would put the launch on every page's path. Not for --render never (no
        browser), an update that may render nothing, nor a Dask cluster's browsers."""
        never = self._reading and self._auto is None
        if never or self._remote is not None or self.revalidation.validators or self._stopping:
            return None
        return asyncio.create_task(self._warm(), name="nitpicker-warm-up")

    async def _warm(self) -> None:
        try:
            await self._start_browser()
            if self.login is not None:  # a login's pages have its localStorage script: opened when needed
                return
            seed = min(self._seeds, default=None)  # the crawl's root: the usual first sample
            credentials = (
                self._credentials(seed) if seed is not None and self.scope.is_internal(seed) else None
            )
            await self.slots.warm(0, credentials)  # the first sample's tab first
            # the others once a page is rendered, while the pages it links to are fetched: opened during the
            # first render, they slowed down the one render every page waits for (~0.8 s on the docs site)
            await self._rendered_once.wait()
            await asyncio.gather(
                *(self.slots.warm(tab, credentials) for tab in range(1, max(1, self.options.parallels)))
            )
        except Exception:  # noqa: BLE001 - the first render starts it again, and that one says what failed
            log.debug("starting the browser ahead failed", exc_info=True)

    async def _cold(self, warming: asyncio.Task[None] | None) -> None:
        """The warm-up, if still running, stopped before the browser closes."""
        if warming is not None and not warming.done():
            warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await warming

    async def _start_browser(self) -> None:
        async with self._browser_lock:
            if not self._browser_started:
                await self._host.start()
                self._browser_started = True

    def _prepare_revalidation(self) -> None:
        """--update: the base commit's validators, unless --full or the sink cannot take pages over."""
        if self.crawl.mode != "update":
            return
        sink = revalidating(self._sink())
        if not self._revalidate:
            self.revalidation.off = "--full: every page rendered again"
        elif sink is None:
            self.revalidation.off = "the archive sink cannot take unchanged pages over"
        else:
            self.revalidation.validators = sink.base_validators()
            if not self.revalidation.validators:
                self.revalidation.off = "the base commit's pages sent no ETag or Last-Modified"

    def _request_stop(self) -> None:
        """First stop request: take no new URLs; pages in flight get a short grace, then go back to pending."""
        if self._stopping:
            return
        self._stopping = True
        if self.stop_message:
            self.stop_message(
                f"stopping: {self.queue.counts().in_progress} page(s) in flight get "
                f"{self.stop_grace:.0f} s, then the archive is written (press Ctrl-C again to "
                "quit at once; --resume goes on from here either way)"
            )
        loop = asyncio.get_running_loop()
        self._grace = loop.call_later(self.stop_grace, self._abandon_in_flight)

    def _abandon_in_flight(self) -> None:
        """Grace is over: cut the network under the preflights and cancel every page still in flight."""
        self._abort_network()
        for task in asyncio.all_tasks():
            if task.get_name().startswith("nitpicker-page"):
                task.cancel()

    def _abort_network(self) -> None:
        with contextlib.suppress(Exception):
            self.fetcher.abort()
        if self._sitemap_reader is not None:
            self._sitemap_reader.abort()
        self.policy.abort()

    def _cluster_lost(self, why: str) -> None:
        """The Dask cluster went away: like a stop request, minus the grace (nothing is left to render).

        Not said here: a live progress display would draw over the line. The caller says ``cluster_lost``
        once its display is stopped.
        """
        if not self._stopping and self.cluster_lost is None:
            self.cluster_lost = f"the Dask cluster is gone ({why})"
        self._stopping = True

    def _kill_browser(self) -> None:
        """Second stop request: the process ends now, so its Chromium must not outlive it."""
        kill_now = getattr(self._host, "kill_now", None)  # a test's browser factory may have none
        if kill_now is not None:
            kill_now()
        if self.stop_message:
            self.stop_message("stopped at once; the crawl is resumable: " + self.resume_command)

    @property
    def resume_command(self) -> str:
        return resume_hint(
            self.output, needs_secrets=given_secrets(self.options), executor=self.executor_flag
        )

    # -- workers ---------------------------------------------------------------------------------------
    def _worker_count(self, tabs: int) -> int:
        """Workers for ``tabs`` tabs: one more per tab preflights the next URL while the tabs render.

        A worker checks, preflights and then waits for a free tab (``_render``), so the extra ones overlap
        the preflight with rendering; with ``--interval`` there are none, so requests stay spaced.
        """
        if self.options.interval:
            return tabs
        if self.revalidation.validators or self._reading:  # no tab to wait for: a request and a parse each
            return max(tabs * PREFLIGHT_AHEAD, REVALIDATING_WORKERS)
        return tabs * PREFLIGHT_AHEAD

    def _spare_worker(self) -> None:
        """A page waits for its template's verdict: another worker takes the next URLs meanwhile."""
        if self._stopping or self.options.interval or len(self._spares) >= VERDICT_WAITERS:
            return
        spare = asyncio.create_task(self._worker(self._workers + len(self._spares), spare=True))
        self._spares.add(spare)
        spare.add_done_callback(self._spares.discard)

    async def _worker(self, index: int, spare: bool = False) -> None:
        while not self._stopping:
            if spare and not self._waiting:  # no page waits for a verdict any more: the usual workers suffice
                return
            item = self.queue.pop()
            if item is not None:  # "in progress" moves when a page starts, not only when one ends
                self._tell_progress()
            if item is None:
                if not self.queue.in_flight():
                    return
                await asyncio.sleep(0.05)
                continue
            if self.options.interval:
                await asyncio.sleep(self.options.interval / 1000)
            task = asyncio.create_task(self._process(index, item), name=f"nitpicker-page-{index}")
            try:
                rendered = await task
            except (asyncio.CancelledError, PageAbandoned):
                # stopped while in flight: back to pending, never recorded as a failure
                self.queue.requeue(item.url)
                if not self._stopping:
                    raise
                return
            except Exception as exc:  # a bug in one URL's handling must not end the crawl
                if self._stopping:
                    self.queue.requeue(item.url)
                    return
                log.debug("processing %s failed", item.url, exc_info=True)
                self._error(item, "unknown", f"{type(exc).__name__}: {exc}", "crawler")
                rendered = False
            self.queue.finish(item.url, rendered=rendered)
            self._tell_progress()

    def _tell_progress(self, force: bool = False) -> None:
        """The queue's counts to the progress callback: at every page's start and end, or (--render never, where
        pages take milliseconds) at most every PARSED_PROGRESS_EVERY seconds."""
        if not self.progress:
            return
        now = time.monotonic()
        if self._reading and not force and now - self._progress_at < PARSED_PROGRESS_EVERY:
            return
        self._progress_at = now
        self.progress(self.counts())

    def counts(self) -> QueueCounts:
        """The queue's counts and the hosts slowed down now ("127.0.0.1:8000 answers 429"), for the progress line."""
        slowed = self.fetcher.throttle.slowed()
        counts = self.queue.counts()
        return replace(counts, slowed=tuple(f"{host} {why}" for host, why in sorted(slowed.items())))

    async def _process(self, worker: int, item: QueueItem) -> bool:
        """Handle one URL; True when the browser rendered it."""
        url = item.url
        if self._refuse_invalid(item):  # a link no request can go to (a port out of range): never fetched
            return False
        # off the event loop: a rule may fetch (robots.txt), and a slow site must not freeze the crawl
        # a link out of the site that is only recorded (--no-fetch-external) asks nothing of its host, so its
        # robots.txt is not read: on the docs site that was 327 hosts' robots.txt, most of the crawl's wall time
        unasked = item.external and not self.options.fetch_external
        if unasked and not self.pm.hook.crawl_should_skip.get_hookimpls():
            # nothing that may block: the excludes' globs alone (thousands of such links, a thread hop each)
            reason = self._skip_reason(url, robots=False)
        else:
            reason = await asyncio.to_thread(self._skip_reason, url, not unasked)
        if reason:
            if not self._is_guess(item):
                assert self.sink is not None  # set when run() starts
                self._skipped(url, reason, item)
            else:
                self.queue.discard(url)
            return False
        if item.external and not self.options.fetch_external:
            self._record(ScrapeResult(url=url, is_external=True, is_target=False, scraped=False))
            return False
        captured = self._captured.get(url)
        if captured is not None:  # already seen as a 2xx sub-resource: build the record, fetch nothing
            self._record(self._from_resource(item, captured))
            return False
        auth = self.scope.credentials_for(url) if item.in_scope else None
        headers = self.options.headers if item.in_scope else None  # --header values stay in scope
        conditional = self.revalidation.headers_for(url) if item.in_scope else None
        metadata_only = (
            not item.in_scope or item.metadata_only or (not self.options.recursive and not self._is_root(url))
        )
        # --render never, auto: a page is read from its body, so one GET takes it whole (no HEAD first)
        whole: dict[str, Any] = (
            {"method": "GET", "body_limit": PARSE_BODY_LIMIT} if self._reading and not metadata_only else {}
        )
        fetch_started = time.perf_counter()
        seen = self.login.generation if self.login is not None else 0
        assert self._requests is not None  # set when run() starts the workers
        await self._requests.acquire()  # as many requests at once as the usual workers, with spares too
        try:
            pre = await asyncio.to_thread(
                self.fetcher.fetch,
                url,
                auth=auth,
                headers={**(headers or {}), **conditional} if conditional else headers,
                **whole,
            )
            if conditional:
                self.revalidation.conditional += 1
                if pre.ok and pre.status == 304 and not pre.redirect_chain and await self._unchanged(item):
                    return True
                self.revalidation.changed += 1
                if pre.status == 304:  # a 304 this crawl cannot use (after a redirect): ask plainly
                    pre = await asyncio.to_thread(
                        self.fetcher.fetch, url, auth=auth, headers=headers, **whole
                    )
            for _ in range(PAGE_RELOGINS):  # other pages may spend a fresh session before this one is asked
                if not (
                    item.in_scope
                    and pre.ok
                    and await self._relogged(url, seen, pre.status, pre.redirect_chain)
                ):
                    break
                seen = self.login.generation if self.login is not None else 0
                pre = await asyncio.to_thread(self.fetcher.fetch, url, auth=auth, headers=headers, **whole)
        except ValueError as exc:  # it redirects to a URL no request can go to (a port out of range…)
            self._error(item, "invalid-url", f"redirects to an invalid URL: {exc}", "preflight")
            return False
        finally:
            self._requests.release()
            self.clock.add("preflight", time.perf_counter() - fetch_started)
        if not pre.ok and not pre.needs_browser:
            return self._failed(item, pre)
        if self._is_guess(item) and (pre.status or 0) >= 400:
            self.queue.discard(url)
            return False
        final = normalize(pre.final_url) if pre.ok else url
        if pre.ok and final != url and final in self._claimed:
            self._record(self._redirect_only(item, pre, final))
            return False
        html_like = pre.content_type in HTML_TYPES if pre.ok else looks_like_html(url)
        if not pre.ok and self._parsing:  # no browser to try instead
            return self._failed(item, pre)
        if not pre.ok:  # HEAD and GET died like behind a middlebox: the browser gets one try
            return await self._render(worker, item, pre, light=metadata_only)
        if metadata_only or not html_like:
            if final in self._claimed and final != url:
                self._record(self._redirect_only(item, pre, final))
            else:
                self._record(await self._light(item, pre, html_like))
            return False
        if unrenderable(pre, auth is not None):  # a 204, a download, a challenge: the answer is the record
            self._record(await self._answered(item, pre, html_like))
            return False
        if self._parsing:
            return await self._parse(item, pre)
        if self._auto is not None:
            return await self._auto_page(worker, item, pre)
        return await self._render(worker, item, pre)

    async def _unchanged(self, item: QueueItem) -> bool:
        """A 304 for an update: the commit takes the page over from the base commit and follows its links."""
        sink = revalidating(self._sink())
        assert sink is not None and self.sink is not None  # validators come only from such a sink

        def announce(links: list[str] | None) -> list[str] | None:
            if links is not None:
                self.pm.hook.crawl_page_unchanged(url=item.url, crawl=self.crawl)
            return links

        links = await self.sink.ask("put_unchanged", item.url, then=announce)
        if links is None:
            return False
        self.revalidation.unchanged += 1
        self.stats.pages += 1
        self._claimed[item.url] = item.url
        self._follow(item.url, ScrapeResult(url=item.url, anchors=[Anchor(href=link) for link in links]))
        return True

    def _skip_reason(self, url: str, robots: bool = True) -> str | None:
        """Why ``url`` is skipped (the crawler's policy first, then plugins), and robots.txt's Crawl-delay noted;
        ``robots=False`` for a URL that will not be requested (its host's robots.txt is not read)."""
        reason = self.policy.skip_reason(url, robots) or self._logout_reason(url)
        reason = reason or self.pm.hook.crawl_should_skip(url=url, crawl=self.crawl)
        if not reason and robots:
            delay = self.policy.crawl_delay(url)
            if delay:  # robots.txt Crawl-delay: spaces requests to this host only
                self.fetcher.throttle.set_interval(*delay)
        return reason

    def _logout_reason(self, url: str) -> str | None:
        """Logged in, a link of the site's that would log out is left out (it would end the session)."""
        if self.login is None or not self.scope.same_host(url) or not self.login.is_logout(url):
            return None
        self.login.logout_skipped += 1
        return "excluded (a logout link: the crawl is logged in)"

    async def _relogged(self, url: str, seen: int, status: int | None, chain: list[str]) -> bool:
        """True when the answer showed the session expired and a login again succeeded: ask once more."""
        if self.login is None or not self.login.expired(url, status, chain, seen):
            return False
        renewed = await self.login.renew(seen)
        if not renewed and self.login.failed_renewal:
            log.warning("the session expired and was not renewed: %s", self.login.failed_renewal)
        return renewed

    def _is_root(self, url: str) -> bool:
        return url in self._seeds

    # -- the parsing path (--render never, auto) ------------------------------------------------------
    async def _auto_page(self, worker: int, item: QueueItem, pre: FetchResult) -> bool:
        """--render auto: the page's template decides; rendered, or read as ``--render never`` reads it."""
        assert self._auto is not None
        if pre.method == "GET" and len(pre.body) <= PARSE_BODY_LIMIT and binary_body(pre.body):
            # bytes that are no text: whatever a browser made of them is no page (not_a_page), so none is
            # started for it, and no template made of it
            return await self._parse(item, pre)
        key, unreadable, ahead = None, "", None
        if pre.method != "GET":
            unreadable = "no body to read"
        elif len(pre.body) > PARSE_BODY_LIMIT:
            unreadable = f"the body is over the {PARSE_BODY_LIMIT}-byte limit"
        else:
            # read while the template's sample may still be rendering: a verdict to read it finds it read
            ahead = await self._readers.read_keyed(self._fetched(item, pre), pre.body)
            key = ahead.key
            if key is None:
                unreadable = "the HTML as sent could not be parsed"
        decision: Decision | None = None
        waits = self._auto.waits(key)
        try:
            if waits:
                self._waiting += 1
                self._spare_worker()
            try:
                decision = await self._auto.decide(item.url, key, unreadable)
            finally:
                if waits:
                    self._waiting -= 1
            if decision.render:
                return await self._render(worker, item, pre)
            return await self._parse(item, pre, f"--render auto: {decision.reason}", ahead)
        finally:
            if decision is not None:
                self._auto.done(item.url, decision)

    async def _parse(
        self,
        item: QueueItem,
        pre: FetchResult,
        unrendered: str = NOT_RENDERED,
        ahead: ReadAhead | None = None,
    ) -> bool:
        """Read a page from the HTML the server sent (``crawl_parse``); stored like a rendered page, marked not
        rendered. Returns False: no browser rendered it. ``ahead``: the page already read (``auto``)."""
        started = time.perf_counter()
        if pre.method != "GET" or len(pre.body) > PARSE_BODY_LIMIT:
            # a HEAD answered (a server that sent no body to take), or more than a page's HTML is kept for
            result = await self._answered(item, pre, True)
            result.extra["unrendered"] = (
                f"--render never: the body is over the {PARSE_BODY_LIMIT}-byte limit"
                if pre.method == "GET"
                else "--render never: no body to read"
            )
            self._record(result)
            return False
        result = ahead.result if ahead is not None else self._fetched(item, pre)
        if ahead is None and binary_body(pre.body):  # no HTML to read: the answer is the record (auto: asked)
            self._store_rendered(item, not_a_page(result), pre, rendered=False)
            return False
        if ahead is not None:
            parsed, elsewhere, started = ahead.parsed, ahead.elsewhere, time.perf_counter() - ahead.seconds
            if ahead.error is not None:  # a reader's bug on one page must not end the crawl
                self._error(item, "unknown", ahead.error, "parse")
                return False
        else:
            try:
                parsed, elsewhere = await self._readers.read(result, pre.body)
            except Exception as exc:  # a reader's bug on one page must not end the crawl
                self._error(item, "unknown", f"{type(exc).__name__}: {exc}", "parse")
                return False
        if parsed is None:
            self._error(item, "unknown", "no plugin read this URL", "parse")
            return False
        parsed.extra["unrendered"] = unrendered
        if self._auto is not None:
            parsed.render_decision = self._auto.parsed(item.url)
        # a worker process's page is counted apart: its wall time is not this process's CPU
        self.clock.add(EXTRACTION_IN_PROCESSES if elsewhere else "extraction", time.perf_counter() - started)
        parsed.received = await self._check_resources(parsed.resources)
        stored_at = time.perf_counter()
        try:
            self._store_rendered(item, parsed, pre, rendered=False)
        finally:
            self.clock.add("links", time.perf_counter() - stored_at)
        return False

    def _fetched(self, item: QueueItem, pre: FetchResult) -> ScrapeResult:
        """The answer's record, as every no-browser path starts it."""
        result = self._from_fetch(item, pre)
        if pre.redirect_chain:
            result.extra["redirect_status"] = pre.redirect_status
        return result

    async def _read_as_sent(self, item: QueueItem, scraped: ScrapeResult) -> None:
        """A rendered page that answered no extraction (its main thread busy, or its renderer starved by another
        tab's 100,000-link page) gets its title, links, headings and JSON-LD from its HTML as the server sends
        it, read as ``--render never`` reads a page; its page error says so (step ``extract-from-source``)
        instead of the page being stored without them. The browser cannot hand the body over then: the
        renderer that keeps it is the one not answering, so it is asked for once more."""
        final = scraped.redirect_chain[-1] if scraped.redirect_chain else item.url
        inside = item.in_scope
        try:
            got = await asyncio.to_thread(
                self.fetcher.fetch,
                final,
                method="GET",
                body_limit=PARSE_BODY_LIMIT,
                auth=self.scope.credentials_for(final) if inside else None,
                headers=self.options.headers if inside else None,
            )
            if not got.ok or got.content_type not in HTML_TYPES or len(got.body) > PARSE_BODY_LIMIT:
                return
            scratch = ScrapeResult(url=final, headers=dict(got.headers))
            sent = await asyncio.to_thread(
                self.pm.hook.crawl_parse, result=scratch, body=got.body, crawl=self.crawl
            )
        except Exception:  # noqa: BLE001 - a stop cut it, or the reader failed: the page keeps its page error
            return
        if sent is None or not isinstance(sent, ScrapeResult):
            return
        scraped.metadata, scraped.anchors, scraped.headings, scraped.jsonld = (
            sent.metadata,
            sent.anchors,
            sent.headings,
            sent.jsonld,
        )
        scraped.errors = [
            PageError(
                step="extract-from-source",
                message="the page did not answer in time: title, links and headings read from the HTML as sent",
            )
            if error.step == "extract"
            else error
            for error in scraped.errors
        ]

    async def _check_resources(self, urls: list[str]) -> list[Resource]:
        """The sub-resources a page's HTML names, each asked once per crawl (HEAD): what a browser would load."""
        for url in urls:
            if url not in self._checked:
                self._checked[url] = asyncio.create_task(self._check_resource(url))
        answers = await asyncio.gather(*(self._checked[url] for url in urls))
        return [answer for answer in answers if answer is not None]

    async def _answer_named(self, scraped: ScrapeResult) -> None:
        """A rendered page's resources the browser gave no answer for (its favicons: Chromium fetches them on
        its own time, if at all, after the page was read) are asked as ``--render never`` asks a page's: once per
        crawl, so whether the page has them never depends on when the browser got round to it."""
        answered = {resource.url for resource in scraped.received}
        named = [url for url in scraped.resources if url not in answered]
        if named:
            scraped.received = [*scraped.received, *await self._check_resources(named)]

    async def _check_resource(self, url: str) -> Resource | None:
        try:
            got = await asyncio.to_thread(self.fetcher.fetch, url)
        except Exception:  # noqa: BLE001 - a stop cut it, or it cannot be asked: no answer, as in a browser
            return None
        if not got.ok:
            return None  # a browser sees no response either: the page lists no such resource
        return Resource(
            url=url,
            status=got.status,
            status_text=got.status_text,
            content_type=got.content_type,
            content_length=got.content_length,
            compression=got.headers.get("content-encoding", ""),
            headers=dict(got.headers),
            is_external=not self.scope.is_internal(url),
        )

    # -- the browser path ------------------------------------------------------------------------------
    async def _render(self, worker: int, item: QueueItem, pre: FetchResult, light: bool = False) -> bool:
        """Render in the browser; ``light`` (a metadata-only URL) keeps only status, headers and title."""
        await self._start_browser()
        tab = await self._tabs.get()  # --parallels tabs, whatever the number of workers
        try:
            return await self._render_in(tab, item, pre, light)
        finally:
            self._tabs.put_nowait(tab)
            self._rendered_once.set()

    async def _render_in(self, worker: int, item: QueueItem, pre: FetchResult, light: bool) -> bool:
        url = item.url
        render_started = time.perf_counter()
        credentials = self._credentials(url) if item.in_scope else None
        timeout = self.options.page_timeout * 3
        host = urlsplit(url).netloc.rpartition("@")[2].lower()
        attempt = 0
        relogged = 0
        while True:
            seen = self.login.generation if self.login is not None else 0
            logged_in = self.login is not None and self.scope.same_host(url)
            cookies = self.login.browser_cookies() if self.login is not None and logged_in else None
            storage = self.login.browser_storage() if self.login is not None and logged_in else None
            # the navigation is a request to the host as the preflight is: it waits for its turn (--max-rps,
            # Retry-After, the slowdown); the sub-resources the browser loads do not
            # mostly its turn is now: asked on the loop, as a thread of the shared pool may wait behind the
            # fetches (--render auto's samples, which every page of their template waits for)
            if not self.fetcher.throttle.take_now(host):
                await asyncio.to_thread(self.fetcher.throttle.wait, host)
            if self._remote is not None:  # a Dask worker's Chromium renders it; the rest stays here
                scraped = await self._remote.render(
                    url,
                    light=light,
                    credentials=credentials,
                    timeout=timeout,
                    cookies=cookies,
                    storage=storage,
                )
            else:
                scraped = await render_page(
                    self.pm,
                    self.crawl,
                    self.slots,
                    worker,
                    url,
                    light=light,
                    credentials=credentials,
                    timeout=timeout,
                    route=self.policy.route_headers,
                    cookies=cookies,
                    storage=storage,
                )
            if not isinstance(scraped, ScrapeResult) or self._stopping:
                break
            if (
                item.in_scope
                and relogged < PAGE_RELOGINS
                and await self._relogged(url, seen, scraped.status, list(scraped.redirect_chain or ()))
            ):
                relogged += 1  # the session expired between the preflight and the render: once more
                continue
            final = scraped.redirect_chain[-1] if scraped.redirect_chain else url
            if not self.fetcher.pushed_back(
                final, scraped.status, (scraped.headers or {}).get("retry-after"), attempt
            ):
                break
            attempt += (
                1  # a 429 or 503 with Retry-After (or a 503): rendered again once the host may be asked
            )
        if isinstance(scraped, RenderFailure):
            # --render auto: the failure is stored with its decision; a failed sample's template is rendered
            decided = self._auto.failed(item.url, scraped.kind) if self._auto is not None else None
            if not scraped.timed_out and not self._stopping and declined_by_browser(pre, scraped.message):
                # The server answered the preflight and the browser would not show it: that answer is the
                # fact to record, and what the browser said a page error on it, not a crawl failure
                html_like = pre.content_type in HTML_TYPES
                answered = await self._answered(item, pre, html_like, browser_said=scraped.message)
                answered.render_decision = decided
                self._record(answered)
                return False
            self._error(item, scraped.kind, scraped.message, "render", decided=decided)
            return False
        if scraped is None:
            self._error(item, "unknown", "no plugin scraped this URL", "render")
            return False
        self.clock.add_scrape(scraped.extra, time.perf_counter() - render_started)
        if light:
            scraped.html, scraped.anchors, scraped.images = None, [], []
            scraped.received, scraped.resources = [], []  # an external page's sub-resources are not ours
            scraped.is_external, scraped.is_target = item.external, False
            mark_blocked(scraped)
            self._record(scraped)
            return False
        if binary_body(scraped.source if scraped.source is not None else scraped.html):
            scraped = not_a_page(scraped)
        elif any(error.step == "extract" for error in scraped.errors) and not scraped.anchors:
            await self._read_as_sent(item, scraped)
        await self._answer_named(scraped)
        if (
            self._auto is not None
        ):  # the decision stored with the page; a sample's comparison settles its template
            console = sum(1 for error in scraped.errors if error.step == "console")
            scraped.render_decision = self._auto.rendered(item.url, scraped.html_facts, console)
        stored_at = time.perf_counter()
        try:
            return self._store_rendered(item, scraped, pre)
        finally:
            self.clock.add("links", time.perf_counter() - stored_at)
