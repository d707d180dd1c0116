"""The .nitpicker file: atomic tar writes, validated extraction, and the per-user unpack cache."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import logging
import os
import re
import shutil
import signal
import sqlite3
import stat
import tarfile
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from nitpicker_core.errors import ArchiveError, watch_signals

from .models import FORMAT_VERSION, REFERRER_VIEW

DB_NAME = "archive.db"
CHECKSUM_NAME = "archive.db.sha256"  # written after archive.db; archives before it have none
READY_MARKER = ".ready"
EDGE_BYTES = 64 * 1024
COPY_CHUNK = 1024 * 1024
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: a longer path can never name a file

log = logging.getLogger(__name__)

# How many times this process extracted an archive.db; tests use it to prove the cache is hit.
extraction_count = 0

# Test-only: set to a point's name (after-finish, after-analysis, during-write) to make the writing process SIGKILL itself
# there, so tests can prove every state a kill leaves behind is recovered. Never set it otherwise.
TEST_KILL_ENV = "NITPICKER_TEST_KILL_AT"
#: Test-only, with the above: a process to SIGKILL first (the crawl's, when this is its archive writer process:
#: the crawl is killed at that point, as when it wrote on a thread of its own)
TEST_KILL_ALSO_ENV = "NITPICKER_TEST_KILL_ALSO"


def kill_point_for_tests(point: str) -> None:
    """SIGKILL this process at ``point`` when the test-only environment variable names it."""
    if os.environ.get(TEST_KILL_ENV) == point:
        also = os.environ.get(TEST_KILL_ALSO_ENV, "")
        if also.isdigit():
            os.kill(int(also), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


class _Hashing:
    """A file read through: every byte read goes into ``digest`` too."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh, self.digest = fh, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self.digest.update(data)
        return data


def _add_member(tar: tarfile.TarFile, db_path: Path) -> None:
    """archive.db, then its SHA-256 (archive.db.sha256): a reader refuses a database that does not match."""
    info = tarfile.TarInfo(DB_NAME)
    st = db_path.stat()
    info.size = st.st_size
    info.mtime = int(st.st_mtime)
    info.mode = 0o644
    with db_path.open("rb") as fh:
        hashing = _Hashing(fh)
        tar.addfile(info, hashing)  # type: ignore[arg-type]
    digest = hashing.digest.hexdigest().encode() + b"\n"
    check = tarfile.TarInfo(CHECKSUM_NAME)
    check.size, check.mtime, check.mode = len(digest), info.mtime, 0o644
    tar.addfile(check, io.BytesIO(digest))


def _temp_pattern(target: Path) -> re.Pattern[str]:
    # mkstemp's random part never holds a dot, so another target's temp files (".NAME.more.XXXX.tmp") never match
    return re.compile(rf"\.{re.escape(target.name)}\.[^.]+\.tmp")


def remove_leftover_temps(target: Path) -> list[Path]:
    """Delete the temp files a dead writer of ``target`` left; call only while holding ``target``'s stub lock."""
    pattern = _temp_pattern(target)
    removed: list[Path] = []
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


# --- opening ------------------------------------------------------------------------------------------


def archive_kind(path: Path) -> str:
    """``"file"`` or ``"dir"``: what ``path`` is, found by ``stat`` alone (nothing is opened).

    Anything else (a FIFO, a device, a socket) is refused before an ``open`` could block on it; a path
    with a NUL byte or longer than any path can be is refused without touching the file system.
    """
    text = os.fspath(path)
    if "\0" in text:
        raise ArchiveError("the archive path contains a NUL byte")
    if len(text) > MAX_PATH_CHARS:
        raise ArchiveError(f"the archive path is too long ({len(text)} characters)")
    name = _shown(path.name)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise ArchiveError(f"no such archive: {name}") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise ArchiveError("the archive path is too long") from None
        raise ArchiveError(f"cannot read {name}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    raise ArchiveError(
        f"{name} is not a regular file ({_file_type(st.st_mode)}); give a .nitpicker file "
        "or a working directory"
    )


def _shown(name: str, limit: int = 80) -> str:
    # a file name can be 255 bytes; messages stay readable on one line
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _file_type(mode: int) -> str:
    for test, label in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return label
    return "a special file"


def open_regular(path: Path, name: str) -> BinaryIO:
    """``path`` opened for reading, only if it is a regular file; never blocks on a FIFO put in its place.

    O_NONBLOCK makes the open of a FIFO return at once (a checked path can be swapped before the open);
    the type is then checked on the descriptor itself.
    """
    archive_kind(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ArchiveError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ArchiveError(f"{name} is not a regular file ({_file_type(mode)})")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _looks_like_tar_header(fh: IO[bytes]) -> bool:
    fh.seek(0)
    block = fh.read(512)
    return len(block) == 512 and block[257:262] == b"ustar"


def extract_db(archive: Path | BinaryIO, dest_dir: Path, name: str) -> Path:
    """Extract only archive.db from ``archive`` (a path or an open file) into ``dest_dir`` and check it."""
    if isinstance(archive, Path):
        with open_regular(archive, name) as fh:
            return extract_db(fh, dest_dir, name)
    global extraction_count
    archive.seek(0)
    try:
        tar = tarfile.open(fileobj=archive, mode="r:")
    except tarfile.ReadError:
        if _looks_like_tar_header(archive):
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
        # Checked before a byte is written: a sparse member (nitpicker never writes one) or one longer than the
        # file holding it would make a few kilobytes of tar unpack into gigabytes of zeros.
        if member.issparse():
            raise ArchiveError(f"{name} is not a nitpicker archive (archive.db is stored sparse)")
        if member.size > _size_of(archive):
            raise ArchiveError(f"{name} is truncated or corrupt")
        out = dest_dir / DB_NAME
        try:
            src = tar.extractfile(member)
            assert src is not None  # a regular file always has a stream
            digest = hashlib.sha256()
            with out.open("wb") as dst:
                copied = _copy(src, dst, digest)
            if copied != member.size:
                raise ArchiveError(f"{name} is truncated or corrupt")
            recorded = _recorded_checksum(tar)
        except (tarfile.ReadError, EOFError, tarfile.StreamError):
            raise ArchiveError(f"{name} is truncated or corrupt") from None
        if recorded is not None and recorded != digest.hexdigest():
            raise ArchiveError(f"{name} is corrupt (archive.db does not match its checksum)")
    extraction_count += 1
    check_db(out, name, immutable=True)
    return out


def _size_of(fh: BinaryIO) -> int:
    try:
        return os.fstat(fh.fileno()).st_size
    except (OSError, AttributeError, ValueError):  # an in-memory file: its length
        position = fh.tell()
        size = fh.seek(0, os.SEEK_END)
        fh.seek(position)
        return size


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


def _copy(src: IO[bytes], dst: IO[bytes], digest: Any = None) -> int:
    total = 0
    while chunk := src.read(COPY_CHUNK):
        dst.write(chunk)
        if digest is not None:
            digest.update(chunk)
        total += len(chunk)
    return total


def _recorded_checksum(tar: tarfile.TarFile) -> str | None:
    """The SHA-256 written after archive.db (hex), or None for an archive written before checksums."""
    while (member := tar.next()) is not None:
        if member.name == CHECKSUM_NAME and member.isfile() and member.size <= 200:
            stream = tar.extractfile(member)
            return stream.read().decode("ascii", "replace").strip() if stream is not None else None
    return None


def check_db(db_path: Path, name: str, *, immutable: bool) -> int:
    """The archive's format version; ArchiveError when it is not a (readable) nitpicker database."""
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    try:
        conn = sqlite3.connect(f"file:{db_path}?{flags}", uri=True)
        watch_signals(conn)
    except sqlite3.Error:
        raise ArchiveError(f"{name} is not a nitpicker archive (archive.db cannot be opened)") from None
    try:
        row = conn.execute("SELECT value FROM info WHERE key = 'format_version'").fetchone()
        check_schema(conn, name)
    except sqlite3.DatabaseError as exc:
        if "no such table" in str(exc):
            raise ArchiveError(f"{name} is not a nitpicker archive (no info table)") from None
        raise ArchiveError(
            f"{name} is not a nitpicker archive (archive.db is not an SQLite database)"
        ) from None
    finally:
        conn.close()
    return check_version(row[0] if row else None, name)


# The one view nitpicker makes, as SQLite keeps its statement (without IF NOT EXISTS)
_OUR_VIEWS = {
    "commit_resource_referrer": REFERRER_VIEW.replace("CREATE VIEW IF NOT EXISTS ", "CREATE VIEW ", 1)
}


def check_schema(conn: sqlite3.Connection, name: str) -> None:
    """Refuse views and triggers nitpicker does not make: a table replaced by a view (an endless recursive
    one hung every command for as long as it ran) or a trigger a writer would fire."""
    for kind, obj, sql in conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('view', 'trigger')"
    ):
        if kind == "view" and _OUR_VIEWS.get(obj) == sql:
            continue
        raise ArchiveError(f"{name} is not a nitpicker archive ({obj} is a {kind} nitpicker does not make)")


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
# One user's cache: $XDG_CACHE_HOME/nitpicker (~/.cache/nitpicker), created 0700. A root or an entry that
# another user owns or could write to is never read: the archive is unpacked privately instead.


# Values a user may write to mean "off" or "unset": a cache folder of that name is never made (./0/, ./false/).
_SENTINELS = frozenset(
    {"", "0", "1", "false", "true", "null", "none", "nil", "no", "yes", "off", "on", "undefined"}
)
_TRUTHY = frozenset({"1", "true", "yes", "on"})
_FALSY = frozenset({"", "0", "false", "no", "off"})


def _env_word(name: str) -> str:
    return os.environ.get(name, "").strip().lower()


def cache_root() -> Path | None:
    """Where unpacked archives are kept (``NITPICKER_TAR_CACHE_DIR`` overrides); None: no home to keep them in.

    An override that reads like a switch (``0``, ``false``, ``null``…) is ignored with a warning: it names no
    folder, and taking it as one would litter the working directory with ``./0/``.
    """
    override = os.environ.get("NITPICKER_TAR_CACHE_DIR", "")
    if override.strip().lower() in _SENTINELS:
        if override.strip():
            _warn_once(
                f"NITPICKER_TAR_CACHE_DIR={override.strip()} names no folder; using the default cache "
                "(NITPICKER_DISABLE_TAR_CACHE=1 turns the cache off)"
            )
    else:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):  # no HOME and no passwd entry: "~" stays as it is
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "nitpicker"


def cache_disabled() -> bool:
    """``NITPICKER_DISABLE_TAR_CACHE`` set to 1/true/yes/on; 0/false/no/off (or unset) keep the cache."""
    word = _env_word("NITPICKER_DISABLE_TAR_CACHE")
    if word in _TRUTHY:
        return True
    if word not in _FALSY:
        _warn_once(
            f"NITPICKER_DISABLE_TAR_CACHE={word} is neither 1/true/yes/on nor 0/false/no/off; cache kept"
        )
    return False


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)


def cache_key(archive: Path | BinaryIO) -> str:
    """Size + mtime + ctime + hashes of the first and last 64 KiB: cheap, and changes on any rewrite."""
    if isinstance(archive, Path):
        with open_regular(archive, archive.name) as fh:
            return cache_key(fh)
    st = os.fstat(archive.fileno())
    digest = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode())
    archive.seek(0)
    digest.update(hashlib.sha256(archive.read(EDGE_BYTES)).digest())
    archive.seek(max(0, st.st_size - EDGE_BYTES))
    digest.update(hashlib.sha256(archive.read(EDGE_BYTES)).digest())
    return digest.hexdigest()[:32]


def owned_privately(st: os.stat_result) -> bool:
    """Whether only this user can change what ``st`` describes: ours, and not group- or world-writable."""
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


@dataclass
class _Unpacked:
    directory: Path
    refs: int
    private: bool
    held: int | None = None  # the shared lock on a cache entry's marker (a file descriptor) while it is read


@dataclass
class _KeyLock:
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0


_registry: dict[str, _Unpacked] = {}
_registry_lock = threading.Lock()  # held only for the registry's bookkeeping, never while unpacking
_key_locks: dict[str, _KeyLock] = {}


@contextlib.contextmanager
def _unpacking(key: str) -> Iterator[None]:
    """One unpack of the same archive at a time in this process; other archives unpack meanwhile."""
    with _registry_lock:
        slot = _key_locks.setdefault(key, _KeyLock())
        slot.users += 1
    try:
        with slot.lock:
            yield
    finally:
        with _registry_lock:
            slot.users -= 1
            if slot.users == 0:
                del _key_locks[key]


def _reuse(key: str) -> Path | None:
    with _registry_lock:
        entry = _registry.get(key)
        if entry is not None and (entry.directory / DB_NAME).exists():
            entry.refs += 1
            return entry.directory
    return None


def acquire_unpacked(archive: Path, name: str) -> tuple[str, Path]:
    """Unpack (or reuse) ``archive``; returns the registry key and the directory holding archive.db."""
    with open_regular(archive, name) as fh:
        key = cache_key(fh)
        directory = _reuse(key)
        if directory is not None:
            return key, directory
        with _unpacking(key):
            directory = _reuse(key)  # another thread finished the same unpack while this one waited
            if directory is not None:
                return key, directory
            cached = None if cache_disabled() else _cached_unpack(fh, key, name)
            directory = cached[0] if cached else _private_unpack(fh, name)
            with _registry_lock:
                _registry[key] = _Unpacked(directory, 1, cached is None, cached[1] if cached else None)
    return key, directory


def release_unpacked(key: str) -> None:
    with _registry_lock:
        entry = _registry.get(key)
        if entry is None:
            return
        entry.refs -= 1
        if entry.refs <= 0:
            del _registry[key]
            if entry.held is not None:
                os.close(entry.held)
            if entry.private:
                shutil.rmtree(entry.directory, ignore_errors=True)


def _private_unpack(fh: BinaryIO, name: str) -> Path:
    """An unpack only this process uses (mkdtemp is 0700), deleted when its last reader closes."""
    try:
        directory = Path(tempfile.mkdtemp(prefix="nitpicker-unpack-"))
    except OSError as exc:
        raise ArchiveError(f"cannot unpack {name}: {exc.strerror or exc}") from None
    try:
        extract_db(fh, directory, name)
    except OSError as exc:
        shutil.rmtree(directory, ignore_errors=True)
        raise ArchiveError(f"cannot unpack {name}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return directory


def _trusted_root() -> Path | None:
    """The cache root, created 0700 when missing; None when it cannot be made or is not ours alone."""
    root = cache_root()
    if root is None:
        log.debug("no home directory for the unpack cache; unpacking privately")
        return None
    try:
        _make_dirs_0700(root)
        st = os.stat(root)
    except OSError as exc:
        log.debug("unpack cache %s cannot be created (%s); unpacking privately", root, exc.strerror or exc)
        return None
    if not stat.S_ISDIR(st.st_mode) or not owned_privately(st):
        log.debug(
            "unpack cache %s is not a directory owned by this user alone (uid %d, mode %o); "
            "unpacking privately",
            root,
            st.st_uid,
            stat.S_IMODE(st.st_mode),
        )
        return None
    return root


def _make_dirs_0700(path: Path) -> None:
    """``mkdir -p`` where every directory made is 0700 (XDG: ~/.cache too); makedirs' mode is the leaf's only."""
    missing = []
    while not os.path.isdir(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise


def _trusted_entry(entry: Path) -> bool:
    """A finished unpack this user made: our directory, marker and database, none writable by others."""
    try:
        parts = [os.lstat(entry), os.lstat(entry / READY_MARKER), os.lstat(entry / DB_NAME)]
    except OSError:
        return False
    kinds = (stat.S_ISDIR, stat.S_ISREG, stat.S_ISREG)  # lstat: a symlink is none of these
    return all(kind(st.st_mode) and owned_privately(st) for kind, st in zip(kinds, parts, strict=True))


def _cached_unpack(fh: BinaryIO, key: str, name: str) -> tuple[Path, int] | None:
    """The cache's unpack of the archive (made now if needed) and the lock held on it while it is read;
    None: the cache cannot be used."""
    root = _trusted_root()
    if root is None:
        return None
    final = root / key
    if _trusted_entry(final):
        held = _hold(final)
        if held is not None:
            return final, held
    if os.path.lexists(final):
        log.debug("unpack cache entry %s is unfinished or not ours alone; replacing it", key)
        _move_aside(final)
    try:
        work = Path(tempfile.mkdtemp(prefix=f"{key}.tmp-", dir=root))
    except OSError as exc:
        log.debug("unpack cache %s is not writable (%s); unpacking privately", root, exc.strerror or exc)
        return None
    try:
        extract_db(fh, work, name)
        (work / READY_MARKER).write_text("ok\n")
        try:
            os.rename(work, final)
        except OSError:
            # Another process finished the same unpack first; its copy is as good as ours, if it is ours.
            if not _trusted_entry(final):
                raise
            shutil.rmtree(work, ignore_errors=True)
    except ArchiveError:
        shutil.rmtree(work, ignore_errors=True)
        raise
    except OSError as exc:  # a full or read-only cache must not stop the reading
        shutil.rmtree(work, ignore_errors=True)
        log.debug("unpack cache %s failed (%s); unpacking privately", root, exc.strerror or exc)
        return None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    held = _hold(final)
    if held is None:  # pruned by another process in the instant since: read a private copy
        return None
    _prune(root, keep=final)
    return final, held


def file_state(path: Path) -> tuple[int, int, int, int] | None:
    """What changes when ``path`` is written to or replaced (device, inode, size, mtime); None: no such file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def adopt_unpacked(archive: Path, db: Path) -> bool:
    """Move ``db``, the closed database ``archive`` was just written from (unchanged since), into the unpack
    cache as ``archive``'s entry: the next reader of the file (a crawl's summary) finds it unpacked instead of
    unpacking a copy of the same bytes. The entry is what an unpack would make (this user's directory, marker
    and database, keyed by the file as written), so the cache's trust rules hold for it.

    False, ``db`` left where it is, when the cache is off or not this user's alone, holds an entry for the
    file already, or is on another file system (a rename, never a copy: a copy costs what the unpack does).
    """
    if cache_disabled():
        return False
    root = _trusted_root()
    if root is None:
        return False
    try:
        key = cache_key(archive)
        final = root / key
        if os.path.lexists(final):
            return False
        work = Path(tempfile.mkdtemp(prefix=f"{key}.tmp-", dir=root))
    except (OSError, ArchiveError):
        return False
    try:
        os.rename(db, work / DB_NAME)
        (work / READY_MARKER).write_text("ok\n")
        os.rename(work, final)
    except OSError as exc:
        log.debug("unpack cache %s did not take %s (%s)", root, archive.name, exc.strerror or exc)
        shutil.rmtree(work, ignore_errors=True)
        return False
    _prune(root, keep=final)
    return True


# --- pruning the cache ----------------------------------------------------------------------------------
# Each reader holds a shared flock on its entry's marker and touches it (the entry's last use). After each new
# unpack the cache is pruned: entries unused for CACHE_MAX_DAYS, then the least recently used while the cache
# is over its size (NITPICKER_TAR_CACHE_MAX_MB). An entry some process reads is never removed: the pruner
# needs the marker's exclusive lock, and moves the entry aside before deleting it.

CACHE_MAX_DAYS = 14
CACHE_MAX_MB = 2048
LEFTOVER_SECONDS = 24 * 3600  # an unfinished (.tmp-) or moved-aside (.stale-) entry nobody finished


def cache_max_bytes() -> int:
    word = _env_word("NITPICKER_TAR_CACHE_MAX_MB")
    try:
        megabytes = int(word) if word else CACHE_MAX_MB
    except ValueError:
        _warn_once(
            f"NITPICKER_TAR_CACHE_MAX_MB={word} is not a whole number of megabytes; using {CACHE_MAX_MB}"
        )
        megabytes = CACHE_MAX_MB
    return max(0, megabytes) * 1024 * 1024


def _hold(entry: Path) -> int | None:
    """A shared lock on the entry while this process reads it, and the entry's last use noted; None: gone."""
    marker = entry / READY_MARKER
    try:
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        held, now = os.fstat(fd), os.stat(marker, follow_symlinks=False)
        if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
            raise FileNotFoundError(marker)  # pruned while this process waited for the lock
        os.utime(fd)
    except OSError:
        os.close(fd)
        return None
    return fd


def _prune(root: Path, *, keep: Path) -> None:
    import time

    now = time.time()
    try:
        children = list(os.scandir(root))
    except OSError:
        return
    cap, oldest = cache_max_bytes(), now - CACHE_MAX_DAYS * 86400
    kept = _size_on_disk(keep)
    if _nothing_to_evict(children, keep, kept, cap, oldest, now):
        return
    entries: list[tuple[float, int, Path]] = []
    for child in children:
        path = Path(child.path)
        try:
            if ".tmp-" in child.name or ".stale-" in child.name:
                continue  # left over: _nothing_to_evict removed the old ones
            if path == keep or not _trusted_entry(path):
                continue
            used = os.stat(path / READY_MARKER).st_mtime
            size = os.stat(path / DB_NAME).st_blocks * 512
        except OSError:
            continue
        entries.append((used, size, path))
    total = sum(size for _, size, _ in entries) + kept
    for used, size, path in sorted(entries):
        if used >= oldest and total <= cap:
            break
        if _evict(path):
            total -= size
            log.debug("unpack cache: removed %s (last used %.0f days ago)", path.name, (now - used) / 86400)


def _nothing_to_evict(
    children: list[os.DirEntry[str]], keep: Path, kept: int, cap: int, oldest: float, now: float
) -> bool:
    """Whether no entry is due to go, told from two ``stat`` calls an entry, the trust checks left for when
    one may be (a cache of thousands of entries took 130 ms to walk with them, each time a crawl ended).

    Every entry is counted, trusted or not: the trusted ones alone are under the cap when all are, and none is
    unused for too long when none is. Leftovers of killed unpacks past their day are removed on the way.
    """
    total, due = kept, False
    for child in children:
        name = child.name
        try:
            if ".tmp-" in name or ".stale-" in name:
                if now - child.stat(follow_symlinks=False).st_mtime > LEFTOVER_SECONDS:
                    shutil.rmtree(child.path, ignore_errors=True)
                continue
            if child.path == str(keep):
                continue
            used = os.stat(os.path.join(child.path, READY_MARKER), follow_symlinks=False).st_mtime
            total += os.stat(os.path.join(child.path, DB_NAME), follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
        due = due or used < oldest
    return not due and total <= cap


def _size_on_disk(entry: Path) -> int:
    try:
        return os.stat(entry / DB_NAME).st_blocks * 512
    except OSError:
        return 0


def _evict(entry: Path) -> bool:
    try:
        fd = os.open(entry / READY_MARKER, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # some process reads it
        os.close(fd)
        return False
    try:
        _move_aside(entry)
    finally:
        os.close(fd)
    return True


def _move_aside(directory: Path) -> None:
    """An entry that is not trusted is never read: rename it away, then delete what can be deleted."""
    aside = directory.with_name(f"{directory.name}.stale-{uuid.uuid4().hex[:12]}")
    try:
        os.rename(directory, aside)
    except OSError:
        return  # someone else moved it already (or it cannot be moved: the unpack then fails over)
    if os.path.isdir(aside) and not os.path.islink(aside):
        shutil.rmtree(aside, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(aside)
