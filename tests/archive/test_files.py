"""The .nitpicker file: unpack cache, bad inputs, atomic writes, and readers that never write."""

from __future__ import annotations

import io
import os
import sqlite3
import tarfile
from pathlib import Path

import pytest
from archive_testdata import page, snapshot

from nitpicker_core.archive import FORMAT_VERSION, ArchiveWriter, files, open_archive, stub_path
from nitpicker_core.errors import ArchiveError


def make_archive(target: Path, n: int = 10) -> None:
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, [page(i, n) for i in range(n)])
    w.finish_commit(c, "complete")
    w.write()
    w.close()


def test_cache_reused_and_keyed(tmp_path: Path, cache_dir: Path) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    before = files.extraction_count
    with open_archive(target) as r:
        r.row_hashes()
    (entry,) = [p for p in cache_dir.iterdir()]
    assert (entry / ".ready").is_file()
    mtime = (entry / "archive.db").stat().st_mtime_ns
    with open_archive(target) as r:
        assert len(r.row_hashes()) == 11
    assert files.extraction_count == before + 1
    assert [p for p in cache_dir.iterdir()] == [entry] and (entry / "archive.db").stat().st_mtime_ns == mtime
    make_archive(target, 12)  # a rewrite changes the key
    before = files.extraction_count - 1
    with open_archive(target) as r:
        assert len(r.row_hashes()) == 13
    assert files.extraction_count == before + 2


def test_cache_dir_without_ready_marker_is_moved_aside(tmp_path: Path, cache_dir: Path) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    bogus = cache_dir / files.cache_key(target)
    bogus.mkdir(parents=True)
    (bogus / "archive.db").write_bytes(b"half an extraction")
    before = files.extraction_count
    with open_archive(target) as r:
        assert len(r.row_hashes()) == 11
    assert files.extraction_count == before + 1
    assert (bogus / ".ready").is_file() and (bogus / "archive.db").stat().st_size > 1000
    assert sorted(p.name for p in cache_dir.iterdir()) == [bogus.name]


def test_cache_dir_env_and_disable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    other = tmp_path / "elsewhere"
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(other))
    with open_archive(target):
        pass
    assert len(list(other.iterdir())) == 1
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(tmp_path / "unused"))
    monkeypatch.setenv("NITPICKER_DISABLE_TAR_CACHE", "1")
    before = files.extraction_count
    a = open_archive(target)
    b = open_archive(target)  # the same archive twice in one process: unpacked once
    assert files.extraction_count == before + 1
    private = files._registry[a._cache_key].directory
    assert private.is_dir() and not (tmp_path / "unused").exists()
    a.close()
    assert private.is_dir() and len(b.row_hashes()) == 11  # still referenced by b
    b.close()
    assert not private.exists()


def test_refcount_with_cache(tmp_path: Path) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    before = files.extraction_count
    with open_archive(target) as a, open_archive(target) as b:
        assert a._cache_key == b._cache_key and files._registry[a._cache_key].refs == 2
    assert files.extraction_count == before + 1 and a._cache_key not in files._registry


def _tar_with(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Broken archives in ``tmp_path``/user (the user's directory; the test cache lives beside it)."""
    tmp_path = tmp_path / "user"
    tmp_path.mkdir()
    good = tmp_path / "good.nitpicker"
    make_archive(good)
    cases: dict[str, tuple[Path, str]] = {}
    cases["missing"] = (tmp_path / "nope.nitpicker", "no such archive: nope.nitpicker")
    (tmp_path / "plain").mkdir()
    cases["dir"] = (tmp_path / "plain", "plain is a directory but not a nitpicker working directory")
    (tmp_path / "text.nitpicker").write_text("hello, not a tar\n" * 100)
    cases["not tar"] = (
        tmp_path / "text.nitpicker",
        "text.nitpicker is not a nitpicker archive (not a tar file)",
    )
    _tar_with(tmp_path / "nodb.nitpicker", {"readme.txt": b"hi"})
    cases["no db"] = (
        tmp_path / "nodb.nitpicker",
        "nodb.nitpicker is not a nitpicker archive (no archive.db inside)",
    )
    _tar_with(tmp_path / "evil.nitpicker", {"../archive.db": b"x", "sub/archive.db": b"y"})
    cases["traversal"] = (
        tmp_path / "evil.nitpicker",
        "evil.nitpicker is not a nitpicker archive (no archive.db inside)",
    )
    data = good.read_bytes()
    (tmp_path / "cut.nitpicker").write_bytes(data[: len(data) // 2])
    cases["truncated"] = (tmp_path / "cut.nitpicker", "cut.nitpicker is truncated or corrupt")
    _tar_with(tmp_path / "junkdb.nitpicker", {"archive.db": b"not sqlite at all" * 100})
    cases["not sqlite"] = (
        tmp_path / "junkdb.nitpicker",
        "junkdb.nitpicker is not a nitpicker archive (archive.db is not an SQLite database)",
    )
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    _tar_with(tmp_path / "foreign.nitpicker", {"archive.db": foreign.read_bytes()})
    foreign.unlink()
    cases["no info"] = (
        tmp_path / "foreign.nitpicker",
        "foreign.nitpicker is not a nitpicker archive (no info table)",
    )
    newer_dir = tmp_path / "newer-work"
    newer_dir.mkdir()
    with tarfile.open(good) as tar:
        tar.extract("archive.db", newer_dir, filter="data")
    conn = sqlite3.connect(newer_dir / "archive.db")
    conn.execute("UPDATE info SET value = ? WHERE key = 'format_version'", (str(FORMAT_VERSION + 1),))
    conn.commit()
    conn.close()
    _tar_with(tmp_path / "newer.nitpicker", {"archive.db": (newer_dir / "archive.db").read_bytes()})
    for p in newer_dir.iterdir():
        p.unlink()
    newer_dir.rmdir()
    cases["newer"] = (
        tmp_path / "newer.nitpicker",
        f"newer.nitpicker has archive format {FORMAT_VERSION + 1}; this nitpicker reads up to {FORMAT_VERSION} — upgrade nitpicker",
    )
    return cases


def test_bad_inputs_give_one_line_and_touch_nothing(tmp_path: Path, cache_dir: Path) -> None:
    cases = _bad_inputs(tmp_path)
    user = tmp_path / "user"
    for label, (path, message) in cases.items():
        listing = sorted(p.name for p in user.iterdir())
        hashes = snapshot(user)
        with pytest.raises(ArchiveError) as info:
            open_archive(path)
        assert str(info.value) == message, label
        assert "\n" not in str(info.value) and str(tmp_path) not in str(info.value)
        assert sorted(p.name for p in user.iterdir()) == listing, label
        assert snapshot(user) == hashes, label
    # nothing half-extracted was left in the cache either
    assert all((p / ".ready").is_file() for p in cache_dir.iterdir())


def test_writer_refuses_bad_targets(tmp_path: Path) -> None:
    cases = _bad_inputs(tmp_path)
    user = tmp_path / "user"
    for label in ("not tar", "no db", "truncated", "not sqlite", "no info", "newer"):
        path, message = cases[label]
        hashes = snapshot(user)
        with pytest.raises(ArchiveError) as info:
            ArchiveWriter.open(path)
        assert str(info.value) == message, label
        assert snapshot(user) == hashes and not stub_path(path).exists(), label


def test_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    old = target.read_bytes()
    w = ArchiveWriter.open(target)
    c = w.begin_commit()
    w.put_pages(c, [page(i, 30, variant="v2") for i in range(30)])
    w.finish_commit(c)

    def broken(tar: tarfile.TarFile, db_path: Path) -> None:
        info = tarfile.TarInfo("archive.db")
        info.size = db_path.stat().st_size
        tar.fileobj.write(info.tobuf())
        tar.fileobj.write(b"\0" * 1000)  # part of the data, then the disk "fills up"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files, "_add_member", broken)
    with pytest.raises(OSError):
        w.write()
    assert target.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["site.nitpicker"]
    monkeypatch.undo()
    w.write()
    w.close()
    with open_archive(target) as r:
        assert r.head() == 2 and len(r.row_hashes(2)) == 31


def test_reader_never_writes(tmp_path: Path, cache_dir: Path) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    w = ArchiveWriter.open(target)  # also leaves a stub: an unfinished second commit
    c = w.begin_commit()
    w.put_pages(c, [page(i, 10, variant="x") for i in range(5)])
    w.close()
    stub = stub_path(target)
    assert (stub / "archive.db").exists() and not (stub / "archive.db-wal").exists()
    for source in (target, stub):
        state = snapshot(tmp_path)
        with open_archive(source) as r:
            state = snapshot(tmp_path)  # includes the cache entry, which the open created
            ops = [
                r.info,
                r.commits,
                r.head,
                lambda: list(r.pages(None)),
                lambda: r.page("https://example.org/p/1"),
                lambda: r.anchors("https://example.org/p/1"),
                lambda: r.html("https://example.org/p/1"),
                r.row_hashes,
                r.resources,
                r.analysis,
                r.violations,
                lambda: r.diff(1, r.commits()[0]["id"]),
                lambda: r.execute("SELECT COUNT(*) FROM url"),
            ]
            for op in ops:
                op()
                assert snapshot(tmp_path) == state
            assert r.live_pid is None
        assert snapshot(tmp_path) == state
    # the database, and the count of finished changes the file holds (what tells a writer it is behind)
    assert sorted(os.listdir(stub)) == ["archive.db", "written"]
