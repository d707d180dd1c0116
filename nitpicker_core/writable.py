"""Check, before any work starts, that a file or directory can be created where the user asked for it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from nitpicker_core.errors import NitpickerError

PROBE_PREFIX = ".nitpicker-probe-"


class NotWritable(NitpickerError):
    """The destination's directory cannot take new files (permissions, read-only or immutable)."""


def _existing(directory: Path) -> Path:
    """``directory`` or its nearest existing ancestor: what a ``mkdir(parents=True)`` would write into."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return candidate
    return directory


def probe(directory: Path) -> str | None:
    """Why a new file cannot be created in ``directory`` (an OS reason), or None when it can.

    ``os.access`` alone is not enough: root passes it for directories it still cannot write (an
    immutable directory, some network mounts), so a real file is created and removed as well.
    """
    if not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        handle, name = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=directory)
    except OSError as exc:
        return (exc.strerror or type(exc).__name__).lower()
    os.close(handle)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return None


def check_file_destination(path: Path | str, shown: str | None = None) -> None:
    """Raise ``NotWritable`` unless a file at ``path`` can be written (created, or replaced by a rename).

    ``shown`` is how the message names the file (as the user gave it); by default its base name, so the
    one-line message never carries an absolute path.
    """
    path = Path(path)
    label = shown or path.name
    if path.is_dir():
        raise NotWritable(f"cannot write {label}: it is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise NotWritable(f"cannot write {label}: its directory does not exist")
    reason = probe(parent)
    if reason:
        raise NotWritable(f"cannot write {label}: its directory is not writable ({reason})")


def check_directory_destination(path: Path | str, shown: str | None = None) -> None:
    """Raise ``NotWritable`` unless files can be written into directory ``path`` (made with its parents)."""
    path = Path(path)
    label = shown or path.name or str(path)
    if path.exists() and not path.is_dir():
        raise NotWritable(f"cannot write into {label}: it exists and is not a directory")
    base = _existing(path)
    if not base.is_dir():
        raise NotWritable(f"cannot write into {label}: a part of its path is not a directory")
    reason = probe(base)
    if reason:
        where = "it is" if base == path else "its parent directory is"
        raise NotWritable(f"cannot write into {label}: {where} not writable ({reason})")
