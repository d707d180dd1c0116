"""Sitemaps on bad input: bad XML, wrong namespaces, gzip bombs, index loops and chains, 100,000 URLs, other hosts.

Each ends as a problem of the sitemap (a finding later), in bounded time and memory; the parser alone, then the
reader over real HTTP on 127.0.0.1 (robots.txt Sitemap: lines pointing anywhere).
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from flask import Flask, Response

from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.robots import RobotsCache
from nitpicker_core.crawler.sitemaps import MAX_DEPTH, SitemapFile, SitemapReader, seed_urls, sitemap_starts
from nitpicker_core.sitemaps.parse import MAX_BYTES, MAX_ENTRIES, SITEMAP_NS, parse_sitemap
from test_server import serve

UA = "Nitpicker/0.1.0"


def _urlset(urls: list[str], namespace: str = SITEMAP_NS) -> bytes:
    items = "".join(
        f"<url><loc>{u}</loc><lastmod>2024-01-0{1 + i % 9}</lastmod></url>" for i, u in enumerate(urls)
    )
    return f'<?xml version="1.0"?><urlset xmlns="{namespace}">{items}</urlset>'.encode()


def _index(urls: list[str]) -> bytes:
    items = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return f'<sitemapindex xmlns="{SITEMAP_NS}">{items}</sitemapindex>'.encode()


def _bomb(size: int) -> bytes:
    """A urlset of one URL and ``size`` bytes of comments, gzipped (a few hundred times smaller), made in steps."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb") as file:
        file.write(f'<urlset xmlns="{SITEMAP_NS}"><url><loc>http://h/a</loc></url>'.encode())
        block = (b"<!--" + b"x" * 1017 + b"-->") * 1024
        for _ in range(size // len(block)):
            file.write(block)
    return out.getvalue()


# -- the parser ----------------------------------------------------------------------------------------------
def test_a_urlset_an_index_and_a_text_sitemap_are_read() -> None:
    parsed = parse_sitemap(_urlset(["http://h/a", " http://h/b "]))
    assert (parsed.kind, parsed.problems) == ("urlset", [])
    assert parsed.entries == [("http://h/a", "2024-01-01"), ("http://h/b", "2024-01-02")]
    index = parse_sitemap(gzip.compress(_index(["http://h/s1.xml"])))
    assert (index.kind, index.entries, index.problems) == ("index", [("http://h/s1.xml", None)], [])
    text = parse_sitemap(b"\xef\xbb\xbfhttp://h/a\r\n\nhttp://h/b")
    assert (text.kind, [u for u, _ in text.entries], text.problems) == (
        "text",
        ["http://h/a", "http://h/b"],
        [],
    )


@pytest.mark.parametrize(
    ("data", "kind", "problem"),
    [
        (
            b"<urlset><url><loc>http://h/a</loc></url><url>",
            "urlset",
            "XML syntax error: Premature end of data",
        ),
        (b"<html><body>Not found</body></html>", "", "not a sitemap: the root element is <html>"),
        (b"", "", "empty file"),
        (b"PK\x03\x04 binary", "", "not a sitemap: a line of the text sitemap is no http(s) URL"),
        (gzip.compress(_urlset(["http://h/a"]))[:-12], "urlset", "broken gzip data: the file ends early"),
    ],
)
def test_broken_files_end_as_an_invalid_problem(data: bytes, kind: str, problem: str) -> None:
    parsed = parse_sitemap(data)
    assert parsed.kind == kind
    assert any(k == "invalid" and d.startswith(problem) for k, d in parsed.problems), parsed.problems


def test_a_wrong_namespace_is_invalid_and_its_urls_are_still_read() -> None:
    parsed = parse_sitemap(_urlset(["http://h/a"], "http://www.google.com/schemas/sitemap/0.84"))
    assert parsed.problems == [
        ("invalid", f"wrong namespace: http://www.google.com/schemas/sitemap/0.84 (expected {SITEMAP_NS})")
    ]
    assert [u for u, _ in parsed.entries] == ["http://h/a"]


def test_xhtml_link_alternates_of_a_url_are_read_and_nothing_else() -> None:
    x = "http://www.w3.org/1999/xhtml"
    data = (
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:xhtml="{x}" xmlns:other="http://example.org/ns">'
        "<url><loc> http://h/en </loc>"
        '<xhtml:link rel="alternate" hreflang="en" href="http://h/en"/>'
        '<xhtml:link rel="Alternate" hreflang=" fr " href=" /fr "/>'
        '<xhtml:link rel="alternate" href="http://h/no-code"/>'  # no hreflang: no alternate
        '<xhtml:link rel="canonical" hreflang="de" href="http://h/de"/>'  # not rel=alternate
        '<link rel="alternate" hreflang="es" href="http://h/es"/>'  # the sitemap namespace
        '<other:link rel="alternate" hreflang="it" href="http://h/it"/>'
        "</url>"
        '<url><xhtml:link rel="alternate" hreflang="ja" href="http://h/ja"/></url>'  # no loc: not kept
        '<url><loc>http://h/de</loc><xhtml:link rel="alternate" hreflang="x-default" href=""/></url>'
        "</urlset>"
    ).encode()
    parsed = parse_sitemap(data, chunk=7)  # elements split across reads
    assert parsed.entries == [("http://h/en", None), ("http://h/de", None)]
    assert parsed.alternates == [
        ("http://h/en", "en", "http://h/en"),
        ("http://h/en", "fr", "/fr"),
        ("http://h/de", "x-default", ""),
    ]
    assert parsed.problems == []
    # as the crawl keeps them: targets resolved against the page and normalised, an empty one left empty
    file = SitemapFile("http://h/sitemap.xml", "given")
    SitemapReader("test", fetchable=lambda url: True)._take(file, parsed)
    assert file.alternates == [
        ("http://h/en", "en", "http://h/en"),
        ("http://h/en", "fr", "http://h/fr"),
        ("http://h/de", "x-default", ""),
    ]


def test_entities_are_never_expanded() -> None:
    laughs = (
        b'<!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY ext SYSTEM "file:///etc/passwd">]>'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&c;</loc></url>'
        b"<url><loc>&ext;</loc></url></urlset>"
    )
    assert parse_sitemap(laughs).entries == []


# Measured in a process of its own: how far the peak resident memory grew while reading (libxml2's included)
_MEASURE = """
import resource, sys, time
from nitpicker_core.sitemaps.parse import parse_sitemap
data = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
parsed = parse_sitemap(data)
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024  # KiB on Linux
print(len(parsed.entries), parsed.problems, grown, time.monotonic() - started)
"""


def _measure(tmp_path, data: bytes) -> tuple[int, str, int, float]:  # type: ignore[no-untyped-def]
    path = tmp_path / "sitemap"
    path.write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    count, rest = done.stdout.split(" ", 1)
    problems, peak, seconds = rest.rsplit(" ", 2)
    return int(count), problems, int(peak), float(seconds)


def test_a_gzip_bomb_stops_at_50_mb_uncompressed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bomb = _bomb(MAX_BYTES * 4)  # 200 MB of zeros, a few hundred KB gzipped
    assert len(bomb) < 1024 * 1024
    count, problems, peak, seconds = _measure(tmp_path, bomb)
    assert count == 1 and "over-limit" in problems and "larger than 52,428,800 bytes" in problems
    assert peak < 100 * 1024 * 1024  # inflated a step at a time, never the whole 200 MB
    assert seconds < 60


def test_100000_urls_keep_the_first_50000_in_bounded_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = _urlset([f"http://h/page/{i}" for i in range(2 * MAX_ENTRIES)])
    count, problems, peak, seconds = _measure(tmp_path, gzip.compress(data))
    assert count == MAX_ENTRIES
    assert "more than 50,000 URLs (the rest was not read)" in problems
    assert peak < 100 * 1024 * 1024  # the entries themselves; the parsed tree is dropped as it is read
    assert seconds < 60


# -- the reader, over HTTP -----------------------------------------------------------------------------------
def _site() -> Flask:
    app = Flask("sitemaps")
    files: dict[str, tuple[bytes, str]] = {}
    app.config["FILES"] = files

    @app.get("/<path:path>")
    def serve_file(path: str) -> Response:
        if path not in files:
            return Response("no", status=404)
        body, content_type = files[path]
        return Response(body, content_type=content_type)

    return app


@pytest.fixture
def sitemap_site() -> Iterator[tuple[dict[str, tuple[bytes, str]], str]]:
    app = _site()
    server, base = serve(app=app)
    yield app.config["FILES"], base
    server.shutdown()


def _reader(base: str, **kw) -> SitemapReader:  # type: ignore[no-untyped-def]
    host = base.split("://", 1)[1]
    return SitemapReader(UA, fetchable=lambda url: url.split("://", 1)[1].startswith(host + "/"), **kw)


def test_robots_sitemap_lines_pointing_anywhere_each_end_as_one_problem(sitemap_site) -> None:  # type: ignore[no-untyped-def]
    files, base = sitemap_site
    files["robots.txt"] = (
        (
            f"User-agent: *\nDisallow:\nSitemap: {base}/a.xml\nSitemap: http://elsewhere.invalid/s.xml\n"
            "Sitemap: file:///etc/passwd\nSitemap: ftp://h/s.xml\nSitemap: /relative.xml\n"
            f"Sitemap: {base}/missing.xml\n"
        ).encode(),
        "text/plain",
    )
    files["a.xml"] = (_urlset([f"{base}/p1", f"{base}/deep/p2", "http://other.invalid/x"]), "application/xml")
    options = CrawlOptions(roots=[f"{base}/"])
    starts = sitemap_starts(options, RobotsCache(UA))
    assert (f"{base}/sitemap.xml", "default") in starts and (f"{base}/a.xml", "robots.txt") in starts
    read = {f.url: f for f in _reader(base).read(starts)}
    assert read[f"{base}/a.xml"].problems == [] and read[f"{base}/a.xml"].scope == f"{base}/"
    assert read["http://elsewhere.invalid/s.xml"].problems == [
        ("unreachable", "not fetched: on another host than the crawl's")
    ]
    assert read["file:///etc/passwd"].problems == [("unreachable", "not fetched: not an http(s) URL")]
    assert read[f"{base}/missing.xml"].problems == [("unreachable", "HTTP 404")]
    assert f"{base}/sitemap.xml" not in read  # the guessed /sitemap.xml is missing: no finding
    # only URLs inside the sitemap's location and the crawl's scope seed the crawl
    assert seed_urls(read.values(), lambda url: url.startswith(base)) == [f"{base}/p1", f"{base}/deep/p2"]


def test_index_loops_and_deep_chains_end_in_bounded_reads(sitemap_site) -> None:  # type: ignore[no-untyped-def]
    files, base = sitemap_site
    files["loop-a.xml"] = (_index([f"{base}/loop-b.xml"]), "application/xml")
    files["loop-b.xml"] = (_index([f"{base}/loop-a.xml", f"{base}/leaf.xml"]), "application/xml")
    files["leaf.xml"] = (_urlset([f"{base}/p"]), "application/xml")
    for level in range(10):
        files[f"chain-{level}.xml"] = (_index([f"{base}/chain-{level + 1}.xml"]), "application/xml")
    read = _reader(base).read([(f"{base}/loop-a.xml", "given"), (f"{base}/chain-0.xml", "given")])
    by_url = {f.url: f for f in read}
    assert by_url[f"{base}/loop-b.xml"].problems == [
        ("invalid", f"index loop: lists {base}/loop-a.xml, itself or an index above it")
    ]
    assert by_url[f"{base}/leaf.xml"].entries == [(f"{base}/p", "2024-01-01")]
    chain = [f for f in read if "chain" in f.url]
    assert len(chain) == MAX_DEPTH + 1
    assert chain[-1].problems == [
        (
            "over-limit",
            f"indexes nested deeper than {MAX_DEPTH} levels: {base}/chain-{MAX_DEPTH + 1}.xml not read",
        )
    ]


def test_a_bomb_over_http_and_a_file_cap_stay_bounded(sitemap_site) -> None:  # type: ignore[no-untyped-def]
    files, base = sitemap_site
    files["bomb.xml.gz"] = (_bomb(MAX_BYTES * 2), "application/gzip")
    files["many.xml"] = (_index([f"{base}/child-{i}.xml" for i in range(20)]), "application/xml")
    for i in range(20):
        files[f"child-{i}.xml"] = (_urlset([f"{base}/c{i}"]), "application/xml")
    started = time.monotonic()
    read = _reader(base, max_files=5).read([(f"{base}/bomb.xml.gz", "given"), (f"{base}/many.xml", "given")])
    assert time.monotonic() - started < 60
    assert read[0].problems == [
        ("over-limit", "larger than 52,428,800 bytes uncompressed (the rest was not read)")
    ]
    assert len(read) == 5
    assert ("over-limit", "17 sitemap(s) not read: the crawl reads at most 5 sitemap files") in read[
        1
    ].problems


def test_a_guessed_sitemap_xml_that_is_a_page_is_no_finding(sitemap_site) -> None:  # type: ignore[no-untyped-def]
    files, base = sitemap_site
    files["sitemap.xml"] = (b"<!DOCTYPE html><html><body>Home</body></html>", "text/html")
    files["given.xml"] = files["sitemap.xml"]
    read = _reader(base).read([(f"{base}/sitemap.xml", "default"), (f"{base}/given.xml", "given")])
    assert [(f.url, f.problems) for f in read] == [
        (f"{base}/given.xml", [("invalid", "not a sitemap: the root element is <html>")])
    ]
