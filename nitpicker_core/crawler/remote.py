"""Rendering on Dask workers: one Chromium per worker (a WorkerPlugin) runs the crawl's scrape hooks there.

The queue, scope, robots.txt, politeness, preflights and the archive writer stay with the crawler; a page
to render goes to a worker as a ``RenderJob`` (plain data) and comes back as the ``ScrapeResult`` the
scrape hooks made, or a ``RenderFailure``. Each worker rebuilds the plugin manager from the crawl's plugin
names (as analyze workers do), so only entry-point plugins run there; ``crawl.state`` is the worker's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from distributed import get_worker
from distributed.client import FutureCancelledError
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.scheduler import KilledWorker

from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.policy import CrawlPolicy
from nitpicker_core.crawler.reading import for_workers, worker_plugin_manager
from nitpicker_core.crawler.render import RenderFailure, render_page
from nitpicker_core.crawler.stopping import PageAbandoned
from nitpicker_core.errors import NitpickerError
from nitpicker_core.records import CrawlContext, ScrapeResult

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager

__all__ = ["BrowserWorker", "ClusterLost", "DaskRenderer", "RenderJob", "render_on_worker"]

PLUGIN_PREFIX = "nitpicker-browser-"
TASK_PREFIX = "nitpicker-render-"  # + a random hex: a key says nothing about the URL or its credentials
TASK_RETRIES = 2  # a task that raised (its worker's browser would not start) runs again, maybe elsewhere
CLOSE_TIMEOUT = 60.0


class ClusterLost(PageAbandoned):
    """The Dask scheduler is gone: the page goes back to pending and the crawl ends ``interrupted``."""


@dataclass(frozen=True)
class RenderJob:
    """One URL to render on a worker; secrets (credentials, ``--header`` values) never appear in its repr."""

    plugin: str  # the name of this crawl's BrowserWorker plugin
    url: str
    light: bool
    timeout: float
    credentials: dict[str, str] | None = field(default=None, repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    # a logged-in crawl's cookies and localStorage: the login runs on the client, its state travels with each job
    cookies: list[dict[str, Any]] = field(default_factory=list, repr=False)
    storage: list[dict[str, Any]] = field(default_factory=list, repr=False)


class BrowserWorker(WorkerPlugin):
    """One Chromium per worker for one crawl: started with the plugin, reused, relaunched when it crashed.

    Playwright runs on an event loop thread of its own; task threads hand it their jobs, each thread
    keeping its page between URLs (as a local tab does).
    """

    def __init__(
        self,
        name: str,
        plugin_names: tuple[str, ...],
        config_values: dict[str, Any],
        crawl: CrawlContext,
        user_agent: str,
        scope: Any,
    ) -> None:
        self.name = name
        self.plugin_names, self.config_values = plugin_names, config_values
        self.crawl, self.user_agent, self.scope = crawl, user_agent, scope

    def setup(self, worker: Any = None) -> None:
        # BrowserHost imports Playwright when it first starts a browser; here it is imported now, so a worker
        # without it fails the plugin's setup, which the crawl reports before any page, not a page at a time
        import playwright.async_api  # noqa: F401

        from nitpicker_core.crawler.browser import BrowserHost
        from nitpicker_core.crawler.slots import PageSlots

        self.pm = worker_plugin_manager(self.plugin_names, self.config_values)
        self._policy: Any = None
        self.host = BrowserHost()
        self.slots = PageSlots(self.host, self.user_agent)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=self.name, daemon=True)
        self._thread.start()
        # Chromium starts while the crawl preflights its first pages; a failure shows on the first render
        warm = asyncio.run_coroutine_threadsafe(self.host.start(), self.loop)
        warm.add_done_callback(lambda done: done.exception())

    def teardown(self, worker: Any = None) -> None:
        async def close() -> None:
            await self.slots.close()
            await self.host.close()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close(), self.loop).result(CLOSE_TIMEOUT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(CLOSE_TIMEOUT)
        if not self._thread.is_alive():
            self.loop.close()

    def render(self, job: RenderJob) -> ScrapeResult | RenderFailure | None:
        """Render ``job`` in this worker's Chromium (called from a task thread, which it blocks)."""
        slot = threading.get_ident()
        return asyncio.run_coroutine_threadsafe(self._render(job, slot), self.loop).result()

    async def _render(self, job: RenderJob, slot: int) -> ScrapeResult | RenderFailure | None:
        return await render_page(
            self.pm,
            self.crawl,
            self.slots,
            slot,
            job.url,
            light=job.light,
            credentials=job.credentials,
            timeout=job.timeout,
            route=self._router(job.headers),
            cookies=job.cookies or None,
            storage=job.storage or None,
        )

    def _router(self, headers: dict[str, str]) -> Any:
        """``--header`` values go to in-scope requests only, as in a local crawl (the crawler's own policy)."""
        if not headers:
            return None
        if self._policy is None:
            self._policy = CrawlPolicy(CrawlOptions(roots=[], headers=headers, ignore_robots=True))
            self._policy.scope = self.scope
        return self._policy.route_headers


def render_on_worker(job: RenderJob) -> ScrapeResult | RenderFailure | None:
    """The Dask task: render ``job`` with the worker's BrowserWorker of this crawl."""
    plugin = get_worker().plugins.get(job.plugin)
    if not isinstance(plugin, BrowserWorker):
        raise RuntimeError("this Dask worker has no nitpicker browser for the crawl")
    try:
        return plugin.render(job)
    except Exception as exc:  # re-raised as plain data: a Playwright error need not pickle
        raise RuntimeError(f"{type(exc).__name__}: {exc}") from None


class DaskRenderer:
    """The crawler's side: registers the BrowserWorker, submits renders and awaits them on the event loop.

    It stands where the local ``BrowserHost`` does (``start``, ``close``, ``kill_now``, ``restarts``).
    """

    restarts = 0  # Chromium restarts happen on the workers; each worker relaunches its own

    def __init__(
        self, client: Any, pm: NitpickerPluginManager, crawl: CrawlContext, options: Any, scope: Any
    ) -> None:
        self.client = client
        self.name = PLUGIN_PREFIX + uuid.uuid4().hex
        config = getattr(pm, "_config", None)  # the command's settings, as analyze workers get them
        self._plugin = BrowserWorker(
            self.name,
            tuple(pm.enabled_names()),
            dict(config.values) if config is not None else {},
            for_workers(crawl),
            options.user_agent,
            _without_credentials(scope),
        )
        self._headers = dict(options.headers)
        self._started = False
        self.lost: str | None = None  # why the cluster is gone, once it is
        self.on_lost: Callable[[str], None] | None = None

    async def start(self) -> None:
        if not self._started:
            try:
                await asyncio.to_thread(self.client.register_plugin, self._plugin, self.name)
            except Exception as exc:
                # the workers where it was set up started a Chromium: stop them (and keep the plugin from
                # workers that join later) before the crawl ends
                await self._unregister()
                if self.client.status not in ("running", "newly-created"):
                    raise
                why = " ".join(f"{type(exc).__name__}: {exc}".split())
                raise NitpickerError(
                    f"the crawl's browser could not be set up on the Dask workers ({why})"
                ) from None
            self._started = True

    async def _unregister(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                asyncio.to_thread(self.client.unregister_worker_plugin, self.name), CLOSE_TIMEOUT
            )

    async def close(self) -> None:
        if self._started and self.lost is None:
            await self._unregister()
        self._started = False

    def kill_now(self) -> None:
        """Nothing to kill here: each worker's Chromium goes with its worker."""

    async def render(
        self,
        url: str,
        *,
        light: bool,
        credentials: dict[str, str] | None,
        timeout: float,
        cookies: list[dict[str, Any]] | None = None,
        storage: list[dict[str, Any]] | None = None,
    ) -> ScrapeResult | RenderFailure | None:
        if self.lost is None and self.client.status in ("closing", "closed"):
            self._lose("the Dask client is closed")
        if self.lost is not None:
            raise ClusterLost(self.lost)
        job = RenderJob(
            self.name,
            url,
            light,
            timeout,
            credentials,
            self._headers,
            list(cookies or ()),
            list(storage or ()),
        )
        key = TASK_PREFIX + uuid.uuid4().hex
        future = self.client.submit(render_on_worker, job, key=key, pure=False, retries=TASK_RETRIES)
        try:
            return await _settled(future)
        except FutureCancelledError as exc:  # nitpicker never cancels a render: the scheduler went away
            self._lose(exc.msg or exc.reason)
            raise ClusterLost(self.lost or "") from None
        except KilledWorker:
            # the page brought down every worker it went to (Dask's allowed-failures): that is its outcome
            return RenderFailure("unknown", "the Dask workers rendering this page died each time")
        finally:
            future.release()

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = " ".join(str(why).split()) or "the Dask scheduler is gone"
            if self.on_lost is not None:
                self.on_lost(self.lost)


async def _settled(future: Any) -> Any:
    """The result of a Dask future, awaited without blocking the event loop (no thread waits on it)."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[tuple[bool, Any]] = loop.create_future()

    def settle(outcome: tuple[bool, Any]) -> None:
        if not waiter.done():
            waiter.set_result(outcome)

    def done(settled: Any) -> None:  # on Dask's callback thread
        try:
            outcome: tuple[bool, Any] = (True, settled.result())
        except BaseException as exc:  # noqa: BLE001 - handed over to the awaiting task as it is
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, outcome)

    future.add_done_callback(done)
    ok, value = await waiter
    if not ok:
        raise value
    return value


def _without_credentials(scope: Any) -> Any:
    """A copy of the scope for the workers: which URLs are in scope, never the roots' credentials."""
    import copy

    clean = copy.copy(scope)
    clean.entries = [dataclasses.replace(entry, credentials=None) for entry in scope.entries]
    return clean
