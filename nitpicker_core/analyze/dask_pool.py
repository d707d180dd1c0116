"""Analyzers' each_page on Dask distributed workers, driven from the client; outcomes streamed back.

The client keeps what the local pool's caller keeps (the done set, the content-hash cache, the writer); only
pages that must be computed are submitted, as plain data: ``(url, html sha256, metadata, html kind)`` plus,
once a worker says it cannot read the archive's working directory, each page's stored (compressed) HTML.
The worker side is ``dask_worker`` (imported only here and on workers: a local run never loads Dask). Dask
retries pages whose worker died; a cluster that goes away ends the run as interrupted (``ClusterLost``).
"""

from __future__ import annotations

import contextlib
import logging
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

IN_FLIGHT_PER_THREAD = 2  # pages submitted ahead per worker thread: enough to keep workers busy, no more
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
        self.stats.update(executor=self.label, html={}, worker_restarts=0)

    def run(
        self, spec: WorkerSpec, timeout: float, read_blob: Callable[[str], Blob | None], tasks: Iterable[Task]
    ) -> Iterator[Outcome]:
        """each_page of ``spec``'s analyzer over ``tasks`` on the cluster; one Outcome per task, as they finish."""
        from distributed import as_completed

        from nitpicker_core.analyze.dask_worker import MISSING, NEED_HTML, AnalyzerPlugin, each_page

        name = f"nitpicker-analyze-{spec.analyzer}-{uuid.uuid4().hex[:12]}"
        try:
            self.client.register_plugin(AnalyzerPlugin(name, spec), name=name)
        except Exception as exc:
            if self.client.status in ("running", "newly-created"):
                raise
            raise self._gone(exc) from exc
        ship = False
        running: dict[Any, Task] = {}
        finished = as_completed()

        def submit(task: Task) -> None:
            blob = (read_blob(task.html_sha256) or MISSING) if ship else None
            key = f"{name}-{uuid.uuid4().hex}"  # opaque: a URL never shows in the cluster's task names
            future = self.client.submit(each_page, name, tuple(task), blob, timeout, key=key, pure=False)
            running[future] = task
            finished.add(future)

        pending = iter(tasks)
        try:
            threads = sum(self.client.nthreads().values()) or 1
            for task in _take(pending, IN_FLIGHT_PER_THREAD * threads):
                submit(task)
            for future in finished:
                task = running.pop(future)
                result = self._result(future, task)
                if result[0] == NEED_HTML:
                    ship = True  # from now on every page carries its HTML: any worker may be this one
                    self.stats["html"][result[1]] = "shipped"
                    submit(task)
                    continue
                outcome, worker, html_from, restart = result
                self.stats["html"][worker] = html_from
                if restart:
                    self._restart(worker)
                yield outcome
                for task in _take(pending, 1):
                    submit(task)
        finally:
            if self.client.status == "running":  # else there is nobody left to tell
                with contextlib.suppress(Exception):
                    self.client.cancel(list(running))  # an interrupted run: stop what is still queued
                with contextlib.suppress(Exception):
                    self.client.unregister_worker_plugin(name)

    def _result(self, future: Any, task: Task) -> Any:
        try:
            return future.result()
        except CancelledError as exc:  # nobody here cancels: the scheduler is gone
            raise self._gone(exc) from exc
        except Exception as exc:
            from distributed import KilledWorker

            if isinstance(exc, KilledWorker):
                return Outcome(task.url, None, f"worker exited on every attempt ({exc})"), "", "", False
            if self.client.status not in ("running", "newly-created"):
                raise self._gone(exc) from exc
            trace = "".join(traceback.format_exception(exc))
            return Outcome(task.url, None, f"{type(exc).__name__}: {exc}", traceback=trace), "", "", False

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


def _take(items: Iterator[Task], count: int) -> list[Task]:
    taken = []
    for task in items:
        taken.append(task)
        if len(taken) >= count:
            break
    return taken


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
