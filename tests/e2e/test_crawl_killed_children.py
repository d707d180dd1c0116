"""A crawler killed (SIGKILL, or a second Ctrl-C, which ends it at once) leaves no process of its own behind.

A `--render never` crawl has children: the forkserver, the archive writer and the page readers. The readers
waited for their next page on a queue the crawler fed, and that queue's pipe is held open by the readers
themselves, so they outlived a killed crawler for good, holding its stdout and stderr (a caller reading them
to the end hung). Waits are on observable state (rows in the live working database, /proc), never sleeps.
"""

from __future__ import annotations

import os
import signal

import pytest
from support import RunningCli, crawled_pages, wait_until

from nitpicker_core.analyze.pool import descendants
from nitpicker_core.archive.lock import pid_alive

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("how", ["sigkill", "second-stop"])
def test_a_killed_crawler_leaves_no_process_behind(site, tmp_path, how):
    archive = tmp_path / "killed.nitpicker"
    running = RunningCli(
        "crawl", "-o", str(archive), f"{site}/stopping/campaign/", "--render", "never", "--parallels", "2",
        cwd=tmp_path, env={"NITPICKER_PARSE_PROCESSES_AFTER": "0"},  # the readers start with the first page
    )  # fmt: skip
    wait_until(lambda: crawled_pages(archive) >= 3 or running.proc.poll() is not None, "3 pages stored")
    assert running.proc.poll() is None, running.stderr  # the campaign's pages come slowly: far from the end
    children = descendants(running.proc.pid)
    # the forkserver, the writer and the two readers (read through the forkserver)
    assert len(children) >= 4, children
    if how == "sigkill":
        os.kill(running.proc.pid, signal.SIGKILL)
    else:
        os.kill(running.proc.pid, signal.SIGINT)
        os.kill(running.proc.pid, signal.SIGINT)
    running.wait(timeout=120)
    wait_until(
        lambda: not any(pid_alive(pid) for pid in children), "the crawler's children to end", timeout=60
    )
