"""Long-lived analyzer workers with a time limit per page.

``multiprocessing.Pool`` cannot cancel one task, and ``ProcessPoolExecutor(max_tasks_per_child>1)`` hangs on
3.11 when a worker is replaced (recipes §9), so this module runs its own small manager: N processes from a
forkserver (or spawn) context, each with one duplex pipe. A worker rebuilds the plugin manager from plugin
names, opens the archive stub read-only once, runs ``setup`` once and then takes one page at a time: only
``(url, html sha256, metadata, html kind)`` goes down the pipe, the worker reads the HTML itself (by the
sha256 of whichever HTML the analyzer reads: the server's or the rendered one). A worker that does not
answer within the analyzer's timeout is killed with everything it started (a browser, say) and replaced.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, NamedTuple

from nitpicker_core.config import Config
from nitpicker_core.errors import UsageError
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import analyzer_registry, setting_registry
from nitpicker_core.types import Analyzer, PageInput, PageReport

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 60.0
DEFAULT_PAGES_PER_WORKER = 1000
START_TIMEOUT = 120.0  # plugin import + setup (a browser launch) of one worker
STOP_GRACE = 20.0  # teardown time before a worker is killed at shutdown


class Task(NamedTuple):
    """One page for each_page: the sha256 of the HTML to read, and which HTML that is (``source``/``rendered``)."""

    url: str
    html_sha256: str
    metadata: dict[str, Any]
    html_kind: str = "rendered"


class Outcome(NamedTuple):
    url: str
    report: PageReport | None
    error: str | None
    timed_out: bool = False
    traceback: str = ""  # of the exception behind ``error``, for the plugin's author (analyzer-errors)


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to rebuild the analyzer on its own: plain, picklable data."""

    plugin_names: tuple[str, ...]
    analyzer: str
    plugin: str
    values: dict[str, Any]
    stub: str
    env: dict[str, str] = field(default_factory=dict)


class PoolUnavailable(RuntimeError):
    """No worker could be started (or kept): the caller runs the remaining pages serially.

    ``task`` is a task ``run`` had already taken from the iterator but not handed out.
    """

    def __init__(self, message: str, task: Task | None = None) -> None:
        super().__init__(message)
        self.task = task


def timeout_message(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


def build_analyzer(
    plugin_names: Iterable[str], analyzer: str, values: dict[str, Any]
) -> tuple[Analyzer, Any]:
    """Rebuild the plugin manager from entry-point names and return (analyzer, config) in this process."""
    pm = make_plugin_manager(allow=set(plugin_names), deny=set())
    config = Config(setting_registry(pm), dict(values))
    pm.configure_plugins(config)
    return analyzer_registry(pm)[analyzer], config


def call_each_page(
    analyzer: Analyzer,
    settings: dict[str, Any],
    url: str,
    html: str | None,
    metadata: dict[str, Any],
    html_kind: str = "rendered",
    load: Callable[[str], str | None] | None = None,
) -> Outcome:
    if html is None:
        return Outcome(url, None, f"page HTML ({html_kind}) is missing from the archive")
    try:
        report = analyzer.each_page(PageInput(url, html, metadata, settings, html_kind, load))  # type: ignore[misc]
        # None means "nothing to say"; anything else goes back as it is, and the engine checks its type
        return Outcome(url, PageReport() if report is None else report, None)
    except Exception as exc:  # one page failing is this analyzer's error for that page, nothing more
        return Outcome(url, None, f"{type(exc).__name__}: {exc}".strip(), traceback=traceback.format_exc())


# --- the worker process ---------------------------------------------------------------------------------


def _worker_main(spec: WorkerSpec, conn: Connection) -> None:
    # Own process group: a Ctrl-C in the terminal reaches the main process only, which then stops us cleanly.
    with contextlib.suppress(OSError):
        os.setpgrp()
    os.environ.update(spec.env)
    from nitpicker_core.archive import open_archive  # after the environment, which the archive reads

    try:
        analyzer, config = build_analyzer(spec.plugin_names, spec.analyzer, spec.values)
        settings = config.settings_for(spec.plugin)
        reader = open_archive(spec.stub)
    except BaseException as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    try:
        analyzer.setup(settings)
    except BaseException as exc:
        reader.close()
        conn.send(("failed", f"setup failed: {type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("ready", os.getpid()))
        while True:
            try:
                task = conn.recv()
            except (EOFError, OSError):
                break  # the main process is gone
            if task is None:
                break
            url, sha, metadata, kind = task
            outcome = call_each_page(
                analyzer, settings, url, reader.html_by_sha256(sha), metadata, kind, reader.html_by_sha256
            )
            try:
                conn.send(outcome)
            except Exception as exc:  # an unpicklable report
                conn.send(Outcome(url, None, f"report cannot be sent: {type(exc).__name__}: {exc}"))
    finally:
        try:
            analyzer.teardown()
        finally:
            reader.close()


# --- process trees --------------------------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (children, grandchildren, …), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def kill_pids(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# --- the manager ----------------------------------------------------------------------------------------


@dataclass
class _Worker:
    process: Any
    conn: Connection
    state: str = "starting"  # starting → idle ⇄ busy
    task: Task | None = None
    deadline: float = 0.0
    served: int = 0
    replacement: bool = False


class WorkerPool:
    """``size`` workers for one analyzer; ``run(tasks)`` yields one Outcome per task, in completion order.

    At most ``size`` pages are in flight (one per worker); each worker serves ``pages_per_worker`` pages and
    is then replaced by a fresh one, so a leaking analyzer cannot grow without bound.
    """

    def __init__(
        self,
        spec: WorkerSpec,
        size: int,
        timeout: float = DEFAULT_TIMEOUT,
        pages_per_worker: int | None = DEFAULT_PAGES_PER_WORKER,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        methods = multiprocessing.get_all_start_methods()
        # spawn or forkserver, never fork (a live browser in the parent); literal names keep the types precise
        self.ctx = (
            multiprocessing.get_context("forkserver")
            if "forkserver" in methods
            else multiprocessing.get_context("spawn")
        )
        self.spec = spec
        self.size = size
        self.timeout = timeout
        self.pages_per_worker = pages_per_worker
        self.start_timeout = start_timeout
        self.workers: list[_Worker] = []
        self.pids: set[int] = set()  # every worker pid ever started (tests check none survives)
        self.timeouts = 0
        self.missing = 0  # retired workers not replaced yet

    # lifecycle

    def _spawn(self, replacement: bool) -> _Worker:
        parent, child = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=_worker_main, args=(self.spec, child), daemon=True, name=f"nitpicker-{self.spec.analyzer}"
        )
        process.start()
        child.close()
        assert process.pid is not None  # start() sets it
        self.pids.add(process.pid)
        worker = _Worker(
            process, parent, deadline=time.monotonic() + self.start_timeout, replacement=replacement
        )
        self.workers.append(worker)
        return worker

    def start(self) -> None:
        """Start every worker and wait until they are ready; PoolUnavailable when none is."""
        try:
            for _ in range(self.size):
                self._spawn(replacement=False)
        except Exception as exc:
            self.close()
            raise PoolUnavailable(f"cannot start worker processes: {type(exc).__name__}: {exc}") from exc
        failures = []
        while any(w.state == "starting" for w in self.workers):
            for failure in self._poll(time.monotonic()):
                failures.append(failure)
        if not self.workers:
            raise PoolUnavailable(failures[0] if failures else "no worker started")

    def _retire(self, worker: _Worker, kill: bool) -> None:
        if kill:
            tree = descendants(worker.process.pid)
            kill_pids([worker.process.pid, *tree])
        worker.process.join(5)
        worker.conn.close()
        self.workers.remove(worker)

    def _replace(self, worker: _Worker, kill: bool) -> None:
        """Retire ``worker``; ``run`` starts a replacement when there is a page for it."""
        self._retire(worker, kill)
        self.missing += 1

    def _top_up(self) -> None:
        while self.missing > 0:
            self.missing -= 1
            try:
                self._spawn(replacement=True)
            except Exception as exc:  # fork failed (out of memory, …): go on with fewer workers
                log.warning("analyzer %s: cannot replace a worker: %s", self.spec.analyzer, exc)

    def close(self) -> None:
        """Stop every worker: ask politely (teardown runs), then kill what is left with its process tree."""
        trees = {}
        for worker in self.workers:
            trees[worker.process.pid] = descendants(worker.process.pid)
            if worker.state == "busy" or worker.state == "starting":
                continue  # cannot take a message now; killed below
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
        deadline = time.monotonic() + STOP_GRACE
        for worker in list(self.workers):
            if worker.state == "idle":
                worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                kill_pids([worker.process.pid])
            worker.process.join(5)
            kill_pids(trees.get(worker.process.pid, ()))  # a browser that outlived its worker
            worker.conn.close()
        self.workers.clear()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # the loop

    def _poll(self, now: float) -> Iterator[Any]:
        """Wait for the next event of any worker; yields Outcomes of busy workers and start failures."""
        active = [w for w in self.workers if w.state in ("starting", "busy")]
        if not active:
            return
        wait_for = min(w.deadline for w in active) - now
        handles: list[Any] = [w.conn for w in active] + [w.process.sentinel for w in active]
        ready = set(wait(handles, timeout=max(0.0, wait_for)))
        now = time.monotonic()
        for worker in active:
            message: Any = None
            if worker.conn in ready:
                try:
                    message = worker.conn.recv()
                except (EOFError, OSError):
                    message = None
            died = message is None and (worker.conn in ready or worker.process.sentinel in ready)
            if worker.state == "starting":
                if isinstance(message, tuple) and message and message[0] == "ready":
                    worker.state = "idle"
                    continue
                if message is None and not died and now < worker.deadline:
                    continue
                reason = (
                    message[1]
                    if isinstance(message, tuple) and message[0] == "failed"
                    else "worker did not start"
                    if not died
                    else f"worker exited with code {self._code(worker)}"
                )
                log.warning("analyzer %s: a worker failed to start: %s", self.spec.analyzer, reason)
                self._retire(worker, kill=True)
                yield reason
                continue
            task = worker.task
            assert task is not None
            if isinstance(message, Outcome):
                worker.state, worker.task = "idle", None
                worker.served += 1
                yield message
                if self.pages_per_worker and worker.served >= self.pages_per_worker:
                    self._recycle(worker)
            elif died:
                yield Outcome(task.url, None, f"worker exited with code {self._code(worker)}")
                self._replace(worker, kill=True)
            elif now >= worker.deadline:
                self.timeouts += 1
                yield Outcome(task.url, None, timeout_message(self.timeout), timed_out=True)
                self._replace(worker, kill=True)

    def _recycle(self, worker: _Worker) -> None:
        with contextlib.suppress(OSError, ValueError):
            worker.conn.send(None)
        tree = descendants(worker.process.pid)
        worker.process.join(STOP_GRACE)
        kill_pids([worker.process.pid] if worker.process.is_alive() else [])
        kill_pids(tree)
        self._replace(worker, kill=False)

    @staticmethod
    def _code(worker: _Worker) -> Any:
        worker.process.join(1)
        return worker.process.exitcode

    def run(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        """Feed ``tasks`` one per idle worker; raises PoolUnavailable when every worker is gone.

        Tasks not yet handed out stay in the iterator, so the caller can finish them another way.
        """
        pending = iter(tasks)
        exhausted = False
        task: Task | None = None  # the next task, taken out of ``pending`` but not handed out yet
        while True:
            if task is None and not exhausted:
                task = next(pending, None)
                exhausted = task is None
            if (
                task is not None
                and self.missing
                and not any(w.state in ("idle", "starting") for w in self.workers)
            ):
                self._top_up()  # replacements only while there is work for them
            for worker in [w for w in self.workers if w.state == "idle"]:
                if task is None:
                    task = next(pending, None) if not exhausted else None
                    if task is None:
                        exhausted = True
                        break
                try:
                    worker.conn.send(tuple(task))
                except (OSError, ValueError):
                    yield Outcome(task.url, None, f"worker exited with code {self._code(worker)}")
                    self._replace(worker, kill=True)
                    continue
                worker.state, worker.task = "busy", task
                worker.deadline = time.monotonic() + self.timeout
                task = None
            if not self.workers:
                if task is None and exhausted:
                    return
                raise PoolUnavailable("every worker process failed", task)
            if task is None and exhausted and not any(w.state == "busy" for w in self.workers):
                return
            for event in self._poll(time.monotonic()):
                if isinstance(event, Outcome):
                    yield event


class _PageTimeout(BaseException):
    """Raised by SIGALRM inside a serial each_page call (BaseException: analyzers' except Exception miss it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt Python code after ``seconds`` (main thread on POSIX only; elsewhere no limit)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _PageTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_serial(
    analyzer: Analyzer,
    settings: dict[str, Any],
    tasks: Iterable[Task],
    read_html: Any,
    timeout: float = DEFAULT_TIMEOUT,
) -> Iterator[Outcome]:
    """The in-process fallback: for analyzers not loadable by name, or when no worker can start.

    Each call is bounded with SIGALRM where that is possible; C code that never returns to Python
    (and non-main threads) cannot be interrupted this way.
    """
    try:
        analyzer.setup(settings)
    except UsageError:
        raise  # bad settings: the user's error, reported once
    except Exception as exc:
        trace = traceback.format_exc()
        for task in tasks:
            yield Outcome(task.url, None, f"setup failed: {type(exc).__name__}: {exc}", traceback=trace)
        return
    try:
        for task in tasks:
            try:
                with time_limit(timeout):
                    outcome = call_each_page(
                        analyzer,
                        settings,
                        task.url,
                        read_html(task.html_sha256),
                        task.metadata,
                        task.html_kind,
                        read_html,
                    )
            except _PageTimeout:
                outcome = Outcome(task.url, None, timeout_message(timeout), timed_out=True)
            yield outcome
    finally:
        analyzer.teardown()


def pool_size(analyzer: Analyzer, pages: int) -> int:
    wanted = analyzer.concurrency or os.cpu_count() or 1
    return max(1, min(wanted, pages))
