"""The unpack cache is per user and never trusted when someone else could have written it.

A planted cache entry (a `.ready` marker and an archive.db whose titles say POISONED) in a root another uid
owns, in a world-writable root, or owned by another uid inside our own root, is never read: the real
archive's titles come back. The default root is $XDG_CACHE_HOME/nitpicker (~/.cache/nitpicker), made 0700,
and a cache that cannot be created does not stop reading. Everything runs through the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tarfile
from pathlib import Path

import pytest
from archives import SITE, build_archive, demo_pages
from support import read_only, run_cli

from nitpicker_core.archive import files

OTHER_UID = 65534  # nobody
POISON = "POISONED BY OTHER USER"


def _can_chown() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


needs_chown = pytest.mark.skipif(
    not _can_chown(), reason="planting files owned by another uid needs root (chown)"
)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The real archive, and the archive.db of a look-alike whose every title is POISON."""
    path = tmp_path_factory.mktemp("cache-security")
    real = build_archive(path / "site.nitpicker")
    poisoned_pages = demo_pages()
    for page in poisoned_pages:
        page.metadata["title"] = POISON
    fake = build_archive(path / "fake.nitpicker", poisoned_pages)
    with tarfile.open(fake) as tar:
        tar.extract("archive.db", path / "poison", filter="data")
    return real, path / "poison" / "archive.db"


def plant(root: Path, archive: Path, poison_db: Path, owner: int | None) -> Path:
    """A finished-looking cache entry for ``archive`` under ``root``, its files owned by ``owner``."""
    entry = root / files.cache_key(archive)
    entry.mkdir(parents=True)
    shutil.copyfile(poison_db, entry / files.DB_NAME)
    (entry / files.READY_MARKER).write_text("ok\n")
    if owner is not None:
        for path in (entry, entry / files.DB_NAME, entry / files.READY_MARKER):
            os.chown(path, owner, owner)
    return entry


def titles(archive: Path, env: dict[str, str], cwd: Path) -> list[str]:
    result = run_cli("query", str(archive), "pages", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    return sorted(
        item["title"] for item in json.loads(result.stdout)["items"] if item["url"].startswith(SITE)
    )


EXPECTED = ["About", "Blog", "Home", "Not Found"]


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    # a private TMPDIR shows where a private unpack went, and that it was cleaned up
    return {
        "TMPDIR": str(tmpdir),
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": "",
        "NITPICKER_TAR_CACHE_DIR": "",
        **more,
    }


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (
            st.st_uid,
            st.st_mode,
            path.read_bytes() if path.is_file() else b"",
        )
    return out


@needs_chown
def test_a_root_owned_by_another_uid_is_never_read(tmp_path: Path, sources: tuple[Path, Path]) -> None:
    archive, poison = sources
    root = tmp_path / "shared-cache"
    root.mkdir(mode=0o755)
    plant(root, archive, poison, OTHER_UID)
    os.chown(root, OTHER_UID, OTHER_UID)
    before = _snapshot(root)
    env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED
    assert _snapshot(root) == before  # nothing written into (or moved out of) someone else's cache
    assert list((tmp_path / "tmpdir").iterdir()) == []  # the private unpack is gone


@needs_chown
@pytest.mark.parametrize("entry_owner", [OTHER_UID, None], ids=["entry-of-other-uid", "entry-of-ours"])
def test_a_world_writable_root_is_never_read(tmp_path: Path, sources: tuple[Path, Path], entry_owner) -> None:
    archive, poison = sources
    root = tmp_path / "open-cache"
    root.mkdir()
    root.chmod(0o777)  # like a shared /tmp/nitpicker-cache: anyone could have put the entry there
    plant(root, archive, poison, entry_owner)
    env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED
    assert titles(archive, env, tmp_path) == EXPECTED  # still not trusted the second time
    assert list((tmp_path / "tmpdir").iterdir()) == []


@pytest.mark.parametrize("mode", [0o1777, 0o775], ids=["sticky-like-tmp", "group-writable"])
def test_roots_others_can_write_are_never_read(tmp_path: Path, sources: tuple[Path, Path], mode: int) -> None:
    archive, poison = sources
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(mode)
    plant(root, archive, poison, None)
    env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED


@needs_chown
def test_an_entry_of_another_uid_in_our_root_is_replaced(tmp_path: Path, sources: tuple[Path, Path]) -> None:
    archive, poison = sources
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    entry = plant(root, archive, poison, OTHER_UID)
    env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED
    # the untrusted entry was moved aside and the archive unpacked in its place, by us
    assert [p.name for p in root.iterdir()] == [entry.name]
    assert entry.lstat().st_uid == os.geteuid() and (entry / files.DB_NAME).lstat().st_uid == os.geteuid()
    assert titles(archive, env, tmp_path) == EXPECTED


@pytest.mark.parametrize("swap", ["db-symlink", "group-writable-db", "entry-symlink"])
def test_entries_that_are_links_or_writable_by_others_are_not_read(
    tmp_path: Path, sources: tuple[Path, Path], swap: str
) -> None:
    archive, poison = sources
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    if swap == "entry-symlink":
        elsewhere = plant(tmp_path / "elsewhere", archive, poison, None)
        (root / elsewhere.name).symlink_to(elsewhere)
    else:
        entry = plant(root, archive, poison, None)
        if swap == "db-symlink":
            (entry / files.DB_NAME).unlink()
            (entry / files.DB_NAME).symlink_to(poison)
        else:
            (entry / files.DB_NAME).chmod(0o666)
    env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED


def test_the_default_cache_is_per_user_and_private(tmp_path: Path, sources: tuple[Path, Path]) -> None:
    archive, _ = sources
    env = _env(tmp_path)
    assert titles(archive, env, tmp_path) == EXPECTED
    root = tmp_path / "home" / ".cache" / "nitpicker"
    (entry,) = root.iterdir()
    for path in (tmp_path / "home" / ".cache", root, entry):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert (entry / files.READY_MARKER).is_file()
    # XDG_CACHE_HOME moves it; a relative XDG_CACHE_HOME is ignored (the XDG spec)
    xdg = tmp_path / "xdg"
    assert titles(archive, _env(tmp_path, XDG_CACHE_HOME=str(xdg)), tmp_path) == EXPECTED
    assert (
        stat.S_IMODE((xdg / "nitpicker").stat().st_mode) == 0o700
        and len(list((xdg / "nitpicker").iterdir())) == 1
    )
    assert titles(archive, _env(tmp_path, XDG_CACHE_HOME="relative/dir"), tmp_path) == EXPECTED
    assert not (tmp_path / "relative").exists()
    assert list((tmp_path / "tmpdir").iterdir()) == []  # nothing went to the shared temporary directory


@pytest.mark.parametrize("where", ["root-is-a-file", "root-under-a-file", "home-is-a-file"])
def test_a_cache_that_cannot_be_made_does_not_stop_reading(
    tmp_path: Path, sources: tuple[Path, Path], where: str
) -> None:
    archive, _ = sources
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory should be")
    if where == "home-is-a-file":
        env = _env(tmp_path, HOME=str(blocker))
    else:
        root = blocker if where == "root-is-a-file" else blocker / "cache"
        env = _env(tmp_path, NITPICKER_TAR_CACHE_DIR=str(root))
    assert titles(archive, env, tmp_path) == EXPECTED
    assert blocker.read_text() == "a file where a directory should be"
    assert list((tmp_path / "tmpdir").iterdir()) == []


def test_a_read_only_home_does_not_stop_reading(tmp_path: Path, sources: tuple[Path, Path]) -> None:
    """An existing cache root nobody may write to (immutable even for root): reading unpacks privately."""
    archive, _ = sources
    root = tmp_path / "home" / ".cache" / "nitpicker"
    root.mkdir(parents=True, mode=0o700)
    with read_only(root):
        assert titles(archive, _env(tmp_path), tmp_path) == EXPECTED
        assert list(root.iterdir()) == []
    assert list((tmp_path / "tmpdir").iterdir()) == []  # the private unpack is gone after the command
