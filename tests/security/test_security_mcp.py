"""`nitpicker mcp` under hostile input: a FIFO or device as the archive, huge integers, NUL bytes, long paths, bad
patterns. Each is a tool error, and one archive that is slow to open never holds up calls on the others.

The real server runs over stdio, driven by the MCP SDK's own client; the locking tests drive the archive
manager in process with the real reader, held at a gate the test opens.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from archives import build_archive
from support import McpStdio

from nitpicker_core import ArchiveError
from nitpicker_core.archive import open_archive

DEADLINE = 90.0  # generous: the machine is shared; a hang is what the deadline catches


def _unblock_fifo(fifo: Path) -> None:
    """Give a reader stuck on the FIFO its end of file (only an unfixed server is stuck there)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: nobody is reading it, as it should be
            raise
    else:
        os.close(fd)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp-security")
    build_archive(path / "a.nitpicker")
    build_archive(path / "b.nitpicker")
    os.mkfifo(path / "pipe.nitpicker")
    (path / "plain").mkdir()
    return path


@pytest.fixture(scope="module")
def server(workdir: Path):
    env = dict(os.environ, NITPICKER_TAR_CACHE_DIR=str(workdir / "cache"))
    with (workdir / "stderr.log").open("w+", encoding="utf-8") as errlog:
        stdio = McpStdio(workdir, errlog, env, deadline=DEADLINE)
        try:
            yield stdio
        finally:
            _unblock_fifo(workdir / "pipe.nitpicker")
            stdio.close()


def ok(result: Any) -> Any:
    import json

    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def error_text(result: Any, workdir: Path) -> str:
    assert result.is_error
    (content,) = result.content
    text = content.text
    assert text and "\n" not in text and "internal error" not in text, text
    assert str(workdir) not in text and len(text) <= 1000
    return text


def test_a_fifo_is_refused_and_never_holds_up_other_calls(server: McpStdio, workdir: Path) -> None:
    fifo, good, listing, other = server.gather(
        ("summary", {"archive": "pipe.nitpicker"}),
        ("summary", {"archive": "a.nitpicker"}),
        ("list_archives", {}),
        ("list_commits", {"archive": str(workdir / "b.nitpicker")}),
    )
    assert error_text(fifo, workdir).startswith("pipe.nitpicker is not a regular file (a FIFO)")
    assert ok(good)["commit"] == 1
    assert isinstance(ok(listing)["archives"], list)
    assert ok(other)["head"] == 1
    # and the server goes on answering afterwards, the FIFO included
    again, listed = server.gather(("summary", {"archive": "pipe.nitpicker"}), ("list_archives", {}))
    assert "not a regular file" in error_text(again, workdir)
    assert {a["name"] for a in ok(listed)["archives"]} >= {"a.nitpicker", "b.nitpicker"}


@pytest.mark.parametrize(
    ("archive", "expected"),
    [
        ("/dev/zero", "zero is not a regular file (a character device)"),
        ("plain", "plain is a directory but not a nitpicker working directory"),
        ("a\x00b.nitpicker", "the archive path contains a NUL byte"),
        ("d/" * 2500 + "a.nitpicker", "the archive path is too long (5011 characters)"),
        ("x" * 5000, "the archive path is too long (5000 characters)"),
        ("x" * 300, "the archive path is too long"),
    ],
)
def test_archives_that_cannot_be_archives_are_tool_errors(
    server: McpStdio, workdir: Path, archive: str, expected: str
) -> None:
    assert expected in error_text(server.call("summary", archive=archive), workdir)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("pages", {"offset": 2**63}, "parameter 'offset' is out of range"),
        ("pages", {"offset": 2**80}, "parameter 'offset' is out of range"),
        ("pages", {"offset": -1}, "parameter 'offset' must be at least 0"),
        ("pages", {"limit": 2**63}, "parameter 'limit' must be at most 10000"),
        ("pages", {"status": 2**63}, "parameter 'status' is out of range"),
        ("pages", {"commit": 2**63}, "parameter 'commit' must be a commit id"),
        ("pages", {"commit": str(2**63)}, "parameter 'commit' must be a commit id"),
        ("pages", {"commit": -2}, "parameter 'commit' must be a commit id"),
        ("pages", {"url": "a\x00b"}, "parameter 'url' must not contain a NUL byte"),
        ("pages", {"url": "[[["}, "parameter 'url': the [ at character 1 of the pattern is never closed"),
        ("pages", {"url": "[" * 60_000}, "parameter 'url' is too long"),
        ("page_detail", {"url": "http://site.test/" + "a" * 5000}, "no URL 'http://site.test/aaa"),
        ("resource_referrers", {"url": "x\x00"}, "parameter 'url' must not contain a NUL byte"),
    ],
)
def test_malformed_arguments_are_tool_errors(
    server: McpStdio, workdir: Path, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    assert expected in error_text(server.call(tool, archive="a.nitpicker", **arguments), workdir)


# --- in process: the archive manager's locks --------------------------------------------------------------


class GatedOpener:
    """The real ``open_archive``, held at a gate for the archive named ``held`` until the test opens it."""

    def __init__(self, held: str) -> None:
        self.held = held
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self, path: Path) -> Any:
        if path.name == self.held:
            self.entered.set()
            assert self.gate.wait(DEADLINE), "the test never opened the gate"
        return open_archive(path)


def _in_thread(target: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(target())
        except BaseException as exc:  # handed to the test, which asserts on it
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_an_archive_being_opened_holds_up_only_its_own_calls(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nitpicker_mcp.archives import ArchiveBusy, ArchiveManager

    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(workdir / "cache"))
    opener = GatedOpener("a.nitpicker")
    manager = ArchiveManager(opener, wait=0.2)

    def first() -> int:
        with manager.use(str(workdir / "a.nitpicker")) as reader:
            return reader.head()

    slow, slow_out = _in_thread(first)
    try:
        assert opener.entered.wait(DEADLINE)
        # another archive and the listing answer while a.nitpicker is still opening
        other, other_out = _in_thread(lambda: (manager.describe(), _head(manager, workdir / "b.nitpicker")))
        other.join(DEADLINE)
        assert not other.is_alive(), "a call on another archive waited for the one being opened"
        assert other_out[0][1] == 1
        # a second call on the archive being opened gives up after the wait, with a one-line error
        with pytest.raises(
            ArchiveBusy, match=r"^a\.nitpicker is still being opened by another call; try again$"
        ):
            _head(manager, workdir / "a.nitpicker")
    finally:
        opener.gate.set()
        slow.join(DEADLINE)
    assert slow_out == [1]
    assert _head(manager, workdir / "a.nitpicker") == 1
    manager.close_all()


def test_a_busy_archive_is_listed_without_waiting_and_its_callers_give_up(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nitpicker_mcp.archives import ArchiveBusy, ArchiveManager

    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(workdir / "cache"))
    manager = ArchiveManager(wait=0.2)
    inside, leave = threading.Event(), threading.Event()

    def long_query() -> None:
        with manager.use(str(workdir / "a.nitpicker")):
            inside.set()
            assert leave.wait(DEADLINE)

    holder, _ = _in_thread(long_query)
    try:
        assert inside.wait(DEADLINE)
        lister, listed = _in_thread(manager.describe)
        lister.join(DEADLINE)
        assert not lister.is_alive(), "list_archives waited for a running query"
        (row,) = listed[0]
        assert row["name"] == "a.nitpicker" and row["busy"] is True
        with pytest.raises(ArchiveBusy, match="a.nitpicker is busy with another call"):
            _head(manager, workdir / "a.nitpicker")
    finally:
        leave.set()
        holder.join(DEADLINE)
    (row,) = manager.describe()
    assert row["commits"] == 1 and "busy" not in row
    manager.close_all()


def _head(manager: Any, path: Path) -> int:
    with manager.use(str(path)) as reader:
        return reader.head()


def test_busy_is_an_archive_error() -> None:
    from nitpicker_mcp.archives import ArchiveBusy

    assert issubclass(ArchiveBusy, ArchiveError)


@pytest.fixture(autouse=True)
def _no_stray_fifo_reader(workdir: Path):
    yield
    with contextlib.suppress(OSError):
        _unblock_fifo(workdir / "pipe.nitpicker")
