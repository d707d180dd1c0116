"""Analyzers' each_page on Dask distributed workers, driven from the client; outcomes streamed back.

The client keeps what the local pool's caller keeps (the done set, the content-hash cache, the writer); only
pages that must be computed are submitted, in batches of several pages a task (``Batches``), as plain data:
``(url, html sha256, metadata, html kind)`` plus, once a worker says it cannot read the archive's working
directory, each page's stored (compressed) HTML. The worker side is ``dask_worker`` (imported only here and on
workers: a local run never loads Dask). Dask retries batches whose worker died; a cluster that goes away ends
the run as interrupted (``ClusterLost``).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import pickle
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nitpicker_core.analyze.pool import Outcome, Task, WorkerSpec
from nitpicker_core.executors import ExecutorSpec, executor_client, parse_executor

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader

log = logging.getLogger(__name__)

IN_FLIGHT_PER_THREAD = 2  # batches submitted per worker thread: one running, one waiting on the worker
TASK_SECONDS = 0.25  # each_page time a batch aims at: Dask's own cost per task is small beside it
MAX_BATCH = 32  # pages a batch holds at most
KILLED = "worker exited on every attempt"
Blob = tuple[str, bytes]  # (codec, stored bytes) of one HTML body, as the archive keeps it


class ClusterLost(KeyboardInterrupt):
    """The Dask cluster went away mid-run: the run ends as interrupted, as on Ctrl-C, and is resumed the same
    way (pages already recorded are kept). ``reason`` says what happened."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Cluster:
    """A connected Dask client for one analyze run and what the run tells about it (``stats``)."""

    client: Any
    label: str
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stats.update(executor=self.label, html={}, worker_restarts=0, tasks=0)

    def run(
        self, spec: WorkerSpec, timeout: float, read_blob: Callable[[str], Blob | None], tasks: Iterable[Task]
    ) -> Iterator[Outcome]:
        """each_page of ``spec``'s analyzer over ``tasks`` on the cluster; one Outcome per task, as their
        batches finish."""
        from distributed import as_completed

        from nitpicker_core.analyze.dask_worker import MISSING, AnalyzerPlugin, each_batch

        name = f"nitpicker-analyze-{spec.analyzer}-{uuid.uuid4().hex[:12]}"
        try:
            self.client.register_plugin(AnalyzerPlugin(name, spec), name=name)
        except Exception as exc:
            if self.client.status in ("running", "newly-created"):
                raise
            raise self._gone(exc) from exc
        ship = False
        running: dict[Any, list[Task]] = {}
        finished = as_completed()

        def submit(batch: list[Task]) -> None:
            blobs = [read_blob(task.html_sha256) or MISSING for task in batch] if ship else None
            key = f"{name}-{uuid.uuid4().hex}"  # opaque: a URL never shows in the cluster's task names
            tasks = [tuple(task) for task in batch]
            future = self.client.submit(each_batch, name, tasks, blobs, timeout, key=key, pure=False)
            running[future] = batch
            finished.add(future)
            self.stats["tasks"] += 1

        try:
            batches = Batches(tasks, sum(self.client.nthreads().values()) or 1)
            for batch in batches.fill(len(running)):
                submit(batch)
            for future in finished:
                batch = running.pop(future)
                result = self._result(future, batch)
                if isinstance(result, Outcome) and len(batch) > 1 and (result.error or "").startswith(KILLED):
                    batches.alone.extend(batch)  # one page a task: only the page that kills workers fails
                elif isinstance(result, Outcome):  # the batch failed as a whole
                    for task in batch:
                        yield result._replace(url=task.url)
                elif result.need_html:
                    ship = True  # from now on every page carries its HTML: any worker may be this one
                    self.stats["html"][result.worker] = "shipped"
                    submit(batch)
                else:
                    self.stats["html"][result.worker] = result.html_from
                    done = len(result.outcomes)
                    batches.measured(done, result.seconds)
                    if result.restart:
                        self._restart(result.worker)
                    batches.again(batch[done:])  # the pages after one that went over time
                    for outcome in result.outcomes:
                        yield pickle.loads(outcome)  # noqa: S301 - the cluster's own answer, as Dask's are
                for batch in batches.fill(len(running)):
                    submit(batch)
        finally:
            if self.client.status == "running":  # else there is nobody left to tell
                with contextlib.suppress(Exception):
                    self.client.cancel(list(running))  # an interrupted run: stop what is still queued
                with contextlib.suppress(Exception):
                    self.client.unregister_worker_plugin(name)

    def _result(self, future: Any, batch: list[Task]) -> Any:
        """The batch's result, or one Outcome (its URL the first page's) for a batch that failed as a whole."""
        try:
            return future.result()
        except CancelledError as exc:  # nobody here cancels: the scheduler is gone
            raise self._gone(exc) from exc
        except Exception as exc:
            from distributed import KilledWorker

            url = batch[0].url
            if isinstance(exc, KilledWorker):
                return Outcome(url, None, f"{KILLED} ({exc})")
            if self.client.status not in ("running", "newly-created"):
                raise self._gone(exc) from exc
            trace = "".join(traceback.format_exception(exc))
            return Outcome(url, None, f"{type(exc).__name__}: {exc}", traceback=trace)

    def _gone(self, exc: BaseException) -> ClusterLost:
        """The error that ends the run; the client stops trying to reconnect (it would wait 30 s for nothing)."""
        # in the words a crawl uses (remote.DaskRenderer): Dask's message first, then its reason
        why = getattr(exc, "msg", None) or getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            self.client.close(timeout=5)
        return ClusterLost(f"the Dask cluster is gone ({' '.join(str(why).split())})")

    def _restart(self, worker: str) -> None:
        """Replace the worker whose page went over time (its thread cannot be stopped); best effort."""
        try:
            self.client.restart_workers([worker], raise_for_error=False)
            self.stats["worker_restarts"] += 1
        except Exception as exc:
            log.warning("cannot restart Dask worker %s after a page timed out: %s", worker, exc)


class Batches:
    """The pages of one analyzer run cut into batches, one Dask task each.

    A task costs Dask's scheduler, the client and the worker some milliseconds of CPU of their own (5-8 ms
    together on a loaded 2-core machine), and the worker waits 7-9 ms between two tasks: for pages analyzed
    in a few milliseconds that was most of the time (docs/scale.md). A batch holds about ``TASK_SECONDS`` of each_page (as
    measured on the pages done so far; one page until a batch has come back) and never more than a fair
    share of the pages left (``IN_FLIGHT_PER_THREAD`` batches per worker thread), so a slow analyzer keeps
    one page a task and the last pages are spread over every worker.
    """

    def __init__(self, tasks: Iterable[Task], threads: int) -> None:
        self.tasks = iter(tasks)
        self.slots = IN_FLIGHT_PER_THREAD * threads
        self.ahead: collections.deque[Task] = collections.deque()
        # pages of a batch that killed workers, sent one a task, first: Dask blames every task a dying
        # worker holds, so they go out no faster than the other batches (a burst would share the blame)
        self.alone: collections.deque[Task] = collections.deque()
        self.pages, self.seconds = 0, 0.0

    def measured(self, pages: int, seconds: float) -> None:
        self.pages, self.seconds = self.pages + pages, self.seconds + seconds

    def again(self, tasks: list[Task]) -> None:
        """Pages that came back undone: they go out next."""
        self.ahead.extendleft(reversed(tasks))

    def size(self) -> int:
        """Pages for the next batch."""
        # reading ahead of the engine is harmless: it only lists the pages (cached ones are settled there)
        while len(self.ahead) < self.slots * MAX_BATCH:
            task = next(self.tasks, None)
            if task is None:
                break
            self.ahead.append(task)
        if not self.pages:
            return 1
        per_page = self.seconds / self.pages
        wanted = MAX_BATCH if per_page <= 0 else max(1, min(MAX_BATCH, int(TASK_SECONDS / per_page)))
        return max(1, min(wanted, -(-len(self.ahead) // self.slots)))

    def fill(self, running: int) -> Iterator[list[Task]]:
        """Batches for the free slots, ``running`` tasks being in flight."""
        for _ in range(self.slots - running):
            if self.alone:
                yield [self.alone.popleft()]
                continue
            size = self.size()
            if not self.ahead:
                return
            yield [self.ahead.popleft() for _ in range(min(size, len(self.ahead)))]


def stored_blob(reader: ArchiveReader, sha256: str) -> Blob | None:
    """The HTML stored under ``sha256`` as the archive keeps it (compressed), to ship to a worker."""
    rows = reader.execute("SELECT codec, data FROM blob WHERE sha256 = ?", (sha256,))
    return (str(rows[0][0]), bytes(rows[0][1])) if rows else None


@contextlib.contextmanager
def connect(executor: Any) -> Iterator[Cluster | None]:
    """The cluster of ``executor`` for one run, or None for the local pools.

    ``executor``: None, ``"local"`` or ``LOCAL``: local; an ``ExecutorSpec`` or its text: a Dask client
    for the run (a ``dask-local`` cluster is started and stopped with it); a connected
    ``distributed.Client``: that cluster, left running.
    """
    if executor is None or isinstance(executor, (str, ExecutorSpec)):
        spec = executor if isinstance(executor, ExecutorSpec) else parse_executor(executor)
        with executor_client(spec) as client:
            yield None if client is None else Cluster(client, str(spec))
        return
    yield Cluster(executor, label(executor))


def label(client: Any) -> str:
    """How the stats name a client's cluster: ``dask-local:N`` for one started here, else its scheduler."""
    cluster = getattr(client, "cluster", None)
    if cluster is not None and type(cluster).__name__ == "LocalCluster":
        return f"dask-local:{len(cluster.workers)}"
    return "dask://" + str(client.scheduler.address).removeprefix("tcp://")
