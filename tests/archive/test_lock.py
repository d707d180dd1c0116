"""The working-directory lock across processes, and readers of a live stub."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from archive_testdata import snapshot
from support import wait_until

from nitpicker_core.archive import ArchiveWriter, live_pid, open_archive, stub_path
from nitpicker_core.errors import ArchiveLocked

ROOT = Path(__file__).resolve().parents[2]

RACER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from nitpicker_core.archive import ArchiveWriter
    from nitpicker_core.errors import ArchiveLocked
    target, go, hold = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    (go.parent / f"ready.{os.getpid()}").touch()
    while not go.exists():
        time.sleep(0.001)
    try:
        w = ArchiveWriter.open(target)
    except ArchiveLocked as exc:
        print("locked", exc.pid, exc, flush=True)
        sys.exit(0)
    c = w.begin_commit()
    from nitpicker_core.records import ScrapeResult
    w.put_page(c, ScrapeResult(url="https://example.org/live", metadata={"title": "live"}))
    print("won", os.getpid(), flush=True)  # only after the writes, so readers see a quiet database
    deadline = time.time() + hold
    while time.time() < deadline and not (target.parent / "release").exists():
        time.sleep(0.01)
    w.close()
""")


def _spawn(target: Path, go: Path, hold: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", RACER, str(target), str(go), str(hold)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_two_processes_race_exactly_one_wins(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    go = tmp_path / "go"
    procs = [_spawn(target, go, 3.0) for _ in range(2)]
    wait_until(lambda: len(list(tmp_path.glob("ready.*"))) == 2, "both racers spinning on the go-file")
    go.touch()
    lines = []
    for proc in procs:
        assert proc.stdout is not None
        lines.append((proc, proc.stdout.readline().split()))
        if lines[-1][1][:1] == ["locked"]:
            break
    (tmp_path / "release").touch()
    outputs = {p.pid: p.communicate(timeout=30) for p in procs}
    results = [words for _, words in lines]
    results += [out.split() for pid, (out, _) in outputs.items() if pid not in {p.pid for p, _ in lines}]
    winners = [r for r in results if r[:1] == ["won"]]
    losers = [r for r in results if r[:1] == ["locked"]]
    assert len(winners) == 1 and len(losers) == 1, (results, outputs)
    assert losers[0][1] == winners[0][1]  # the loser's ArchiveLocked names the winner's pid
    assert " ".join(losers[0][2:]) == f"site.nitpicker is being written by process {winners[0][1]}"


def test_stale_lock_of_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    target = tmp_path / "site.nitpicker"
    stub = stub_path(target)
    (stub / "lock").mkdir(parents=True)
    (stub / "lock" / "pid").write_text(f"{dead.pid}\n")
    w = ArchiveWriter.open(target)
    assert live_pid(stub) == os.getpid()
    assert sorted(p.name for p in stub.iterdir() if p.name.startswith("lock")) == ["lock"]
    with pytest.raises(ArchiveLocked, match=f"is being written by process {os.getpid()}"):
        ArchiveWriter.open(target)  # the holder is alive (ourselves)
    w.close()
    assert not (stub / "lock").exists()


def test_pidless_lock_is_respected_while_fresh_and_taken_over_when_old(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    lock = stub_path(target) / "lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text("garbage")
    with pytest.raises(ArchiveLocked):
        ArchiveWriter.open(target)
    old = time.time() - 60
    os.utime(lock, (old, old))
    ArchiveWriter.open(target).close()


def test_reader_sees_live_stub_and_writer_pid(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    go = tmp_path / "go"
    go.touch()
    proc = _spawn(target, go, 30.0)
    assert proc.stdout is not None
    words = proc.stdout.readline().split()
    assert words[0] == "won", proc.stderr.read() if proc.stderr else ""
    stub = stub_path(target)
    # -shm is SQLite's shared lock table, rewritten by every connection; the content files must not change.
    before = snapshot(stub, skip=("-shm",))
    try:
        with open_archive(stub) as r:
            assert r.live_pid == int(words[1]) == proc.pid
            assert r.resolve(None) == 1 and r.resolved_fallback  # only a running commit so far
            assert r.page("https://example.org/live")["title"] == "live"
        with open_archive(target) as r:  # no file yet: the name falls back to the live stub
            assert r.live_pid == proc.pid
        assert snapshot(stub, skip=("-shm",)) == before
    finally:
        (tmp_path / "release").touch()
        proc.communicate(timeout=30)
    assert live_pid(stub) is None


def test_a_lock_whose_holder_ended_unreaped_is_taken_over(tmp_path):
    """A holder that ended but whose parent has not reaped it yet (a zombie) holds nothing: the archive writer
    process of a killed crawl is one until its parent notices."""
    from nitpicker_core.archive.lock import LOCK_DIR, PID_FILE, StubLock

    ended = subprocess.Popen([sys.executable, "-c", "pass"])  # not waited for: a zombie once it ends

    def state() -> str:
        return Path(f"/proc/{ended.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]

    try:
        wait_until(lambda: state() == "Z", "the child to end")
        stub = tmp_path / "x.nitpicker.stub"
        (stub / LOCK_DIR).mkdir(parents=True)
        (stub / LOCK_DIR / PID_FILE).write_text(f"{ended.pid}\n")
        lock = StubLock(stub, "x.nitpicker")
        lock.acquire()
        assert lock.held and (stub / LOCK_DIR / PID_FILE).read_text().strip() == str(os.getpid())
    finally:
        ended.wait()
