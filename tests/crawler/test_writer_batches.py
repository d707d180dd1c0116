"""The archive sink stores a page and the sub-resources seen while it rendered in one transaction."""

from __future__ import annotations

from pathlib import Path

from nitpicker_archive_writer import FileSink, crawl_open_archive

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.records import Anchor, CrawlContext, CrawlErrorRecord, Resource, ScrapeResult

PAGE = "http://h/"


def _resource(n: int, status: int = 200) -> Resource:
    return Resource(
        url=f"http://h/asset-{n}.css", status=status, content_type="text/css", content_length=10 * n
    )


def test_a_pages_resources_share_its_transaction_and_nothing_is_lost(tmp_path) -> None:
    target = tmp_path / "site.nitpicker"
    writer = ArchiveWriter.open(target)
    sink = FileSink(writer, writer.begin_commit())
    statements: list[str] = []
    # the writer's own connection (this thread's): every BEGIN it sends is one transaction
    writer._conn.set_trace_callback(statements.append)
    for n in range(5):
        sink.put_resource(_resource(n), PAGE)
    sink.put_page(ScrapeResult(url=PAGE, status=200, content_type="text/html", html="<title>h</title>"))
    begins = [s for s in statements if s.upper().startswith("BEGIN")]
    assert len(begins) == 1, statements
    # a resource seen again later in the same page: the later response wins, once
    sink.put_resource(_resource(1, status=404), PAGE)
    sink.put_resource(_resource(1, status=500), PAGE)
    # resources of a render that ends in an error, not a page, are stored all the same
    sink.put_crawl_error(CrawlErrorRecord(url="http://h/x", kind="timeout", message="slow", phase="render"))
    sink.put_resource(_resource(9), "http://h/last")  # the last event before the crawl ends
    writer._conn.set_trace_callback(None)
    sink.finish("complete", {})
    with open_archive(target) as reader:
        stored = {r["url"]: r for r in reader.resources()}
    assert sorted(stored) == sorted(f"http://h/asset-{n}.css" for n in (0, 1, 2, 3, 4, 9))
    assert stored["http://h/asset-1.css"]["status"] == 500
    assert stored["http://h/asset-4.css"]["content_length"] == 40


def test_records_of_urls_not_fetched_share_a_transaction_and_store_as_one_by_one(tmp_path) -> None:
    """An external link's record (not fetched): held, stored with the others before the next page, the rows
    the same as a put_page each gives."""
    links = [f"http://other.test/{n}" for n in range(5)]
    page = ScrapeResult(
        url=PAGE, status=200, content_type="text/html", html="<title>h</title>", anchors=[], images=[]
    )

    def records(n: int) -> list[ScrapeResult]:
        return [ScrapeResult(url=u, is_external=True, is_target=False, scraped=False) for u in links[:n]]

    one_by_one = ArchiveWriter.open(tmp_path / "one.nitpicker")
    c = one_by_one.begin_commit()
    for record in records(3):
        one_by_one.put_page(c, record)
    one_by_one.put_page(c, page)
    for record in records(5)[3:]:
        one_by_one.put_page(c, record)
    one_by_one.finish_commit(c)
    one_by_one.write()
    one_by_one.close()

    target = tmp_path / "held.nitpicker"
    writer = ArchiveWriter.open(target)
    sink = FileSink(writer, writer.begin_commit())
    statements: list[str] = []
    writer._conn.set_trace_callback(statements.append)
    for record in records(3):
        sink.put_page(record)
    assert not [s for s in statements if s.upper().startswith("BEGIN")]  # held
    sink.put_page(page)
    assert len([s for s in statements if s.upper().startswith("BEGIN")]) == 2  # the records', the page's
    for record in records(5)[3:]:
        sink.put_page(record)
    assert sink.commit_stats()["pages"] == 6  # any other call stores what is held first
    writer._conn.set_trace_callback(None)
    sink.finish("complete", {})

    def rows(path):
        with open_archive(path) as reader:
            pages = sorted((p["url"], p["scraped"], p["is_external"], p["order"]) for p in reader.pages(1))
            states = reader.execute("SELECT COUNT(*) FROM page_state")[0][0]
        return pages, states

    assert rows(target) == rows(tmp_path / "one.nitpicker")
    assert len(rows(target)[0]) == 6


def test_a_link_target_not_fetched_is_stored_once_when_the_writer_knows_the_scope(tmp_path) -> None:
    """A page's external link targets are placeholders marked external (the crawl's scope), so the crawler's
    record of each (not fetched) is the state its placeholder has: one state a URL, not two. Without the scope
    every placeholder says internal and each record adds a second state."""
    links = [f"http://other.test/{n}" for n in range(5)]
    page = ScrapeResult(
        url=PAGE,
        status=200,
        content_type="text/html",
        html="<title>h</title>",
        anchors=[Anchor(href=u, text=f"link {n}") for n, u in enumerate(links)],
        images=[],
    )

    def states(opened: bool) -> tuple[int, list[tuple[str, int]]]:
        target = tmp_path / f"{opened}.nitpicker"
        if opened:  # as a crawl opens it: the archive writer's hook, with the crawl's scope
            sink = crawl_open_archive(crawl=CrawlContext(output=target, roots=[PAGE]), indexer=None)
        else:
            writer = ArchiveWriter.open(target)
            sink = FileSink(writer, writer.begin_commit())
        sink.put_page(page)
        for url in links:
            sink.put_page(ScrapeResult(url=url, is_external=True, is_target=False, scraped=False))
        sink.finish("complete", {})
        with open_archive(target) as reader:
            count = reader.execute("SELECT COUNT(*) FROM page_state")[0][0]
            pages = sorted((p["url"], p["is_external"]) for p in reader.pages(1))
        return count, pages

    known, pages = states(True)
    unknown, same_pages = states(False)
    assert pages == same_pages == sorted([(PAGE, 0), *((u, 1) for u in links)])
    assert known == 1 + len(links)
    assert unknown == 1 + 2 * len(links)


def test_the_crawl_context_tells_external_urls_by_its_roots_and_scope() -> None:
    crawl = CrawlContext(
        output=Path("x.nitpicker"),
        roots=["http://h/docs/index.html"],
        options={"scope": ["http://other.test/blog/"]},
    )
    assert not crawl.is_external("http://h/docs/a/b.html")
    assert not crawl.is_external("http://other.test/blog/post")
    assert crawl.is_external("http://h/elsewhere.html")
    assert crawl.is_external("http://other.test/")
    assert crawl.is_external("https://third.test/docs/")
