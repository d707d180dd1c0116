"""What identifies a stage's outputs: the archive commit it was made from, and the bytes of a report's files."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from nitpicker_core.archive import open_archive, stub_path

CHUNK = 1 << 20


def archive_commits(archive: Path) -> dict[int, dict[str, str]] | None:
    """Commit id → status and identity, from the archive's working directory (a live or killed crawl) or file.

    The identity is the archive's creation time and the commit's start time: a commit number alone is
    not enough, since an archive made again from scratch has a commit 1 of its own.
    """
    stub = stub_path(archive)
    source = stub if (stub / "archive.db").is_file() else archive if archive.is_file() else None
    if source is None:
        return None
    try:
        with open_archive(source) as reader:
            created = str(reader.info().get("created_at"))
            return {
                c["id"]: {"status": c["status"], "identity": f"{created}/{c['id']}/{c['started_at']}"}
                for c in reader.commits()
            }
    except Exception:  # an unreadable leftover is no reason to stop: the stage simply runs again
        return None


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def report_files(target: Path, result: Any) -> list[Path]:
    """The files a local report wrote: the target itself, or the files it names inside the target directory."""
    if target.is_file():
        return [target]
    names = result if isinstance(result, list) and all(isinstance(n, str) for n in result) else None
    if names is None:  # a destination that does not say what it wrote: every file it left in the directory
        return sorted(p for p in target.iterdir() if p.is_file())
    return [target / name for name in names]


def fingerprint(target: Path, result: Any) -> dict[str, str]:
    """File name → SHA-256 of each file the report wrote, taken when the stage finished."""
    return {path.name: file_hash(path) for path in report_files(target, result)}


def changed_file(target: Path, recorded: dict[str, str]) -> str | None:
    """The name of the first recorded file that is missing or whose bytes are no longer the ones written."""
    for name, sha in sorted(recorded.items()):
        path = target if target.name == name and not target.is_dir() else target / name
        if not path.is_file():
            return f"{name} is missing"
        if file_hash(path) != sha:
            return f"{name} is not the file the report wrote"
    return None
