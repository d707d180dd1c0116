"""The archive sink in a child process of its own, so storing pages runs on another core than the crawl.

The crawler's main process is the crawl's bottleneck (one GIL: the event loop, the fetches' Python, the
results path); storing a page (its rows, its links, SQLite) took a third of it. Here a child process started
from the ``forkserver`` (never ``fork``: Playwright's threads) loads the crawl's plugins by entry-point name
with the command's settings, as the page readers do (``reading.py``), and opens the archive sink there with
``crawl_open_archive``. The crawler sends it, through a pipe, each event pickled once (protocol 5) and the
sink calls by method name, all in one order; the child answers in batches. The events' hooks are fired in
the crawler's process, on the thread that receives the answers, in order, once the child has stored them:
observers (the progress line's error tally, third-party plugins) see every event as before.

Used for ``--render never`` and ``auto`` (``wanted``), when every plugin the child would need is loadable by
name (a plugin registered in this process only, with a hook other than the crawl's own observers and
callbacks, keeps the writer on a thread); ``NITPICKER_WRITER_PROCESS=0`` keeps it on the thread, ``=1`` uses
the process for ``--render always`` too. A child that cannot start leaves the crawl on the thread. A
child that dies during the crawl ends it like a write failure: one line, and the working directory left as
a killed crawl leaves it (SQLite's WAL keeps what was stored; ``--resume`` goes on from there).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from nitpicker_core.archive.files import TEST_KILL_ALSO_ENV, TEST_KILL_ENV
from nitpicker_core.archive.lock import hold_for
from nitpicker_core.crawler.reading import for_workers, worker_plugin_manager
from nitpicker_core.errors import NitpickerError
from nitpicker_core.records import CrawlContext

log = logging.getLogger(__name__)

#: the environment variable that keeps the archive writer on a thread of the crawler (``0``)
ENV = "NITPICKER_WRITER_PROCESS"
#: the sink's optional methods the crawler looks for (``nitpicker_core.sinks``)
OPTIONAL = ("base_validators", "put_unchanged", "put_sitemaps", "render_decisions", "put_robots_files")
#: answers the child sends at once at most (it answers sooner when nothing more waits in the pipe)
ANSWER_BATCH = 64
#: messages sent and not answered yet at most: the crawl waits for the child past them (as for a full writer
#: thread's queue), so a child slower than the crawl does not take its memory
MAX_PENDING = 2000
#: messages the crawler writes to the pipe at once at most (those waiting when it writes)
SEND_BATCH = 256
#: kinds of message: an event; a call, whose failure stops the writes (and what follows is not done); an
#: awaited call, answered; a call made directly on the sink by the crawler, always done and answered; the end
EVENT, CALL, ASK, DIRECT, QUIT = "e", "c", "a", "d", "q"
#: what the crawl's children (this writer, the page readers) import besides the plugins: the forkserver preloads
#: them (``nitpicker_cli.forkserver`` names the same without importing this, to start the server sooner)
CHILD_MODULES = ("nitpicker_core.crawler.reading", "nitpicker_core.crawler.writer_process")
_PROTOCOL = 5


class WriterDied(NitpickerError):
    """The archive writer's process ended before the crawl did (killed, out of memory)."""


def wanted(render: str) -> bool:
    """Whether the archive writer runs in a child process for a crawl with this ``--render``.

    ``NITPICKER_WRITER_PROCESS``: ``0`` never, ``1`` always; unset, for ``never`` and ``auto``, where the
    crawler's process (reading pages' results, following links, storing) bounds the crawl. Not for ``always``:
    Chromium bounds it there, the crawler's process idles three quarters of the time, and the child's start
    (the plugins imported again, half a second) would only come on top: a 60-page site took 0.6-0.7 s longer.
    """
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    return bool(value) or render != "always"


def child_can_host(pm: Any) -> bool:
    """Whether a child process can load every plugin the archive sink's side may call.

    A plugin that is not loadable by name (registered in this process) is fine when it only observes or steers
    the crawl (``crawl_*`` hooks, which stay in this process), not when it opens the archive or registers
    anything (checks, settings, queries) the archive sink's indexing would use.
    """
    infos = getattr(pm, "infos", None)
    if infos is None or not callable(getattr(pm, "enabled_names", None)):
        return False
    for name, plugin in pm.list_name_plugin():
        info = infos.get(name)
        if info is not None and info.distribution and info.status == "enabled":
            continue
        hooks = {caller.name for caller in pm.get_hookcallers(plugin) or []}
        if any(not hook.startswith("crawl_") or hook == "crawl_open_archive" for hook in hooks):
            return False
    return True


def _portable(exc: BaseException) -> BaseException:
    """``exc`` when it survives pickling, else a RuntimeError with its type and message."""
    try:
        back = pickle.loads(pickle.dumps(exc, protocol=_PROTOCOL))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:  # noqa: BLE001, S110 - an exception with arguments pickle cannot rebuild
        pass
    return RuntimeError(f"{type(exc).__name__}: {exc}")


def _plain(value: Any) -> Any:
    """A sink method's answer as something pickle takes (a generator of URLs becomes a list)."""
    if isinstance(value, Iterator):
        return list(value)
    return value


def _child(
    conn: Any, names: tuple[str, ...], values: dict[str, Any], env: dict[str, str], crawl: Any, crawler: int
) -> None:
    from nitpicker_core.crawler.events import store_event
    from nitpicker_core.indexing import Indexer
    from nitpicker_core.sinks import check_sink

    # the terminal's Ctrl-C and hangup reach the whole process group: the crawler decides when this one stops
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    os.environ.update(env)
    # a test's kill at a point of the writes kills the crawl too, as when it wrote on a thread
    if os.environ.get(TEST_KILL_ENV):
        os.environ[TEST_KILL_ALSO_ENV] = str(crawler)
    hold_for(crawler)  # the archive's lock names the crawler: killed, it lets the archive go at once
    try:
        pm = worker_plugin_manager(names, values)
    except BaseException as exc:  # noqa: BLE001 - told to the crawler, which keeps the writer on a thread
        conn.send_bytes(pickle.dumps(("setup", _portable(exc)), protocol=_PROTOCOL))
        return
    opened = None
    try:
        opened = pm.hook.crawl_open_archive(crawl=crawl, indexer=Indexer(pm))
        sink = check_sink(opened)
        answer: Any = (
            "open",
            (sink.commit, [name for name in OPTIONAL if callable(getattr(sink, name, None))]),
        )
    except BaseException as exc:  # noqa: BLE001 - the crawl's error: re-raised by the crawler
        abandon = getattr(opened, "abandon", None)
        if callable(abandon):
            with contextlib.suppress(Exception):
                abandon()
        conn.send_bytes(pickle.dumps(("failed", _portable(exc)), protocol=_PROTOCOL))
        return
    conn.send_bytes(pickle.dumps(answer, protocol=_PROTOCOL))
    inbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    threading.Thread(target=_take, args=(conn, inbox), name="nitpicker-writer-take", daemon=True).start()
    failed: BaseException | None = None
    answers: list[tuple[int, bool, Any]] = []
    last, done, seconds, pages = 0, 0, 0.0, 0
    while True:
        seq, kind, name, payload = pickle.loads(inbox.get())
        last, done = seq, done + 1
        if kind == QUIT:
            conn.send_bytes(pickle.dumps((last, answers, seconds, pages), protocol=_PROTOCOL))
            return
        if failed is not None and kind != DIRECT:
            # the first failure stops the writes (the crawler knows); what it awaits is refused
            if kind == ASK:
                answers.append((seq, False, _portable(failed)))
        else:
            try:
                if kind == EVENT:
                    started = time.perf_counter()
                    store_event(sink, name, payload)
                    seconds += time.perf_counter() - started
                    pages += int(name == "crawl_page_scraped")
                else:
                    args, kwargs = payload
                    value = _plain(getattr(sink, name)(*args, **kwargs))
                    if kind in (ASK, DIRECT):
                        answers.append((seq, True, value))
            except BaseException as exc:  # noqa: BLE001 - the crawler re-raises it
                if kind != DIRECT:
                    failed = exc
                answers.append((seq, False, _portable(exc)))
        # answered in batches: each answer wakes a thread of the crawler, whose GIL is the crawl's bottleneck
        if done >= ANSWER_BATCH or kind in (ASK, DIRECT) or inbox.empty():
            conn.send_bytes(pickle.dumps((last, answers, seconds, pages), protocol=_PROTOCOL))
            answers, done, seconds, pages = [], 0, 0.0, 0


def _take(conn: Any, inbox: queue.SimpleQueue[bytes]) -> None:
    """The child's reading thread: messages taken as they come (the crawler's sends never wait on a write)."""
    while True:
        try:
            batch = pickle.loads(conn.recv_bytes())
            for data in batch:
                inbox.put(data)
        except (EOFError, OSError):
            # the crawler is gone (killed): this process ends at once, as the writer thread ends with the
            # crawler's process; what was stored stays (SQLite's WAL), and the archive's lock is let go
            os._exit(0)


def _preload(context: Any, pm: Any) -> None:
    """The forkserver, when this starts it, imports the crawl's plugins once for every child forked from it.

    This child and the page readers (``reading.py``) would import them each (half a second of CPU apiece, on
    a machine the crawl keeps busy); forked from a server that has them, each loads its plugin manager in
    milliseconds. No effect once the forkserver runs.
    """
    modules = set(CHILD_MODULES)
    for name in pm.enabled_names():
        info = pm.infos.get(name)
        if info is not None and info.module:
            modules.add(info.module.split(":")[0])
    context.set_forkserver_preload(sorted(modules))


class _Pending:
    """A message the child has not answered yet, and what to do with its answer (on the receiving thread)."""

    __slots__ = ("done", "kind", "seq")

    def __init__(self, seq: int, kind: str, done: Callable[[bool, Any], None] | None) -> None:
        self.seq, self.kind, self.done = seq, kind, done


class WriterProcess:
    """The crawler's side of the writer child: sends in order, receives the answers on a thread of its own."""

    def __init__(self, pm: Any, crawl: CrawlContext) -> None:
        self.pm, self.crawl = pm, crawl
        self.error: BaseException | None = None  # the first failure of a write (or the child's death)
        self.dead: WriterDied | None = None
        self.on_time: Callable[[float, int], None] | None = None  # the child's write seconds, pages written
        self._seq = 0
        self._pending: collections.deque[_Pending] = collections.deque()
        self._lock = threading.Condition()
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._process: Any = None
        self._conn: Any = None
        self._stopped = False
        self._quitting = False
        self._order = threading.Lock()  # held while a message takes its place: sent in the order numbered

    # -- starting ----------------------------------------------------------------------------------
    def open(self) -> tuple[int, list[str]] | None:
        """Start the child and open the archive sink there: (commit, the sink's optional methods).

        None when the child could not start or load the plugins (the crawler keeps the writer on a thread);
        the sink's own refusal (``crawl_open_archive`` raised) is raised here.
        """
        config = getattr(self.pm, "config", None)
        values = dict(config.values) if config is not None else {}
        env = {k: v for k, v in os.environ.items() if k.startswith("NITPICKER_")}
        try:
            context = multiprocessing.get_context("forkserver")
            _preload(context, self.pm)
            mine, theirs = context.Pipe()
            process = context.Process(
                target=_child,
                args=(
                    theirs,
                    tuple(self.pm.enabled_names()),
                    values,
                    env,
                    for_workers(self.crawl),
                    os.getpid(),
                ),
                name="nitpicker-archive-writer",
                daemon=True,
            )
            process.start()
            theirs.close()
            answer = pickle.loads(mine.recv_bytes())
        except Exception as exc:  # noqa: BLE001 - no process to be had: the writer thread stores the crawl
            why = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(Exception):
                process.join(5)
                why = why if process.exitcode is None else f"it ended with exit code {process.exitcode}"
                process.kill()
            log.warning("the archive writer process did not start (%s); writing on a thread", why)
            return None
        what, value = answer
        if what != "open":
            process.join()
            if what == "setup":
                log.warning("the archive writer process did not start (%s); writing on a thread", value)
                return None
            raise value
        self._process, self._conn = process, mine
        # a child still running when this process exits (an error path that skipped the sink's end) is killed:
        # it ignores SIGTERM, which multiprocessing's exit would send it and then wait for
        atexit.register(self.kill_now)
        threading.Thread(target=self._send, name="nitpicker-writer-send", daemon=True).start()
        threading.Thread(target=self._receive, name="nitpicker-writer-receive", daemon=True).start()
        commit, optional = value
        return commit, optional

    # -- sending -----------------------------------------------------------------------------------
    def post(
        self, kind: str, name: str, payload: Any, done: Callable[[bool, Any], None] | None = None
    ) -> None:
        """Send one message after the ones before; ``done(ok, value)`` runs on the receiving thread."""
        with self._order:
            fail = self.dead
            if fail is None:
                self._seq += 1
                # pickled once, here: a later change of the caller's objects changes nothing sent
                data = pickle.dumps((self._seq, kind, name, payload), protocol=_PROTOCOL)
                with self._lock:
                    while len(self._pending) >= MAX_PENDING and self.dead is None:
                        self._lock.wait()
                    fail = self.dead  # it died meanwhile: nobody would answer
                    if fail is None:
                        self._pending.append(_Pending(self._seq, kind, done))
                if fail is None:
                    self._outbox.put(data)
        if fail is not None and done is not None:
            done(False, fail)

    def request(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the sink's ``name(*args)`` in the child after everything sent before; its answer or error."""
        answered = threading.Event()
        box: list[Any] = []

        def done(ok: bool, value: Any) -> None:
            box.extend((ok, value))
            answered.set()

        self.post(DIRECT, name, (args, kwargs), done)
        answered.wait()
        ok, value = box
        if not ok:
            raise value
        return value

    def _send(self) -> None:
        broken = False
        while True:
            # the messages waiting go together: one write, and one wake-up of the child's reading thread, for
            # many (a crawl sends a message for each link target it does not fetch and each page's stylesheet)
            batch = [self._outbox.get()]
            while batch[-1] is not None and len(batch) < SEND_BATCH:
                try:
                    batch.append(self._outbox.get_nowait())
                except queue.Empty:
                    break
            end = batch[-1] is None
            if end:
                batch.pop()
            if batch and not broken:  # once broken, taken and dropped: a caller waiting for room goes on
                try:
                    self._conn.send_bytes(pickle.dumps(batch, protocol=_PROTOCOL))
                except (OSError, ValueError):  # the child is gone: the receiving thread says so
                    broken = True
            if end:
                return

    # -- receiving ---------------------------------------------------------------------------------
    def _receive(self) -> None:
        while True:
            try:
                last, answers, seconds, pages = pickle.loads(self._conn.recv_bytes())
            except (EOFError, OSError):
                self._lost()
                return
            if self.on_time is not None and (seconds or pages):  # the child's time: not this process's CPU
                self.on_time(seconds, pages)
            answered = dict((seq, (ok, value)) for seq, ok, value in answers)
            while True:
                with self._lock:
                    if not self._pending or self._pending[0].seq > last:
                        self._lock.notify_all()
                        break
                    item = self._pending.popleft()
                ok, value = answered.get(item.seq, (True, None))
                if not ok and item.kind != DIRECT and self.error is None:
                    self.error = value
                if item.done is not None:
                    try:
                        item.done(ok, value)
                    except BaseException as exc:  # noqa: BLE001 - an observer's hook failed: the crawl's error
                        log.debug("a hook after an archive write failed", exc_info=True)
                        if self.error is None:
                            self.error = exc
            if self._quitting and not self._pending:
                return

    def _lost(self) -> None:
        process = self._process
        if process is not None:
            process.join(5)
        code = process.exitcode if process is not None else None
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        with self._lock:
            if self._quitting and not self._pending:
                return
            self.dead = WriterDied(
                f"the archive writer process ended unexpectedly ({how}); what it stored is kept in "
                f"{self.crawl.output.name}'s working directory, and `nitpicker crawl --resume` goes on from it"
            )
            if self.error is None:
                self.error = self.dead
            pending, self._pending = list(self._pending), collections.deque()
            self._lock.notify_all()
        for item in pending:
            if item.done is not None:
                with contextlib.suppress(BaseException):
                    item.done(False, self.dead)
        self._outbox.put(None)

    def drain(self) -> None:
        """Wait until the child has answered everything sent (or is gone)."""
        with self._lock:
            while self._pending and self.dead is None:
                self._lock.wait()

    # -- the end -----------------------------------------------------------------------------------
    def stop(self) -> None:
        """The child ends after what was sent; this process waits for it."""
        if self._process is None or self._stopped:
            return
        self._quitting = True
        if self.dead is None:
            self.post(QUIT, "", None)
            self.drain()
        self._stopped = True
        self._outbox.put(None)
        self._process.join(30)
        if self._process.is_alive():
            self._process.kill()
        atexit.unregister(self.kill_now)
        with contextlib.suppress(OSError):
            self._conn.close()

    def kill_now(self) -> None:
        """The crawler ends now (a second Ctrl-C): the child too, as the writer thread would with the process."""
        with contextlib.suppress(Exception):  # not started, or already gone and reaped
            if self._process is not None and self._process.is_alive():
                self._process.kill()


class RemoteSink:
    """The archive sink as the crawler holds it when the sink lives in the writer child: calls go there."""

    def __init__(self, writer: WriterProcess, commit: int, optional: list[str]) -> None:
        self.writer, self._commit = writer, commit
        for name in optional:
            setattr(self, name, self._caller(name))

    def _caller(self, name: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            return self.writer.request(name, *args)

        call.__name__ = name
        return call

    @property
    def commit(self) -> int:
        return self._commit

    def done_urls(self) -> Any:
        return self.writer.request("done_urls")

    def failed_urls(self) -> Any:
        return self.writer.request("failed_urls")

    def pending_urls(self) -> Any:
        return self.writer.request("pending_urls")

    def link_graph(self) -> Any:
        return self.writer.request("link_graph")

    def put_page(self, result: Any) -> None:
        self.writer.request("put_page", result)

    def put_skipped(self, url: str, reason: str, *, is_external: bool) -> None:
        self.writer.request("put_skipped", url, reason, is_external=is_external)

    def put_resource(self, resource: Any, referrer_url: str) -> None:
        self.writer.request("put_resource", resource, referrer_url)

    def put_crawl_error(self, error: Any) -> None:
        self.writer.request("put_crawl_error", error)

    def put_inventory_run(self, digest: str, counts: Any) -> None:
        self.writer.request("put_inventory_run", digest, counts)

    def commit_stats(self) -> Any:
        return self.writer.request("commit_stats")

    def finish(self, status: str, stats: Any) -> None:
        """Close the commit in the child; a child already gone leaves the working directory as it was."""
        if self.writer.dead is not None:
            self.writer.stop()
            return
        try:
            self.writer.request("finish", status, stats)
        finally:
            self.writer.stop()

    def abandon(self) -> None:
        try:
            if self.writer.dead is None:
                with contextlib.suppress(Exception):
                    self.writer.request("abandon")
        finally:
            self.writer.stop()
