"""The built-in archive writer: the ``crawl_open_archive`` hook that gives the crawler a ``.nitpicker`` sink."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    CrawlContext,
    CrawlErrorRecord,
    LinkGraph,
    NitpickerError,
    Resource,
    ScrapeResult,
    find_browser,
    hookimpl,
)
from nitpicker_core.archive import ArchiveReader, ArchiveWriter, NothingToResume, crawl_environment, stub_path

if TYPE_CHECKING:
    from nitpicker_core.indexing import Indexer

__all__ = ["FileSink", "crawl_open_archive"]


RECORDS_HELD = 256  # records of URLs not fetched kept for one transaction at most


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class FileSink:
    """One crawl's commit in a ``.nitpicker`` archive: an ``ArchiveSink`` over the core's ArchiveWriter."""

    def __init__(
        self, writer: ArchiveWriter, commit: int, *, base: int | None = None, indexer: Indexer | None = None
    ) -> None:
        self.writer, self._commit = writer, commit
        self._base = base  # the commit an update is made from: its unchanged pages are taken over
        self._indexer = indexer  # the crawl's plugins, which store their checks' findings with the commit
        # A page's sub-resources arrive before the page itself: they are kept here and stored in the page's
        # transaction (one commit per page, not one per resource); any other call stores them first
        self._resources: list[tuple[Resource, str | None]] = []
        # Records of URLs not fetched (an external link under --no-fetch-external: thousands a crawl) are
        # stored together, in one transaction before the next page's or any other call's
        self._records: list[tuple[ScrapeResult, str]] = []

    @property
    def commit(self) -> int:
        return self._commit

    def _flush(self) -> None:
        self._flush_records()
        if self._resources:
            pending, self._resources = self._resources, []
            self.writer.put_resources(self._commit, pending)

    def _flush_records(self) -> None:
        if self._records:
            records, self._records = self._records, []
            self.writer.put_records(self._commit, records)

    def done_urls(self) -> Mapping[str, bool]:
        self._flush()
        return self.writer.commit_urls(self._commit)

    def failed_urls(self) -> Mapping[str, str]:
        self._flush()
        return self.writer.failed_urls(self._commit)

    def pending_urls(self) -> Iterable[str]:
        self._flush()
        return self.writer.pending_urls(self._commit)

    def link_graph(self) -> LinkGraph:
        links: dict[str, list[str]] = {}
        redirects: dict[str, str] = {}
        self._flush()
        # the live working directory, read-only: the .nitpicker file may lag behind it after a kill
        with ArchiveReader(stub_path(self.writer.target)) as reader:
            for page in reader.pages(self._commit, scraped=True):
                if page.get("redirect_dest"):
                    redirects[page["url"]] = page["redirect_dest"]
                links[page["url"]] = [a["href"] for a in reader.anchors(page["url"], self._commit)]
        return links, redirects

    def render_decisions(self) -> Iterable[tuple[str, Mapping[str, Any]]]:
        self._flush()
        return self.writer.render_decisions(self._commit)

    def base_validators(self) -> Mapping[str, Mapping[str, str]]:
        return self.writer.validators(self._base) if self._base is not None else {}

    def put_unchanged(self, url: str) -> list[str] | None:
        if self._base is None:
            return None
        self._flush()
        return self.writer.put_unchanged(self._commit, self._base, url, at=_now())

    def put_page(self, result: ScrapeResult) -> None:
        if not result.scraped:
            self._records.append((result, _now()))
            if len(self._records) >= RECORDS_HELD:
                self._flush_records()
            return
        self._flush_records()
        pending, self._resources = self._resources, []
        self.writer.put_page(self._commit, result, crawled_at=_now(), resources=pending)

    def put_skipped(self, url: str, reason: str, *, is_external: bool) -> None:
        self._flush()
        self.writer.put_skipped(self._commit, url, reason, is_external=is_external)

    def put_resource(self, resource: Resource, referrer_url: str) -> None:
        self._resources.append((resource, referrer_url))

    def put_crawl_error(self, error: CrawlErrorRecord) -> None:
        self._flush()
        self.writer.put_crawl_error(self._commit, error)

    def put_inventory_run(self, digest: str, counts: Mapping[str, int]) -> None:
        self._flush()
        self.writer.add_inventory_run(self._commit, digest, dict(counts))

    def put_sitemaps(self, files: Sequence[Any]) -> None:
        self._flush()
        self.writer.put_sitemaps(self._commit, files)

    def put_robots_files(self, files: Sequence[Any]) -> None:
        self._flush()
        self.writer.put_robots_files(self._commit, files)

    def commit_stats(self) -> Mapping[str, Any]:
        self._flush()
        return self.writer.commit_stats(self._commit)

    def finish(self, status: str, stats: Mapping[str, Any]) -> None:
        """Close the commit, write the archive file, and drop the working directory once it is safe."""
        if self.writer.closed:
            return
        self._flush()
        self.writer.finish_commit(self._commit, status, stats)
        if status == "complete" and self._indexer is not None:
            self._indexer.commit(self.writer, self._commit)
        self.writer.write()
        # the crawl's summary reads the file next: the database just written is its unpacked copy already
        self.writer.close(remove_stub=status == "complete", keep_unpacked=True)

    def abandon(self) -> None:
        self.writer.close(remove_stub=False)  # a no-op when already closed


@hookimpl(trylast=True)
def crawl_open_archive(crawl: CrawlContext, indexer: Indexer) -> FileSink:
    """Open (or continue) the commit ``crawl.mode`` asks for in ``crawl.output``."""
    writer = ArchiveWriter.open(crawl.output, is_external=crawl.is_external)
    try:
        # the tools that made the commit
        environment = crawl_environment(crawl.environment, browser=find_browser())
        latest = writer.latest_commit()
        if crawl.mode == "resume":
            if latest is not None and writer.recovered and writer.commit_status(latest) == "complete":
                # killed after the crawl completed but before its file was written: opening wrote it
                writer.close()
                raise NothingToResume(
                    f"{crawl.output.name}: nothing left to crawl; the crawl was complete "
                    "and its file, left unwritten by a killed run, is written now"
                )
            if latest is None or writer.commit_status(latest) == "complete":
                raise NitpickerError(f"{crawl.output.name} has no interrupted crawl to resume")
            commit = writer.resume_commit(latest, environment)
        elif crawl.mode in ("append", "inventory", "retry-failed"):
            if latest is None:
                raise NitpickerError(f"{crawl.output.name} has no crawl to continue")
            commit = writer.resume_commit(latest, environment)
        else:
            if crawl.mode == "update" and writer.head() is None:
                raise NitpickerError(
                    f"{crawl.output.name} has no complete crawl to update: finish its crawl "
                    f"first with --resume {crawl.output.name}"
                )
            commit = writer.begin_commit(kind=crawl.kind, options=crawl.options, environment=environment)
        # an update is made from the newest complete crawl (HEAD), which becomes its parent
        base = writer.base_of(commit) if crawl.mode == "update" else None
        writer.set_info("roots", crawl.roots)
        writer.set_info("options", crawl.options)
    except BaseException:
        writer.close(remove_stub=False)  # a no-op when already closed
        raise
    return FileSink(writer, commit, base=base, indexer=indexer)
