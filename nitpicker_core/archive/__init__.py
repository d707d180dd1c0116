"""The archive: one SQLite database in a tar, written by one locked writer, read by many read-only readers."""

from . import aggregates, digest, findings_store, referrers, times
from .files import cache_root
from .lock import live_pid
from .manifest import crawl_environment, tools_line
from .models import FORMAT_VERSION
from .reader import ArchiveReader, locate, open_archive
from .writer import ArchiveWriter, NothingToResume, stub_path

__all__ = [
    "FORMAT_VERSION",
    "ArchiveReader",
    "aggregates",
    "digest",
    "findings_store",
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
