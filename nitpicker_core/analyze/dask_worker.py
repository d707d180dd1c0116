"""The worker side of analyze on Dask: a worker plugin that holds one analyzer instance per worker.

Imported on Dask workers (and by the client once it submits pages), never by a local run: it needs
``distributed``. The analyzer is rebuilt from plugin names like the local pool's workers do
(``pool.build_analyzer``); its ``setup``, every ``each_page`` and its ``teardown`` run on one thread of their
own, so a page over the time limit is abandoned there: an error row as locally, what the analyzer started
is killed, a fresh instance takes the next page and the client has the worker restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from distributed import WorkerPlugin, get_worker

from nitpicker_core.analyze import pool
from nitpicker_core.analyze.dask_pool import Blob
from nitpicker_core.analyze.pool import Outcome, Task, WorkerSpec

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader

log = logging.getLogger(__name__)

SHIP_ENV = "NITPICKER_DASK_SHIP_HTML"  # "1": workers act as if they could not read the archive path
MISSING = ("missing", b"")  # what the client ships for a page whose HTML the archive lacks


class _Thread:
    """One daemon thread that runs everything of one analyzer instance (setup, pages, teardown).

    Analyzers may hold thread-bound things (Playwright's sync API), so they always run on the same thread;
    a daemon one, so an abandoned page never keeps the worker process from exiting.
    """

    def __init__(self, name: str) -> None:
        self._calls: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not self._calls:
                    self._ready.wait()
                call, future = self._calls.pop(0)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:
                future.set_exception(exc)
            if call is _stop:
                return

    def call(self, fn: Callable[[], Any], timeout: float | None) -> Any:
        """``fn()`` on this thread; ``TimeoutError`` when it takes longer than ``timeout`` seconds."""
        future: Future[Any] = Future()
        with self._ready:
            self._calls.append((fn, future))
            self._ready.notify()
        return future.result(timeout)

    def stop(self) -> None:
        with self._ready:
            self._calls.append((_stop, Future()))
            self._ready.notify()


def _stop() -> None:
    return None


@dataclass
class Batch:
    """What a worker sends back for a batch of pages."""

    worker: str  # its address
    html_from: str  # where it reads HTML: "archive" (the path) or "shipped" (with each page)
    outcomes: list[bytes] = field(default_factory=list)  # pickled Outcomes of the first pages, in order
    seconds: float = 0.0  # spent in each_page over those pages (not in the analyzer's setup)
    restart: bool = False  # the last page went over time: restart this worker, send the rest again
    need_html: bool = False  # this worker cannot read the archive: nothing ran, send the batch with its HTML


@dataclass
class _Instance:
    analyzer: Any
    settings: dict[str, Any]
    thread: _Thread
    failure: tuple[str, str] | None = None  # (message, traceback) of a failed build or setup


class AnalyzerPlugin(WorkerPlugin):
    """The worker plugin of one analyzer run: builds the analyzer once per worker, runs its pages.

    Registered with ``Client.register_plugin`` under ``name``; a worker that joins (or is restarted) later
    gets it too. Dask calls ``setup`` / ``teardown``; tasks reach it through ``worker.plugins[name]``.
    """

    idempotent = False

    def __init__(self, name: str, spec: WorkerSpec) -> None:
        self.name, self.spec = name, spec

    def setup(self, worker: Any) -> None:
        self.address = worker.address
        self.lock = threading.Lock()
        self.instance: _Instance | None = None
        self.reader: ArchiveReader | None = None
        self.html_from: str | None = None  # "archive" or "shipped", decided on the first page
        self.baseline = set(pool.descendants(os.getpid()))  # processes that are not the analyzer's

    async def teardown(self, worker: Any) -> None:
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        with client_environment(self.spec.env):
            self._close()

    def _close(self) -> None:
        instance, self.instance = self.instance, None
        if instance is not None and instance.failure is None:
            try:
                instance.thread.call(instance.analyzer.teardown, pool.STOP_GRACE)
            except TimeoutError:
                self._kill_started()
            except Exception:
                log.exception("analyzer %s: teardown failed", self.spec.analyzer)
        if instance is not None:
            instance.thread.stop()
        if self.reader is not None:
            self.reader.close()
            self.reader = None

    def _kill_started(self) -> None:
        """Kill what the analyzer started in this worker (a browser, say): the worker itself lives on."""
        pool.kill_pids(set(pool.descendants(os.getpid())) - self.baseline)

    def _instance(self) -> _Instance:
        if self.instance is None:
            thread = _Thread(f"nitpicker-{self.spec.analyzer}")

            def build() -> _Instance:
                analyzer, config = pool.build_analyzer(
                    self.spec.plugin_names, self.spec.analyzer, self.spec.values
                )
                settings = config.settings_for(self.spec.plugin)
                instance = _Instance(analyzer, settings, thread)
                try:
                    analyzer.setup(settings)
                except Exception as exc:
                    instance.failure = (f"setup failed: {type(exc).__name__}: {exc}", traceback.format_exc())
                return instance

            try:
                self.instance = thread.call(build, pool.START_TIMEOUT)
            except Exception as exc:  # the plugin cannot be loaded here, or setup hangs
                failure = (f"setup failed: {type(exc).__name__}: {exc}", traceback.format_exc())
                self.instance = _Instance(None, {}, thread, failure)
        return self.instance

    def _html(self, task: Task, shipped: Blob | None) -> tuple[bool, str | None]:
        """(whether this worker has the page's HTML, the HTML or None when the archive lacks it); without it,
        the page must come back with its HTML shipped."""
        if shipped is not None:
            codec, data = shipped
            if codec == MISSING[0]:
                return True, None
            return True, (zlib.decompress(data) if codec == "zlib" else data).decode("utf-8")
        if self.html_from is None:
            self.html_from = "archive" if self._open_archive(task.html_sha256) else "shipped"
        if self.html_from == "shipped":
            return False, None
        assert self.reader is not None  # html_from is "archive" once _open_archive kept a reader
        html: str | None = self.reader.html_by_sha256(task.html_sha256)
        return True, html

    def _open_archive(self, sha: str) -> bool:
        """Whether this worker reads the client's archive at its path (same machine or a shared disk)."""
        if self.spec.env.get(SHIP_ENV) == "1":
            return False
        from nitpicker_core.archive import open_archive

        try:
            reader = open_archive(self.spec.stub)
        except Exception:
            return False
        if reader.html_by_sha256(sha) is None:  # another archive at the same path, on another machine
            reader.close()
            return False
        self.reader = reader
        return True

    def pages(self, tasks: list[Task], shipped: list[Blob] | None, timeout: float) -> Batch:
        """The batch's pages in order, until one goes over ``timeout``: the pages after it come back
        undone (the client sends them again once this worker is restarted)."""
        # one batch at a time per analyzer instance, whatever the worker's thread count; the client's
        # NITPICKER_* variables only while it runs (the worker serves other runs and clients afterwards)
        with self.lock, client_environment(self.spec.env):
            batch = Batch(self.address, "shipped")
            for n, task in enumerate(tasks):
                have, html = self._html(task, shipped[n] if shipped is not None else None)
                if not have:  # decided on the first page: nothing of this batch ran
                    return Batch(self.address, "shipped", need_html=True)
                instance = self._instance()
                started = time.perf_counter()
                outcome, timed_out = self._page(instance, task, html, timeout)
                batch.seconds += time.perf_counter() - started
                try:
                    # pickled here, once: a report that cannot be is this page's error (as in the local
                    # pool), and Dask sends the bytes as they are instead of pickling the report again
                    batch.outcomes.append(pickle.dumps(outcome))
                except Exception as exc:
                    why = f"report cannot be sent: {type(exc).__name__}: {exc}"
                    batch.outcomes.append(pickle.dumps(Outcome(task.url, None, why)))
                if timed_out:
                    batch.restart = True
                    break
            batch.html_from = self._from()
            return batch

    def _page(
        self, instance: _Instance, task: Task, html: str | None, timeout: float
    ) -> tuple[Outcome, bool]:
        """(the page's outcome, whether it went over time)."""
        if instance.failure is not None:
            message, trace = instance.failure
            return Outcome(task.url, None, message, traceback=trace), False
        try:
            outcome: Outcome = instance.thread.call(
                lambda: pool.call_each_page(
                    instance.analyzer,
                    instance.settings,
                    task.url,
                    html,
                    task.metadata,
                    task.html_kind,
                    self.reader.html_by_sha256 if self.reader is not None else None,
                ),
                timeout,
            )
        except TimeoutError:
            # the page goes on on its thread; a fresh instance takes the next page, the client restarts us
            self.instance = None
            self._kill_started()
            return Outcome(task.url, None, pool.timeout_message(timeout), timed_out=True), True
        return outcome, False

    def _from(self) -> str:
        """Where this worker reads HTML: ``archive`` (the path) or ``shipped`` (with each page)."""
        return self.html_from or "shipped"  # undecided: every page it got came with its HTML


_environment_lock = threading.Lock()
_environment_users = 0
_environment_saved: dict[str, str | None] = {}


@contextlib.contextmanager
def client_environment(env: dict[str, str]) -> Iterator[None]:
    """The client's ``NITPICKER_*`` variables set in this worker process while the block runs, then put back.

    The environment is the process's: blocks of several threads (or runs) overlap, and the worker's own values
    come back when the last of them ends.
    """
    global _environment_users
    with _environment_lock:
        for key in env:
            if key not in _environment_saved:
                _environment_saved[key] = os.environ.get(key)
        os.environ.update(env)
        _environment_users += 1
    try:
        yield
    finally:
        with _environment_lock:
            _environment_users -= 1
            if not _environment_users:
                for key, value in _environment_saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
                _environment_saved.clear()


def each_batch(
    plugin: str, tasks: list[tuple[Any, ...]], shipped: list[Blob] | None, timeout: float
) -> Batch:
    """The Dask task: a batch of pages through the worker's instance of the analyzer registered as ``plugin``."""
    holder = get_worker().plugins[plugin]
    assert isinstance(holder, AnalyzerPlugin)
    return holder.pages([Task(*task) for task in tasks], shipped, timeout)
