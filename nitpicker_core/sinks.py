"""The archive sink: the typed object a plugin hands the crawler to store one crawl's commit in.

The crawler asks ``crawl_open_archive`` for a sink once, before anything is fetched, keeps it itself and
calls exactly the methods below; no other channel (``crawl.state``, attributes on the crawl context) is
read. The built-in archive writer returns one over a ``.nitpicker`` file; a third party may return its own
(a database, a message queue) and receives the same calls.

Where: with ``--render never`` and ``auto`` the sink lives in the crawler's archive writer process
(``crawl_open_archive`` is called there, ``crawler/writer_process.py``), and every method runs there on one
thread, in the crawler's order: arguments and answers are pickled across. Otherwise
(``NITPICKER_WRITER_PROCESS=0``, a plugin of the crawler's process only) the ``put_*`` methods run on the
crawler's single writer thread, in the order the events happened, and every other method on the crawler's
event-loop thread, never while a ``put_*`` call of the same crawl is queued (the crawler drains the writer
first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nitpicker_core.errors import NitpickerError

if TYPE_CHECKING:
    from nitpicker_core.records import CrawlErrorRecord, Resource, ScrapeResult

__all__ = [
    "ArchiveSink",
    "AutoRenderSink",
    "LinkGraph",
    "RevalidatingSink",
    "SinkRefused",
    "RobotsSink",
    "SitemapSink",
    "auto_render_sink",
    "check_sink",
    "revalidating",
    "robots_sink",
    "sitemap_sink",
]

#: (links, redirects): each stored page's link targets, and each redirect source's destination
LinkGraph = tuple[dict[str, list[str]], dict[str, str]]


class SinkRefused(NitpickerError):
    """No plugin gave the crawler an archive sink, or the one it gave lacks part of the protocol."""


@runtime_checkable
class ArchiveSink(Protocol):
    """Where one crawl's commit goes. Returned by ``crawl_open_archive``; the crawler owns it from then on."""

    @property
    def commit(self) -> int:
        """The commit this crawl writes into (a new one, or the continued one for resume/append/…)."""
        ...

    # -- what the commit already holds (only asked for when the crawl continues a commit) ---------------
    def done_urls(self) -> Mapping[str, bool]:
        """URLs the commit already recorded → whether they were rendered (those are not fetched again)."""
        ...

    def failed_urls(self) -> Mapping[str, str]:
        """URLs the commit recorded as failed → their error kind (``--retry-failed`` retries them)."""
        ...

    def pending_urls(self) -> Iterable[str]:
        """URLs a stopped run had queued but not fetched (``--resume``, ``--append`` go on with them)."""
        ...

    def link_graph(self) -> LinkGraph:
        """The commit's stored links and redirects, so a continued crawl keeps ``--max-depth`` exact."""
        ...

    # -- writes: the crawler's writer thread, in order ----------------------------------------------------
    def put_page(self, result: ScrapeResult) -> None:
        """Store what was learned about one URL (rendered, light-checked, failed or a redirect edge)."""
        ...

    def put_skipped(self, url: str, reason: str, *, is_external: bool) -> None:
        """Store a URL that was not fetched, with the reason (robots, excludes, a limit, a filter)."""
        ...

    def put_resource(self, resource: Resource, referrer_url: str) -> None:
        """Store a sub-resource response seen while ``referrer_url`` rendered."""
        ...

    def put_crawl_error(self, error: CrawlErrorRecord) -> None:
        """Store a URL's hard failure (its kind, message and phase)."""
        ...

    def put_inventory_run(self, digest: str, counts: Mapping[str, int]) -> None:
        """Record a ``--inventory`` run: the list file's sha256 and how many URLs it listed, new and known."""
        ...

    # -- the end ----------------------------------------------------------------------------------------
    def commit_stats(self) -> Mapping[str, Any]:
        """Counts of the whole commit, earlier runs into it included (pages, rendered, skipped, errors…)."""
        ...

    def finish(self, status: str, stats: Mapping[str, Any]) -> None:
        """Close the commit as ``complete`` or ``interrupted`` with the run's stats, and write it out."""
        ...

    def abandon(self) -> None:
        """Nothing of this run is kept: release the sink without writing (a failed start or ingestion)."""
        ...


class RevalidatingSink(ArchiveSink, Protocol):
    """A sink that lets ``crawl --update`` skip unchanged pages (optional: without it, every page renders).

    The crawler sends each page of the base commit (the update's parent) a conditional request built from
    ``base_validators()``; a 304 Not Modified makes it call ``put_unchanged(url)`` instead of rendering.
    """

    def base_validators(self) -> Mapping[str, Mapping[str, str]]:
        """URL → ``{"etag": …, "last_modified": …}`` of the base commit's pages a 304 may stand for.

        Asked once, before anything is fetched; empty when the commit has no base (not an update).
        """
        ...

    def put_unchanged(self, url: str) -> list[str] | None:
        """The commit takes ``url``'s state from the base commit, as it was (writer thread, in order).

        Returns the page's link targets, which the crawl follows as a rendered page's; None when the base
        commit has no state for ``url`` (the crawler then renders it).
        """
        ...


def revalidating(sink: ArchiveSink) -> RevalidatingSink | None:
    """``sink`` when it implements the optional ``RevalidatingSink`` methods, else None."""
    if callable(getattr(sink, "base_validators", None)) and callable(getattr(sink, "put_unchanged", None)):
        return sink  # type: ignore[return-value]  # both optional members checked above
    return None


class SitemapSink(ArchiveSink, Protocol):
    """A sink that stores the crawl's sitemaps with the commit (optional: without it they are only seeds)."""

    def put_sitemaps(self, files: Sequence[Any]) -> None:
        """Store the sitemaps read for this commit: ``SitemapFile``s, each with its entries and problems."""
        ...


def sitemap_sink(sink: ArchiveSink) -> SitemapSink | None:
    """``sink`` when it implements the optional ``put_sitemaps``, else None."""
    if callable(getattr(sink, "put_sitemaps", None)):
        return sink  # type: ignore[return-value]  # the optional member checked above
    return None


class AutoRenderSink(ArchiveSink, Protocol):
    """A sink that tells a continued ``--render auto`` crawl the decisions its commit holds (optional:
    without it, a resumed crawl samples each template again)."""

    def render_decisions(self) -> Iterable[tuple[str, Mapping[str, Any]]]:
        """Each page of the commit stored with a ``--render auto`` decision: (URL, the decision its record
        brought, ``ScrapeResult.render_decision``, parsed: mode, template, rendered, reason and, for a sample,
        the verdict it settled), in crawl order. The commit's own decisions only: not those of another commit
        that stored the same page content. Asked once, before anything is fetched, only when the crawl
        continues a commit."""
        ...


def auto_render_sink(sink: ArchiveSink) -> AutoRenderSink | None:
    """``sink`` when it implements the optional ``render_decisions``, else None."""
    if callable(getattr(sink, "render_decisions", None)):
        return sink  # type: ignore[return-value]  # the optional member checked above
    return None


class RobotsSink(ArchiveSink, Protocol):
    """A sink that stores the robots.txt files a crawl read with the commit (optional)."""

    def put_robots_files(self, files: Sequence[Any]) -> None:
        """Store each origin's robots.txt as read (``crawler_access.RobotsFile``: status, failure, body)."""
        ...


def robots_sink(sink: ArchiveSink) -> RobotsSink | None:
    """``sink`` when it implements the optional ``put_robots_files``, else None."""
    if callable(getattr(sink, "put_robots_files", None)):
        return sink  # type: ignore[return-value]  # the optional member checked above
    return None


_METHODS = (
    "done_urls",
    "failed_urls",
    "pending_urls",
    "link_graph",
    "put_page",
    "put_skipped",
    "put_resource",
    "put_crawl_error",
    "put_inventory_run",
    "commit_stats",
    "finish",
    "abandon",
)


def check_sink(sink: object) -> ArchiveSink:
    """``sink`` as an ArchiveSink, or ``SinkRefused`` saying in one line who failed to provide what."""
    if sink is None:
        raise SinkRefused(
            "no plugin provides an archive to crawl into (is archive-writer disabled? "
            "see `nitpicker plugins`)"
        )
    missing = [name for name in _METHODS if not callable(getattr(sink, name, None))]
    if not hasattr(sink, "commit"):
        missing.insert(0, "commit")
    if missing:
        owner = f"{type(sink).__module__}.{type(sink).__qualname__}"
        raise SinkRefused(f"the archive sink {owner} lacks {', '.join(missing)}")
    return sink  # type: ignore[return-value]  # checked member by member above
