"""The archive sink stores a page and the sub-resources seen while it rendered in one transaction."""

from __future__ import annotations

from nitpicker_archive_writer import FileSink

from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.records import CrawlErrorRecord, Resource, ScrapeResult

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
