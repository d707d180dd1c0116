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
from nitpicker_core.errors import ArchiveError, OutOfSpace
from nitpicker_testing.archives import SITE, archive_builder
from nitpicker_testing.archives import page as built_page


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
    # issue 33: commits replaced by an endlessly recursive view hung log, diff, analyze, the viewer and MCP
    loop_dir = tmp_path / "loop-work"
    loop_dir.mkdir()
    with tarfile.open(good) as tar:
        tar.extract("archive.db", loop_dir, filter="data")
    conn = sqlite3.connect(loop_dir / "archive.db")
    conn.execute("ALTER TABLE commits RENAME TO commits_kept")
    conn.execute(
        "CREATE VIEW commits AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT c.* FROM commits_kept c, n"
    )
    conn.commit()
    conn.close()
    _tar_with(tmp_path / "loop.nitpicker", {"archive.db": (loop_dir / "archive.db").read_bytes()})
    for p in loop_dir.iterdir():
        p.unlink()
    loop_dir.rmdir()
    cases["recursive view"] = (
        tmp_path / "loop.nitpicker",
        "loop.nitpicker is not a nitpicker archive (commits is a view nitpicker does not make)",
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
    with pytest.raises(
        OutOfSpace, match="^no space left on device while writing site.nitpicker; nothing was lost"
    ):
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


# --- the cache's environment switches, bounded unpacks, pruning -------------------------------------------


@pytest.mark.parametrize("word", ["0", "false", "null", " NULL "])
def test_a_cache_dir_that_reads_like_a_switch_makes_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    cwd, xdg = tmp_path / "cwd", tmp_path / "xdg"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", word)
    with open_archive(target) as r:
        assert len(r.row_hashes()) == 11
    assert list(cwd.iterdir()) == []  # no ./0/, ./false/
    assert len(list((xdg / "nitpicker").iterdir())) == 1  # the default cache was used
    assert any("names no folder" in m for m in caplog.messages)


@pytest.mark.parametrize(
    ("word", "cached"), [("false", True), ("off", True), ("0", True), ("yes", False), ("TRUE", False)]
)
def test_disable_tar_cache_takes_its_words_at_their_meaning(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, word: str, cached: bool
) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)
    monkeypatch.setenv("NITPICKER_DISABLE_TAR_CACHE", word)
    with open_archive(target):
        pass
    assert (cache_dir.is_dir() and len(list(cache_dir.iterdir())) == 1) is cached


def _raw_tar_with_declared_size(path: Path, declared: int, data: bytes) -> None:
    """A tar whose archive.db header says ``declared`` bytes while the file holds only ``data``."""
    info = tarfile.TarInfo("archive.db")
    info.size = declared
    with path.open("wb") as fh:
        fh.write(info.tobuf(format=tarfile.GNU_FORMAT))
        fh.write(data + b"\0" * (-len(data) % 512))
        fh.write(b"\0" * 1024)


def test_a_member_longer_than_its_file_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.nitpicker"
    _raw_tar_with_declared_size(bomb, 1 << 30, b"SQLite format 3\0" + b"x" * 10_000)
    assert bomb.stat().st_size < 20_000
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=r"^bomb.nitpicker is truncated or corrupt$"):
        files.extract_db(bomb, dest, "bomb.nitpicker")
    assert list(dest.iterdir()) == []


def test_a_sparse_member_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    import subprocess

    src = tmp_path / "src"
    src.mkdir()
    with (src / "archive.db").open("wb") as fh:
        fh.write(b"SQLite format 3\0")
        fh.truncate(1 << 30)  # 1 GiB of holes
    bomb = tmp_path / "sparse.nitpicker"
    subprocess.run(["tar", "--sparse", "-cf", str(bomb), "-C", str(src), "archive.db"], check=True)
    assert bomb.stat().st_size < 100_000
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match=r"\(archive.db is stored sparse\)$"):
        files.extract_db(bomb, dest, "sparse.nitpicker")
    assert list(dest.iterdir()) == []


def _age(entry: Path, days: float) -> None:
    import time

    then = time.time() - days * 86400
    os.utime(entry / files.READY_MARKER, (then, then))


def test_entries_unused_for_two_weeks_are_pruned_when_another_is_unpacked(
    tmp_path: Path, cache_dir: Path
) -> None:
    archives = []
    for name in ("old", "recent", "new"):
        target = tmp_path / f"{name}.nitpicker"
        make_archive(target)
        archives.append(target)
    for target in archives[:2]:
        with open_archive(target):
            pass
    old, recent = (cache_dir / files.cache_key(t) for t in archives[:2])
    _age(old, 15)
    _age(recent, 13)
    leftover = cache_dir / "abc.tmp-killed"
    leftover.mkdir()
    os.utime(leftover, (0, 0))
    with open_archive(archives[2]):
        pass
    assert not old.exists() and recent.is_dir() and not leftover.exists()
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted([recent.name, files.cache_key(archives[2])])


def test_over_its_size_the_cache_drops_the_least_recently_used_but_never_one_being_read(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    targets = []
    for i in range(4):
        target = tmp_path / f"site{i}.nitpicker"
        make_archive(target)
        targets.append(target)
    for target in targets[:3]:
        with open_archive(target):
            pass
    keys = [files.cache_key(t) for t in targets]
    for age, key in zip((3, 2, 1), keys[:3], strict=True):
        _age(cache_dir / key, age)
    monkeypatch.setenv("NITPICKER_TAR_CACHE_MAX_MB", "0")
    with open_archive(targets[0]) as reading:  # in use (and now the most recently used)
        with open_archive(targets[3]):
            pass
        assert len(reading.row_hashes()) == 11
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted([keys[0], keys[3]])
    # a reader of another process holds its entry the same way: the exclusive lock is refused
    held = files._hold(cache_dir / keys[0])
    assert held is not None
    try:
        assert files._evict(cache_dir / keys[0]) is False and (cache_dir / keys[0]).is_dir()
    finally:
        os.close(held)
    assert files._evict(cache_dir / keys[0]) is True and not (cache_dir / keys[0]).exists()


def test_a_flipped_bit_anywhere_in_the_database_is_refused(tmp_path: Path, cache_dir: Path) -> None:
    # issue 33: most bit flips in an archive went undetected (a page's text changed silently)
    target = tmp_path / "site.nitpicker"
    make_archive(target, n=40)
    with tarfile.open(target) as tar:
        names = tar.getnames()
        db = tar.getmember("archive.db")
    assert names == ["archive.db", "archive.db.sha256"]
    data = bytearray(target.read_bytes())
    for offset in (db.offset_data + 100, db.offset_data + db.size // 2, db.offset_data + db.size - 1):
        flipped = tmp_path / f"flipped-{offset}.nitpicker"
        copy = bytearray(data)
        copy[offset] ^= 0x10
        flipped.write_bytes(bytes(copy))
        with pytest.raises(ArchiveError) as info:
            open_archive(flipped).close()
        assert str(info.value) == f"{flipped.name} is corrupt (archive.db does not match its checksum)"
    with open_archive(target) as r:  # the archive itself reads, and one without a checksum (older) too
        assert len(r.row_hashes()) == 41
    older = tmp_path / "older.nitpicker"
    with tarfile.open(target) as tar:
        _tar_with(older, {"archive.db": tar.extractfile("archive.db").read()})  # type: ignore[union-attr]
    with open_archive(older) as r:
        assert len(r.row_hashes()) == 41


def test_a_crawl_leaves_the_database_it_wrote_as_the_file_s_unpack(tmp_path: Path, cache_dir: Path) -> None:
    # A crawl's summary reads the file right after writing it: the database the file was written from is
    # moved into the cache as its entry, not unpacked again from the file
    target = tmp_path / "crawl.nitpicker"
    with archive_builder(target) as build:
        build.page(built_page(SITE + "/", title="Home"))
    (entry,) = cache_dir.iterdir()
    assert entry.name == files.cache_key(target) and files._trusted_entry(entry)
    with tarfile.open(target) as tar:
        member = tar.extractfile("archive.db")
        assert member is not None and member.read() == (entry / "archive.db").read_bytes()
    assert not stub_path(target).exists()
    before = files.extraction_count
    with open_archive(target) as r:
        assert [p["url"] for p in r.pages(r.resolve())] == [SITE + "/"]
    assert files.extraction_count == before


def test_a_database_changed_since_the_file_was_written_is_never_left_as_its_unpack(
    tmp_path: Path, cache_dir: Path
) -> None:
    target = tmp_path / "site.nitpicker"
    make_archive(target)  # a writer that never asks for it leaves nothing either
    assert not cache_dir.exists() or not list(cache_dir.iterdir())
    w = ArchiveWriter.open(target)
    w.set_info("note", "after")  # the file lags behind the database now
    w.write()
    w.set_info("note", "later still")
    w.close(remove_stub=True, keep_unpacked=True)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


def test_no_unpack_is_left_when_the_cache_is_off(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NITPICKER_DISABLE_TAR_CACHE", "1")
    target = tmp_path / "crawl.nitpicker"
    with archive_builder(target) as build:
        build.page(built_page(SITE + "/", title="Home"))
    assert not cache_dir.exists() and not stub_path(target).exists()
