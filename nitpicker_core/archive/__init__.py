"""The archive: one SQLite database in a tar, written by one locked writer, read by many read-only readers.

The archive stores; it imports nothing above it (no checks, registries, plugins, hooks, queries or config:
the ``[tool.importlinter]`` contracts in pyproject.toml hold it to that, see docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker_core.layout import stub_path

from . import aggregates, digest, findings_store, linkgraph, referrers, times
from .files import cache_root
from .lock import live_pid
from .manifest import crawl_environment, tools_line
from .models import FORMAT_VERSION
from .reader import ArchiveReader, locate, open_archive

if TYPE_CHECKING:
    from .writer import ArchiveWriter, NothingToResume

_WRITER_NAMES = ("ArchiveWriter", "NothingToResume")


def __getattr__(name: str) -> object:
    # Start-up speed, not a hidden circle: readers (viewer, queries, MCP) never load the writer and its
    # collaborators; `from nitpicker_core.archive import ArchiveWriter` loads them on first use.
    if name in _WRITER_NAMES:
        from . import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'nitpicker_core.archive' has no attribute {name!r}")


__all__ = [
    "FORMAT_VERSION",
    "ArchiveReader",
    "aggregates",
    "digest",
    "findings_store",
    "linkgraph",
    "referrers",
    "times",
    "ArchiveWriter",
    "NothingToResume",
    "cache_root",
    "crawl_environment",
    "live_pid",
    "locate",
    "open_archive",
    "stub_path",
    "tools_line",
]
