"""The built-in archive writer: an ordinary implementation of the scrape events that fills the archive."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from nitpicker_core import (
    CrawlContext,
    CrawlErrorRecord,
    NitpickerError,
    Resource,
    ScrapeResult,
    __version__,
    hookimpl,
)
from nitpicker_core.archive import ArchiveWriter, NothingToResume


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@hookimpl(tryfirst=True)
def crawl_started(crawl: CrawlContext) -> None:
    writer = ArchiveWriter.open(crawl.output)
    try:
        environment = {"nitpicker": __version__, **crawl.environment}
        latest = writer.latest_commit()
        if crawl.mode == "resume":
            if latest is not None and writer.recovered and writer.commit_status(latest) == "complete":
                # killed after the crawl completed but before its file was written: opening wrote it
                writer.close()
                raise NothingToResume(f"{crawl.output.name}: nothing left to crawl; the crawl was complete "
                                      "and its file, left unwritten by a killed run, is written now")
            if latest is None or writer.commit_status(latest) == "complete":
                raise NitpickerError(f"{crawl.output.name} has no interrupted crawl to resume")
            commit = writer.resume_commit(latest)
        elif crawl.mode in ("append", "inventory", "retry-failed"):
            if latest is None:
                raise NitpickerError(f"{crawl.output.name} has no crawl to continue")
            commit = writer.resume_commit(latest)
        else:
            commit = writer.begin_commit(kind=crawl.kind, options=crawl.options, environment=environment)
        writer.set_info("roots", crawl.roots)
        writer.set_info("options", crawl.options)
    except BaseException:
        writer.close(remove_stub=False)  # a no-op when already closed
        raise
    crawl.archive, crawl.commit = writer, commit


@hookimpl
def crawl_page_scraped(result: ScrapeResult, crawl: CrawlContext) -> None:
    crawl.archive.put_page(crawl.commit, result, crawled_at=_now())


@hookimpl
def crawl_page_skipped(url: str, reason: str, crawl: CrawlContext, is_external: bool) -> None:
    # a skipped link to another site is external like any other (it was counted among internal pages)
    crawl.archive.put_skipped(crawl.commit, url, reason, is_external=is_external)


@hookimpl
def crawl_resource_received(resource: Resource, referrer_url: str, crawl: CrawlContext) -> None:
    crawl.archive.put_resource(crawl.commit, resource, referrer_url)


@hookimpl
def crawl_error(url: str, error: CrawlErrorRecord, crawl: CrawlContext) -> None:
    crawl.archive.put_crawl_error(crawl.commit, error)


@hookimpl(trylast=True)
def crawl_finished(crawl: CrawlContext, stats: dict[str, Any]) -> None:
    """Close the commit, write the archive file, and drop the working directory once it is safe."""
    writer = crawl.archive
    if writer is None:
        return
    status = stats.get("status", "complete")
    writer.finish_commit(crawl.commit, status, stats)
    writer.write()
    writer.close(remove_stub=status == "complete")
    crawl.archive = None
