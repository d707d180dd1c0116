"""Where per-URL work runs: in this process's own pools (``local``) or on Dask distributed workers.

``--executor`` takes ``local`` (the default), ``dask-local[:N]`` (a ``distributed.LocalCluster`` of N
single-threaded worker processes on 127.0.0.1, started and stopped by the command) or ``dask://HOST:PORT``
(an existing scheduler). Dask is an optional dependency (``pip install "nitpicker[dask]"``): it is imported
only when a Dask executor is asked for, and its absence is a one-line usage error naming the extra.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from nitpicker_core.errors import UsageError

EXTRA_HINT = 'the dask executor needs Dask: pip install "nitpicker[dask]"'
DEFAULT_LOCAL_WORKERS = 2
WORKER_WAIT_SECONDS = 60.0  # a dask:// scheduler's first worker may still be starting
_DASK_URL = re.compile(r"^dask://(?P<host>[^:/\s]+|\[[0-9a-fA-F:]+\]):(?P<port>\d{1,5})/?$")
_DASK_LOCAL = re.compile(r"^dask-local(?::(?P<workers>\d+))?$")


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed ``--executor`` value."""

    kind: Literal["local", "dask", "dask-local"]
    address: str | None = None  # tcp://host:port of the scheduler (kind ``dask``)
    workers: int | None = None  # worker processes of the LocalCluster (kind ``dask-local``)

    @property
    def distributed(self) -> bool:
        return self.kind != "local"

    def __str__(self) -> str:
        if self.kind == "dask":
            return "dask://" + (self.address or "").removeprefix("tcp://")
        if self.kind == "dask-local":
            return f"dask-local:{self.workers}"
        return "local"


LOCAL = ExecutorSpec("local")


def parse_executor(value: str | None) -> ExecutorSpec:
    """``local``, ``dask-local[:N]`` or ``dask://HOST:PORT``; anything else is a usage error."""
    text = (value or "local").strip()
    if text == "local":
        return LOCAL
    match = _DASK_LOCAL.match(text)
    if match:
        workers = int(match["workers"]) if match["workers"] else DEFAULT_LOCAL_WORKERS
        if not 1 <= workers <= 256:
            raise UsageError(f"--executor {text}: the number of workers must be between 1 and 256")
        return ExecutorSpec("dask-local", workers=workers)
    match = _DASK_URL.match(text)
    if match:
        port = int(match["port"])
        if not 1 <= port <= 65535:
            raise UsageError(f"--executor {text}: the port must be between 1 and 65535")
        return ExecutorSpec("dask", address=f"tcp://{match['host']}:{port}")
    raise UsageError(f"--executor {text}: expected local, dask-local[:N] or dask://HOST:PORT")


def require_dask() -> None:
    """Raise the one-line usage error naming the extra when Dask distributed is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(EXTRA_HINT) from None


@contextlib.contextmanager
def dask_client(spec: ExecutorSpec) -> Iterator[Any]:
    """A connected ``distributed.Client`` for ``spec``; a ``dask-local`` cluster lives as long as the block.

    The LocalCluster binds 127.0.0.1 only, runs one thread per worker process (per-URL work holds a
    browser or a CPU-bound analyzer, never several at once) and has no dashboard.
    """
    if not spec.distributed:
        raise ValueError("dask_client needs a Dask executor")
    require_dask()
    with _quiet_dask():
        yield from _connected(spec)


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's own log lines (a lost scheduler's reconnect tracebacks…) only with --verbose: nitpicker says
    what happened in one line of its own."""
    if logging.getLogger().isEnabledFor(logging.DEBUG):
        yield
        return
    # Dask's config gives some of its loggers levels of their own (distributed.client: warning)
    names = ["distributed"] + [
        name
        for name, item in logging.root.manager.loggerDict.items()
        if name.startswith("distributed.") and isinstance(item, logging.Logger) and item.level
    ]
    levels = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def _connected(spec: ExecutorSpec) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if spec.kind == "dask-local":
        # Worker processes inherit the environment; keep their own Dask chatter out of the user's terminal
        os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "error")
        try:
            cluster = LocalCluster(
                n_workers=spec.workers or DEFAULT_LOCAL_WORKERS,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                # no dashboard; the scheduler's HTTP health routes on a free loopback port (its default is
                # :8787, which two clusters at once would fight over)
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
                preload=[_LOCAL_PRELOAD],  # dask_setup below, in each worker process that can import it
            )
        except Exception as exc:
            # e.g. a worker process that cannot import this command's main module, which multiprocessing
            # imports again in it before Dask runs there (its own traceback is already on the terminal)
            why = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise UsageError(f"--executor {spec}: the Dask worker processes did not start ({why})") from exc
        try:
            with Client(cluster) as client:
                # the workers may not import what this process does (another interpreter, another path)
                check_workers(client, spec)
                yield client
        finally:
            cluster.close()
        return
    try:
        client = Client(spec.address, timeout="30s")
    except OSError as exc:
        raise UsageError(f"--executor {spec}: cannot reach the Dask scheduler ({exc})") from None
    with client:
        try:  # a scheduler without workers would take every task and never run one
            client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            raise UsageError(f"--executor {spec}: the Dask scheduler has no workers") from None
        check_workers(client, spec)
        yield client


# The dask-local workers' preload, given as the text of a script (Dask runs such a preload as a file): a
# preload naming this module would fail the worker's start where nitpicker cannot be imported, and the
# cluster's start with it, in an ImportError naming no worker; this one starts the worker, and
# check_workers then names it.
_LOCAL_PRELOAD = """
def dask_setup(worker):
    try:
        from nitpicker_core.executors import dask_setup as nitpicker_setup
    except ImportError:
        return
    nitpicker_setup(worker)
"""

# Sent by value (compiled here, in a module no worker has): it must run where nitpicker cannot be imported.
_PROBE = """
def nitpicker_probe():
    try:
        import nitpicker_core
    except Exception as exc:
        return None, type(exc).__name__ + ": " + str(exc)
    return getattr(nitpicker_core, "__version__", "?"), ""
"""


def _probe() -> Callable[[], tuple[str | None, str]]:
    namespace: dict[str, Any] = {"__name__": "__nitpicker_probe__"}
    exec(compile(_PROBE, "<nitpicker worker probe>", "exec"), namespace)  # noqa: S102 - our own constant
    probe: Callable[[], tuple[str | None, str]] = namespace["nitpicker_probe"]
    return probe


def check_workers(client: Any, spec: ExecutorSpec) -> None:
    """Refuse, in one line naming them, the workers where nitpicker is not importable or of another version.

    Asked of every worker connected now, before anything is sent to them: a worker without nitpicker would
    otherwise fail each task with a ModuleNotFoundError that names no worker.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:  # as nitpicker_core.__version__ has it (importing that package here would load the crawler)
        ours = version("nitpicker")
    except PackageNotFoundError:
        ours = "0.0.0"
    answers = client.run(_probe(), on_error="return")
    missing, other = [], []
    for address, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            missing.append(f"{address} ({type(answer).__name__}: {answer})")
        elif answer[0] is None:
            missing.append(address)
        elif answer[0] != ours:
            other.append(f"{address} ({answer[0]})")
    problems = []
    if missing:
        problems.append(
            f"nitpicker is not installed on the Dask worker{'s' if len(missing) > 1 else ''} "
            + ", ".join(missing)
        )
    if other:
        problems.append(
            f"the Dask worker{'s' if len(other) > 1 else ''} {', '.join(other)} "
            f"{'run' if len(other) > 1 else 'runs'} another nitpicker version than this one ({ours})"
        )
    if problems:
        raise UsageError(f"--executor {spec}: " + "; ".join(problems))


def dask_setup(worker: Any) -> None:
    """Preload of the ``dask-local`` worker processes: a Ctrl-C is the command's to handle, and a worker that
    is closing says nothing.

    A terminal's Ctrl-C reaches the whole foreground process group, these workers too; ignoring it here
    lets the pages in flight finish in the stop's grace (as the local crawler's Chromium does in a
    session of its own), and spares the terminal their tracebacks. They still end with the command:
    a Dask worker process exits when its parent is gone.

    The workers write to the command's terminal. While they run, Dask's errors there are real ones; once a
    worker closes (the command is done with the cluster), what fails is the teardown itself: on a loaded
    machine the scheduler may be gone before a worker, whose heartbeats then fail with tracebacks.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet = _QuietWhileClosing(worker)
    for handler in {*logging.getLogger("distributed").handlers, *logging.getLogger().handlers}:
        handler.addFilter(quiet)


class _QuietWhileClosing(logging.Filter):
    """Drops Dask's log records once ``worker`` is closing (only then)."""

    CLOSING = frozenset({"closing", "closing_gracefully", "closed"})

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("distributed"):
            return True
        return getattr(getattr(self.worker, "status", None), "name", "") not in self.CLOSING


@contextlib.contextmanager
def executor_client(spec: ExecutorSpec, say: Callable[[str], None] | None = None) -> Iterator[Any]:
    """``dask_client(spec)`` for a Dask executor, None for ``local``; ``say`` tells what starts."""
    if not spec.distributed:
        yield None
        return
    require_dask()  # before saying that a cluster starts
    if say is not None:
        say(
            f"starting a Dask cluster of {spec.workers} worker processes on 127.0.0.1"
            if spec.kind == "dask-local"
            else f"connecting to the Dask scheduler {spec}"
        )
    with dask_client(spec) as client:
        yield client
