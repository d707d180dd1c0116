"""The .nitpicker file: atomic tar writes, validated extraction, and the shared unpack cache."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import sqlite3
import tarfile
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from nitpicker_core.errors import ArchiveError

from .models import FORMAT_VERSION

DB_NAME = "archive.db"
READY_MARKER = ".ready"
EDGE_BYTES = 64 * 1024
COPY_CHUNK = 1024 * 1024

# How many times this process extracted an archive.db; tests use it to prove the cache is hit.
extraction_count = 0

# Test-only: set to a point's name (after-finish, after-analysis, during-write) to make the writing process SIGKILL itself
# there, so tests can prove every state a kill leaves behind is recovered. Never set it otherwise.
TEST_KILL_ENV = "NITPICKER_TEST_KILL_AT"


def kill_point_for_tests(point: str) -> None:
    """SIGKILL this process at ``point`` when the test-only environment variable names it."""
    if os.environ.get(TEST_KILL_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _add_member(tar: tarfile.TarFile, db_path: Path) -> None:
    info = tarfile.TarInfo(DB_NAME)
    st = db_path.stat()
    info.size = st.st_size
    info.mtime = int(st.st_mtime)
    info.mode = 0o644
    with db_path.open("rb") as fh:
        tar.addfile(info, fh)


def _temp_pattern(target: Path) -> re.Pattern[str]:
    # mkstemp's random part never holds a dot, so another target's temp files (".NAME.more.XXXX.tmp") never match
    return re.compile(rf"\.{re.escape(target.name)}\.[^.]+\.tmp")


def remove_leftover_temps(target: Path) -> list[Path]:
    """Delete the temp files a dead writer of ``target`` left; call only while holding ``target``'s stub lock."""
    pattern = _temp_pattern(target)
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            path = Path(entry.path)
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def write_tar(db_path: Path, target: Path) -> None:
    """Tar ``db_path`` as archive.db into a temp file beside ``target``, then rename it over ``target``."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _add_member(tar, db_path)
            raw.flush()
            os.fsync(raw.fileno())
        kill_point_for_tests("during-write")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def _looks_like_tar_header(path: Path) -> bool:
    with path.open("rb") as fh:
        block = fh.read(512)
    return len(block) == 512 and block[257:262] == b"ustar"


def extract_db(archive: Path, dest_dir: Path, name: str) -> Path:
    """Extract only archive.db from ``archive`` into ``dest_dir`` and check it is a readable archive."""
    global extraction_count
    try:
        tar = tarfile.open(archive, mode="r:")
    except tarfile.ReadError:
        if archive.stat().st_size >= 512 and _looks_like_tar_header(archive):
            raise ArchiveError(f"{name} is truncated or corrupt") from None
        raise ArchiveError(f"{name} is not a nitpicker archive (not a tar file)") from None
    except OSError as exc:
        raise ArchiveError(f"cannot read {name}: {exc.strerror or exc}") from None
    with tar:
        try:
            member = _find_db_member(tar)
        except (tarfile.ReadError, EOFError):
            raise ArchiveError(f"{name} is truncated or corrupt") from None
        if member is None:
            raise ArchiveError(f"{name} is not a nitpicker archive (no archive.db inside)")
        out = dest_dir / DB_NAME
        try:
            src = tar.extractfile(member)
            assert src is not None  # a regular file always has a stream
            with out.open("wb") as dst:
                copied = _copy(src, dst)
        except (tarfile.ReadError, EOFError, tarfile.StreamError):
            raise ArchiveError(f"{name} is truncated or corrupt") from None
        if copied != member.size:
            raise ArchiveError(f"{name} is truncated or corrupt")
    extraction_count += 1
    check_db(out, name, immutable=True)
    return out


def _find_db_member(tar: tarfile.TarFile) -> tarfile.TarInfo | None:
    # Only the one expected regular file is ever read; names with paths or links are ignored, and
    # the data filter vets the member exactly as tarfile's safe extraction would.
    for member in tar:
        if member.name in (DB_NAME, f"./{DB_NAME}") and member.isfile():
            try:
                return tarfile.data_filter(member, "/nonexistent")
            except tarfile.FilterError:
                return None
    return None


def _copy(src: IO[bytes], dst: IO[bytes]) -> int:
    total = 0
    while chunk := src.read(COPY_CHUNK):
        dst.write(chunk)
        total += len(chunk)
    return total


def check_db(db_path: Path, name: str, *, immutable: bool) -> int:
    """The archive's format version; ArchiveError when it is not a (readable) nitpicker database."""
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    try:
        conn = sqlite3.connect(f"file:{db_path}?{flags}", uri=True)
    except sqlite3.Error:
        raise ArchiveError(f"{name} is not a nitpicker archive (archive.db cannot be opened)") from None
    try:
        row = conn.execute("SELECT value FROM info WHERE key = 'format_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        if "no such table" in str(exc):
            raise ArchiveError(f"{name} is not a nitpicker archive (no info table)") from None
        raise ArchiveError(f"{name} is not a nitpicker archive (archive.db is not an SQLite database)") from None
    finally:
        conn.close()
    return check_version(row[0] if row else None, name)


def check_version(raw: str | None, name: str) -> int:
    try:
        version = int(raw) if raw is not None else None
    except ValueError:
        version = None
    if version is None:
        raise ArchiveError(f"{name} is not a nitpicker archive (no format version)")
    if version > FORMAT_VERSION:
        raise ArchiveError(
            f"{name} has archive format {version}; this nitpicker reads up to {FORMAT_VERSION} — upgrade nitpicker"
        )
    return version


# --- unpack cache -------------------------------------------------------------------------------------


def cache_root() -> Path:
    override = os.environ.get("NITPICKER_TAR_CACHE_DIR")
    return Path(override) if override else Path(tempfile.gettempdir()) / "nitpicker-cache"


def cache_disabled() -> bool:
    return os.environ.get("NITPICKER_DISABLE_TAR_CACHE", "") not in ("", "0")


def cache_key(path: Path) -> str:
    """Size + mtime + ctime + hashes of the first and last 64 KiB: cheap, and changes on any rewrite."""
    st = path.stat()
    digest = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode())
    with path.open("rb") as fh:
        digest.update(hashlib.sha256(fh.read(EDGE_BYTES)).digest())
        fh.seek(max(0, st.st_size - EDGE_BYTES))
        digest.update(hashlib.sha256(fh.read(EDGE_BYTES)).digest())
    return digest.hexdigest()[:32]


@dataclass
class _Unpacked:
    directory: Path
    refs: int
    private: bool


_registry: dict[str, _Unpacked] = {}
_registry_lock = threading.Lock()


def acquire_unpacked(archive: Path, name: str) -> tuple[str, Path]:
    """Unpack (or reuse) ``archive``; returns the registry key and the directory holding archive.db."""
    key = cache_key(archive)
    with _registry_lock:
        entry = _registry.get(key)
        if entry is not None and (entry.directory / DB_NAME).exists():
            entry.refs += 1
            return key, entry.directory
        if cache_disabled():
            directory = Path(tempfile.mkdtemp(prefix="nitpicker-unpack-"))
            try:
                extract_db(archive, directory, name)
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            private = True
        else:
            directory, private = _cached_unpack(archive, key, name), False
        _registry[key] = _Unpacked(directory, 1, private)
        return key, directory


def release_unpacked(key: str) -> None:
    with _registry_lock:
        entry = _registry.get(key)
        if entry is None:
            return
        entry.refs -= 1
        if entry.refs <= 0:
            del _registry[key]
            if entry.private:
                shutil.rmtree(entry.directory, ignore_errors=True)


def _cached_unpack(archive: Path, key: str, name: str) -> Path:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    if (final / READY_MARKER).is_file():
        return final
    if final.exists():
        _move_aside(final)
    work = Path(tempfile.mkdtemp(prefix=f"{key}.tmp-", dir=root))
    try:
        extract_db(archive, work, name)
        (work / READY_MARKER).write_text("ok\n")
        try:
            os.rename(work, final)
        except OSError:
            # Another process finished the same unpack first; its copy is as good as ours.
            if not (final / READY_MARKER).is_file():
                raise
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return final


def _move_aside(directory: Path) -> None:
    """An unpack without its ready-marker is never trusted: rename it away, then delete it."""
    aside = directory.with_name(f"{directory.name}.stale-{uuid.uuid4().hex[:12]}")
    try:
        os.rename(directory, aside)
    except OSError:
        return  # someone else moved it already
    shutil.rmtree(aside, ignore_errors=True)
