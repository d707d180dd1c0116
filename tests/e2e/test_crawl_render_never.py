"""`crawl --render never`: static pages read from the HTML as sent give the records a render gives.

Three sections of the test site with plain HTML pages (every defect of the crawl checks, every metadata
field, JSON-LD) are crawled twice, rendered and not; each record type extract.js produces is compared
field by field. What only a browser can know (an image's laid-out and natural size) is the one difference.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser

SECTIONS = ("/checks-site/", "/meta/", "/structured-data/")
# the one page of these sections whose JSON-LD a script adds: a page no parser reads as a browser does
SCRIPTED = "/structured-data/scripted"
# page fields that differ between two crawls of the same pages whatever the mode
PER_CRAWL = {"first_seen_at", "last_crawled_at", "order", "headers", "response_ms", "load_ms", "http_version"}
# the state differs by the unrendered mark and the HTML kept (the one sent); words are counted by a regex
# rather than the browser's Intl.Segmenter
# what layout gives an image: a page read without a browser has its markup only
LAID_OUT = ("width", "height", "natural_width", "natural_height")


def _records(crawled, url: str) -> dict:
    from nitpicker_core.archive import open_archive

    with open_archive(crawled.archive) as reader:
        facts = reader.execute(
            "SELECT ps.html_facts FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
            "JOIN url u ON u.id = cp.url_id WHERE u.url = ? AND cp.commit_id = ?",
            (url, reader.resolve(None)),
        )
        stored = json.loads(facts[0][0]) if facts and facts[0][0] else None
        if stored is not None:
            # what JavaScript changed: compared for a rendered page (nothing on these static pages), nothing to
            # compare for one left unrendered
            js = stored.pop("js")
            assert (
                js is None
                if crawled.archive.stem != "always"
                else js["changed"] == {} and js["link_count"] == 0
            )
        return {
            # what the canonical and nofollow checks read instead of the HTML: stored in both modes alike
            "html_facts": stored,
            "headings": reader.headings(url),
            "jsonld": reader.jsonld(url),
            "images": [{k: v for k, v in image.items() if k not in LAID_OUT} for image in reader.images(url)],
        }


@pytest.fixture
def both(crawl, site):
    roots = [site + section for section in SECTIONS]
    args = (*roots, "--exclude", SCRIPTED)
    # no browser can start in the parsing crawl: Playwright is pointed at an empty directory
    never = crawl(
        *args, "--render", "never", name="never", ok=(1,), env={"PLAYWRIGHT_BROWSERS_PATH": "/nonexistent"}
    )
    always = crawl(*args, name="always", ok=(1,))
    return never, always


def test_render_never_stores_what_rendering_stores(both, site):
    never, always = both
    assert set(never.pages) == set(always.pages)
    pages = [url for url, page in always.pages.items() if page.get("html_sha256")]
    assert len(pages) >= 25, sorted(pages)  # every section's pages were read, not only checked
    for url in pages:
        n, a = never.page(url), always.page(url)
        n_extra, a_extra = dict(n["extra"] or {}), a["extra"] or {}
        assert n_extra.pop("unrendered") == "--render never: read from the HTML the server sent"
        assert "unrendered" not in a_extra and n_extra == a_extra, url
        # html_facts: compared by _records, what JavaScript changed apart
        skipped = {"extra", "html_sha256", "hash", "state_id", "word_count", "html_facts"}
        for field in sorted(set(a) - PER_CRAWL - skipped):
            assert n.get(field) == a.get(field), (url, field)  # status, title, every metadata column…
        assert never.anchors[url] == always.anchors[url], url  # href, text, fragment, raw href, line, col
        assert _records(never, url) == _records(always, url), url
    assert {r["url"] for r in never.resources} == {r["url"] for r in always.resources}
    # the sections hold each record type: a comparison of empty lists would prove nothing
    full = never.page(f"{site}/meta/full")
    assert full["canonical"] == f"{site}/meta/full" and full["og_title"] == "OG Title" and full["description"]
    assert len(full["extra"]["hreflang"]) == 3
    assert _records(never, f"{site}/structured-data/jsonld")["jsonld"]
    assert _records(never, f"{site}/checks-site/images")["images"]
    assert all(_records(never, url)["html_facts"] for url in pages)
    assert any(_records(never, url)["headings"] for url in pages)


def test_render_never_from_the_config_file_and_in_pipeline(crawl, site, tmp_path):
    """`[crawl] render = "never"` sets it for crawl; pipeline takes --render too; both count pages apart."""
    import json

    from support import run_cli

    from nitpicker_core.archive import open_archive

    no_browser = {"PLAYWRIGHT_BROWSERS_PATH": "/nonexistent"}
    (tmp_path / "nitpicker.toml").write_text('[crawl]\nrender = "never"\n', encoding="utf-8")
    c = crawl(f"{site}/meta/", "--no-image", env=no_browser)
    result = json.loads(c.result.stdout)
    assert (result["rendered"], result["parsed"], result["pages"]) == (0, 4, 4)
    assert "(0 rendered, 4 read without a browser, 0 skipped" in c.result.stderr
    assert c.page(f"{site}/meta/full")["title"] == "Full Meta Page"
    (tmp_path / "nitpicker.toml").unlink()
    archive = tmp_path / "pipeline.nitpicker"
    done = run_cli(
        "pipeline",
        f"{site}/meta/",
        "--render",
        "never",
        "--no-analyze",
        "-o",
        str(archive),
        cwd=tmp_path,
        env=no_browser,
    )
    assert done.returncode == 0, done.stderr
    with open_archive(archive) as reader:
        commit = reader.commits()[0]
    assert (commit["stats"]["rendered"], commit["stats"]["parsed"], commit["options"]["render"]) == (
        0,
        4,
        "never",
    )


def test_pages_read_on_worker_processes_equal_those_read_on_a_thread(crawl, site):
    """`crawl_parse` on the crawl's worker processes (every page, from the first) stores what it stores when it
    runs on a thread of the crawler; the commit's phases say where each page was read."""
    from nitpicker_core.archive import open_archive
    from nitpicker_core.crawler.phases import EXTRACTION_IN_PROCESSES

    args = (*(site + section for section in SECTIONS), "--exclude", SCRIPTED, "--render", "never")
    workers = crawl(
        *args,
        name="workers",
        ok=(1,),
        env={"NITPICKER_PARSE_PROCESSES": "2", "NITPICKER_PARSE_PROCESSES_AFTER": "0"},
    )
    thread = crawl(*args, name="thread", ok=(1,), env={"NITPICKER_PARSE_PROCESSES": "0"})
    phases, parsed = {}, {}
    for crawled in (workers, thread):
        with open_archive(crawled.archive) as reader:
            stats = reader.commits()[0]["stats"]
        phases[crawled.archive.stem] = stats["phases"]
        parsed[crawled.archive.stem] = stats["parsed"]
    assert parsed["workers"] == parsed["thread"] >= 25
    # A page is read as often as it is fetched: once, unless a redirect lands on it while its own URL is being
    # read (the checks site's /ok is the end of three redirects), a race a loaded machine runs into. The read
    # that comes second is not stored: the pages read are never fewer than the pages stored.
    assert phases["workers"][EXTRACTION_IN_PROCESSES]["count"] >= parsed["workers"]
    assert "extraction" not in phases["workers"]
    assert phases["thread"]["extraction"]["count"] >= parsed["thread"]
    assert EXTRACTION_IN_PROCESSES not in phases["thread"]
    assert set(workers.pages) == set(thread.pages)
    for url, page in thread.pages.items():
        other = workers.page(url)
        assert {k: v for k, v in other.items() if k not in PER_CRAWL} == {
            k: v for k, v in page.items() if k not in PER_CRAWL
        }, url
        assert workers.anchors[url] == thread.anchors[url], url
        if page.get("html_sha256"):
            assert _records(workers, url) == _records(thread, url), url
