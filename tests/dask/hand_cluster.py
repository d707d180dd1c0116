"""A Dask cluster started by hand, as an operator does: a scheduler and workers, each a process of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# A worker of BLOCKED runs where nitpicker is not installed: its imports of nitpicker's packages fail as they
# would on a machine without it (the venv has nitpicker installed editable, so it cannot simply be left out).
BLOCKED = """
import sys

class NoNitpicker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0].startswith(BLOCKED_PREFIX):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoNitpicker())
from distributed.cli.dask_worker import main
main()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class HandCluster:
    """A scheduler and its workers, each a process (group) of its own; ``client`` is connected to it."""

    address: str  # tcp://127.0.0.1:PORT
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]
    client: Any

    @property
    def executor(self) -> str:
        return "dask://" + self.address.removeprefix("tcp://")

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)


@contextlib.contextmanager
def hand_cluster(
    *,
    workers: int = 1,
    without_nitpicker: int = 0,
    blocked: str = "nitpicker",
    env: dict[str, str] | None = None,
) -> Iterator[HandCluster]:
    """``workers`` ordinary workers plus ``without_nitpicker`` on which the packages whose names start with
    ``blocked`` (nitpicker's, by default) are not importable; ``env`` is added to their environment."""
    from distributed import Client

    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "start_new_session": True,
        "env": dict(os.environ, **(env or {})),
    }
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-dashboard"],
        **quiet,  # type: ignore[call-overload]
    )
    flags = [address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"]
    started = [
        subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", *flags], **quiet)  # type: ignore[call-overload]
        for _ in range(workers)
    ]
    # no nanny: the worker runs in this very process, where nitpicker's imports fail
    started += [
        subprocess.Popen(
            [sys.executable, "-c", f"BLOCKED_PREFIX = {blocked!r}\n" + BLOCKED, *flags, "--no-nanny"], **quiet
        )  # type: ignore[call-overload]
        for _ in range(without_nitpicker)
    ]
    client = None
    try:
        client = Client(address, timeout="120s")
        client.wait_for_workers(workers + without_nitpicker, timeout=300)
        yield HandCluster(address, scheduler, started, client)
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close(timeout=10)
        for process in (*started, scheduler):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.wait(60)
