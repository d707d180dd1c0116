"""A synthetic crawl archive written through the archive API, shaped like a real site for query benchmarks.

Every URL's role is a pure function of its index, so a generated archive is reproducible and every page
can be rebuilt on its own (one batch at a time: nothing of the whole crawl is held in memory). Per 1000
URLs: 50 external pages (a third of them failed fetches with crawl errors of assorted kinds, some 404s),
10 redirects, 10 internal 404s, 3 server errors, 2 internal fetch errors, 5 isolated pages (no inbound
links), 12 pages in isolated clusters of three (linked only from each other), the rest ordinary pages.
Ordinary pages carry ~2 KB of distinct HTML (a few exact duplicates, and five groups of near duplicates that
differ in one word of 280), metadata with duplicated titles,
missing descriptions and mismatched canonical/og fields, security headers on some, shared CSS/JS/image
resources, two images each (some without alt), JSON-LD and technology tags on some, and a fake
analyzer's cells and violations.

With ``commits`` > 1, each later commit is a re-crawl: ~3 % of the pages have a new title, ~1 % of the
URLs are gone and 1 % are new (nothing links to them), so ``diff`` has real work.

Run it on its own: ``python benchmarks/synth_archive.py OUT.nitpicker --pages 10000``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nitpicker_core.archive import ArchiveWriter  # noqa: E402
from nitpicker_core.indexing import index_commit  # noqa: E402
from nitpicker_core.plugins import make_plugin_manager  # noqa: E402

_PM: list[Any] = []


def _plugin_manager() -> Any:
    """The installed plugins, loaded once for every commit this run indexes."""
    if not _PM:
        _PM.append(make_plugin_manager())
    return _PM[0]


from nitpicker_core.html_facts import derive as derive_html_facts  # noqa: E402
from nitpicker_core.records import (  # noqa: E402
    Anchor,
    CrawlErrorRecord,
    Image,
    JsonLd,
    PageError,
    Resource,
    ScrapeResult,
    Tag,
)
from nitpicker_core.types import Cell, Violation  # noqa: E402

ROOT = "https://synth.example"
SECTIONS = ("blog", "docs", "shop", "news", "about", "help", "events", "careers")
BATCH = 1000
ANALYZER = "synth-lint"

# Roles by index modulo 1000 (index 0 is always the home page).
EXTERNAL, REDIRECT, NOT_FOUND, SERVER_ERROR, FETCH_ERROR, ISOLATED, CLUSTER, OK = (
    "external",
    "redirect",
    "404",
    "5xx",
    "fetch-error",
    "isolated",
    "cluster",
    "ok",
)
_BANDS = (
    (50, EXTERNAL),
    (60, REDIRECT),
    (70, NOT_FOUND),
    (73, SERVER_ERROR),
    (75, FETCH_ERROR),
    (80, ISOLATED),
    (92, CLUSTER),
)
CLUSTER_START, CLUSTER_SIZE = 80, 3
EXTERNAL_ERROR_KINDS = ("dns", "timeout", "tls", "connection-refused", "connection-reset", "client-blocked")
RULES = (
    ("no-h1", "warning", "the page has no h1"),
    ("img-alt", "error", "an image has no alt text"),
    ("title-length", "warning", "the title is longer than 60 characters"),
    ("meta-description", "warning", "the page has no meta description"),
    ("heading-order", "info", "heading levels skip a level"),
    ("html-lang", "error", "<html> has no lang"),
)
JSONLD_TYPES = ("Article", "BreadcrumbList", "Product", "Organization", "FAQPage", "WebPage", "Event")
WORDS = (
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "labore",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "commodo",
)


def role(i: int) -> str:
    if i == 0:
        return OK
    h = i % 1000
    for limit, name in _BANDS:
        if h < limit:
            return name
    return OK


def page_url(i: int) -> str:
    if role(i) == EXTERNAL:
        return f"https://ext{i % 37}.example.org/ref/{i}"
    if i == 0:
        return ROOT + "/"
    return f"{ROOT}/{SECTIONS[i % len(SECTIONS)]}/page-{i}"


def is_external(url: str) -> bool:
    return not url.startswith(ROOT + "/")


@dataclass
class Pools:
    """Shared material: paragraphs of text, the resource and image URLs, and the link-target lists."""

    n: int
    paragraphs: list[str] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    linkable: list[int] = field(default_factory=list)
    external: list[int] = field(default_factory=list)

    @classmethod
    def build(cls, n: int) -> Pools:
        rng = random.Random(11)
        pools = cls(n)
        pools.paragraphs = [
            "<p>" + " ".join(rng.choice(WORDS) for _ in range(70)) + "</p>" for _ in range(3000)
        ]
        for k in range(24):
            pools.resources.append(_resource(f"{ROOT}/static/css/style-{k}.css", "text/css", k))
        for k in range(36):
            cdn = k % 3 == 0
            url = f"https://cdn.vendor.example/js/lib-{k}.js" if cdn else f"{ROOT}/static/js/app-{k}.js"
            pools.resources.append(_resource(url, "application/javascript", k, external=cdn))
        for k in range(max(60, n // 200)):
            pools.resources.append(_resource(f"{ROOT}/static/img/banner-{k}.webp", "image/webp", k))
        pools.images = [f"{ROOT}/media/photo-{k}.jpg" for k in range(max(200, n // 50))]
        for i in range(n):
            r = role(i)
            if r == EXTERNAL:
                pools.external.append(i)
            elif r not in (ISOLATED, CLUSTER):
                pools.linkable.append(i)
        return pools


def _resource(url: str, ctype: str, k: int, external: bool = False) -> Resource:
    status = 404 if k % 23 == 5 else 200
    headers = {
        "content-type": ctype,
        "cache-control": "max-age=86400",
        "date": "Mon, 01 Jan 2024 00:00:00 GMT",
    }
    if k % 4 == 0:
        headers["content-encoding"] = "br"
    return Resource(
        url=url,
        status=status,
        status_text="OK" if status == 200 else "Not Found",
        content_type=ctype,
        content_length=1000 + 37 * k,
        compression=headers.get("content-encoding", ""),
        cdn="cloudfront" if external else "",
        headers=headers,
        is_external=external,
    )


def _title(i: int) -> str:
    if i % 29 == 3:
        return f"Shared title {i % 53}"  # duplicated titles, in groups of ~60 (100k pages)
    if i % 211 == 0:
        return f"A very long title for page {i} that keeps going well beyond what a search result shows"
    return f"Page {i} | {SECTIONS[i % len(SECTIONS)].title()} | Synth"


def _metadata(i: int, url: str) -> dict[str, Any]:
    title = _title(i)
    meta: dict[str, Any] = {
        "title": title,
        "charset": "utf-8",
        "viewport": "width=device-width",
        "og_type": "article",
        "og_site_name": "Synth",
        "twitter_card": "summary",
    }
    if i % 12 != 1:
        meta["description"] = (
            f"Shared description {i % 41}" if i % 31 == 2 else f"About page {i} of the site."
        )
    if i % 50 != 4:
        meta["lang"] = "de" if i % 17 == 0 else "en"
    meta["canonical"] = f"{ROOT}/canonical/{i % 100}" if i % 47 == 6 else url
    meta["og_url"] = url + "?ref=og" if i % 43 == 8 else url
    meta["og_title"] = f"Other title {i}" if i % 37 == 9 else title
    meta["og_image"] = f"{ROOT}/media/photo-{i % 200}.jpg"
    if i % 7 == 0:
        meta["generator"] = "WordPress 6.4"
    if i % 97 == 5:
        meta["robots"] = "noindex"
        meta["noindex"] = True
    return meta


def _headers(i: int) -> dict[str, str]:
    headers = {
        "content-type": "text/html; charset=utf-8",
        "server": "nginx/1.25",
        "cache-control": "max-age=600",
        "date": "Mon, 01 Jan 2024 00:00:00 GMT",
        "x-request-id": f"r{i}",
    }
    if i % 3 == 0:
        headers["content-security-policy"] = "default-src 'self'; img-src 'self' data:"
    if i % 2 == 0:
        headers["strict-transport-security"] = "max-age=31536000; includeSubDomains"
    if i % 5 == 0:
        headers["x-frame-options"] = "DENY"
    return headers


def _html(i: int, meta: dict[str, Any], rng: random.Random, pools: Pools) -> str:
    if i % 101 == 50:  # exact duplicates: seven groups of pages with the very same document
        body = "".join(pools.paragraphs[(i % 7) * 4 + k] for k in range(4))
        return f"<html><head><title>Duplicate</title></head><body><main>{body}</main></body></html>"
    if (
        i % 101 == 51
    ):  # near duplicates: five groups of the same four paragraphs, one word of each page its own
        paragraphs = [pools.paragraphs[100 + (i % 5) * 4 + k] for k in range(4)]
        words = paragraphs[3][3:-4].split()
        words[(i // 101) % len(words)] = f"page{i}"
        body = "".join(paragraphs[:3]) + "<p>" + " ".join(words) + "</p>"
    else:
        body = "".join(rng.choice(pools.paragraphs) for _ in range(4))
    return (
        f'<html lang="{meta.get("lang", "")}"><head><title>{meta["title"]}</title></head>'
        f"<body><h1>Page {i}</h1><main>{body}</main><footer>#{i}</footer></body></html>"
    )


def _anchors(i: int, count: int, rng: random.Random, pools: Pools) -> list[Anchor]:
    r = role(i)
    anchors = []
    if r == CLUSTER:  # an island: links only among its own few pages, and nothing links in
        base = i - (i % 1000 - CLUSTER_START) % CLUSTER_SIZE
        mates = [page_url(j) for j in range(base, base + CLUSTER_SIZE) if j != i]
        return [Anchor(mates[k % len(mates)], f"cluster link {k}") for k in range(count)]
    for k in range(count - len(anchors)):
        pick = rng.random()
        if pick < 0.08 and pools.external:
            target = page_url(rng.choice(pools.external))
        elif pick < 0.30:  # neighbours: the same stretch of the site
            target = page_url(pools.linkable[(i // 2 + rng.randrange(-50, 50)) % len(pools.linkable)])
        else:
            target = page_url(rng.choice(pools.linkable))
        frag = f"section-{k}" if k % 11 == 3 else ""
        anchors.append(Anchor(target, f"link {k} to {target.rsplit('/', 1)[-1]}", frag))
    return anchors


def _images(i: int, rng: random.Random, pools: Pools) -> list[Image]:
    out = []
    for k in range(2):
        src = rng.choice(pools.images)
        alt = None if (i + k) % 9 == 0 else ("" if (i + k) % 13 == 0 else f"photo {k} of page {i}")
        out.append(
            Image(
                src=src,
                current_src=src,
                alt=alt,
                width=640.0,
                height=480.0,
                natural_width=1280,
                natural_height=960,
                is_lazy=k == 1,
                viewport_width=1280,
                markup=f'<img src="{src}" alt="{alt or ""}">',
            )
        )
    return out


def _jsonld(i: int) -> list[JsonLd]:
    if i % 4 != 0:
        return []
    if i % 400 == 0:
        return [JsonLd(raw='{"@context": "https://schema.org", "@type": ', error="Expecting value")]
    kinds = [JSONLD_TYPES[i % len(JSONLD_TYPES)]]
    if i % 3 == 0:
        kinds.append("BreadcrumbList")
    out = []
    for kind in kinds:
        parsed = {"@context": "https://schema.org", "@type": kind, "name": f"Thing {i}"}
        out.append(JsonLd(raw=json.dumps(parsed), parsed=parsed, types=[kind]))
    return out


def _tags(i: int) -> list[Tag]:
    tags = [Tag("nginx", "server", version="1.25")]
    if i % 5 < 3:
        tags.append(Tag("Google Tag Manager", "tag-manager", external_id=f"GTM-SYN{i % 3}"))
    if i % 2 == 0:
        tags.append(Tag("Google Analytics", "analytics", external_id="G-SYNTH01", version="GA4"))
    if i % 7 == 0:
        tags.append(Tag("WordPress", "generator", version="6.4"))
    if i % 11 == 0:
        tags.append(Tag("Cloudflare", "cdn"))
    return tags


@dataclass
class Built:
    """One URL as the crawler would hand it over: the page, the resources it pulled, a crawl error."""

    page: ScrapeResult
    resources: list[Resource] = field(default_factory=list)
    error: CrawlErrorRecord | None = None


def build(i: int, anchors_each: int, pools: Pools, generation: int = 1) -> Built:
    built = _build(i, anchors_each, pools, generation)
    page = built.page
    if page.html is not None or page.source is not None:  # as the scrape finds them (nitpicker_scrape)
        page.html_facts = derive_html_facts(page.url, page.html, page.source)
    return built


def _build(i: int, anchors_each: int, pools: Pools, generation: int = 1) -> Built:
    rng = random.Random(i * 7919 + 17)
    url = page_url(i)
    r = role(i)
    if r == EXTERNAL:
        if i % 3 == 0:
            kind = EXTERNAL_ERROR_KINDS[(i // 3) % len(EXTERNAL_ERROR_KINDS)]
            page = ScrapeResult(
                url=url,
                is_external=True,
                is_target=False,
                scraped=True,
                extra={"error_kind": kind, "permanent": kind != "timeout"},
            )
            return Built(page, error=CrawlErrorRecord(url, kind, f"{kind} while fetching {url}", "preflight"))
        status = 404 if i % 3 == 1 and i % 2 == 0 else 200
        return Built(
            ScrapeResult(
                url=url,
                status=status,
                status_text="OK" if status == 200 else "Not Found",
                content_type="text/html",
                headers={"server": "ext"},
                is_external=True,
                is_target=False,
                anchors=[],
                images=[],
            )
        )
    if r == REDIRECT:
        j = pools.linkable[(i * 31) % len(pools.linkable)]
        dest = page_url(j) if role(j) == OK else ROOT + "/"
        return Built(
            ScrapeResult(
                url=url,
                status=301,
                status_text="Moved Permanently",
                redirect_chain=[dest],
                headers={"location": dest},
                is_target=False,
                anchors=[],
                images=[],
            )
        )
    if r == FETCH_ERROR:
        page = ScrapeResult(url=url, extra={"error_kind": "timeout", "permanent": False})
        return Built(
            page, error=CrawlErrorRecord(url, "timeout", "navigation timed out after 30 s", "render")
        )
    if r in (NOT_FOUND, SERVER_ERROR):
        status = 404 if r == NOT_FOUND else (500 if i % 2 else 503)
        html = f"<html><head><title>Error {status}</title></head><body><h1>{status}</h1></body></html>"
        return Built(
            ScrapeResult(
                url=url,
                status=status,
                status_text="Not Found" if status == 404 else "Error",
                content_type="text/html",
                content_length=len(html),
                headers=_headers(i),
                metadata={"title": f"Error {status}"},
                html=html,
                anchors=[],
                images=[],
            )
        )
    meta = _metadata(i, url)
    if generation > 1 and i % 31 == generation:  # a re-crawl finds ~3 % of the pages edited
        meta["title"] += f" (edit {generation})"
    html = _html(i, meta, rng, pools)
    used = [pools.resources[(i + k * 7) % 24] for k in range(2)]
    used += [pools.resources[24 + (i * 3 + k * 5) % 36] for k in range(2)]
    used.append(pools.resources[60 + i % (len(pools.resources) - 60)])
    page = ScrapeResult(
        url=url,
        status=200,
        status_text="OK",
        content_type="text/html; charset=utf-8",
        content_length=len(html),
        headers=_headers(i),
        metadata=meta,
        html=html,
        anchors=_anchors(i, anchors_each, rng, pools),
        images=_images(i, rng, pools),
        resources=[res.url for res in used],
        jsonld=_jsonld(i),
        tags=_tags(i),
        errors=[PageError("images", "image capture timed out")] if i % 250 == 7 else [],
    )
    return Built(page, resources=used)


def _analysis(i: int, url: str) -> tuple[str, dict[str, Any], list[Violation]]:
    found = []
    for k, (rule, severity, message) in enumerate(RULES):
        if (i + k * 13) % (5 + 2 * k) == 0:
            found.append(Violation(rule, message, severity, location=f"body > main > p:nth-child({k + 1})"))
    cells = {"words": 280 + i % 40, "headings": Cell(1 if i % 9 else 0, "h1 count")}
    return url, cells, found


def present(i: int, n: int, generation: int) -> bool:
    """Whether URL ``i`` is in the crawl of ``generation``: a re-crawl loses ~1 % and gains 1 % new URLs."""
    if generation == 1:
        return i < n
    return i < n + n // 100 and i % 97 != generation


def batches(
    n: int, anchors_per_page: int, pools: Pools, generation: int = 1
) -> Iterator[list[tuple[int, Built]]]:
    rendered = sum(1 for i in range(n) if role(i) in (OK, ISOLATED, CLUSTER))
    each, extra = divmod(anchors_per_page * n, max(rendered, 1))
    seen = 0
    last = n + n // 100 if generation > 1 else n
    for start in range(0, last, BATCH):
        out = []
        for i in range(start, min(start + BATCH, last)):
            count = 0
            if role(i) in (OK, ISOLATED, CLUSTER):
                count = each + (1 if seen < extra else 0)
                seen += 1
            if present(i, n, generation):
                out.append((i, build(i, count, pools, generation)))
        if out:
            yield out


def generate(
    target: Path, pages: int, anchors_per_page: int = 30, commits: int = 1, log: Any = print
) -> dict[str, Any]:
    """Write an archive of ``pages`` URLs to ``target`` in ``commits`` complete crawls; returns timings, counts.

    Every commit is a full crawl (pages, resources, crawl errors, analysis); the later ones change a few
    percent of the site, so unchanged pages share their stored states with the first commit.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    t0 = time.perf_counter()
    pools = Pools.build(pages)
    stats: dict[str, Any] = {
        "pages": pages,
        "commits": commits,
        "anchors": 0,
        "aggregate_seconds": [],
        "html_bytes": 0,
        "crawl_errors": 0,
        "violations": 0,
        "resource_refs": 0,
        "commit_seconds": [],
    }
    timing = {"build": 0.0, "put_pages": 0.0, "put_resources": 0.0, "put_crawl_error": 0.0, "analysis": 0.0}
    w = ArchiveWriter.open(target, is_external=is_external)
    try:
        w.set_info("roots", [ROOT + "/"])
        w.set_info("options", {"synthetic": True})
        w.set_info("synthetic", {"pages": pages, "anchors_per_page": anchors_per_page, "commits": commits})
        for generation in range(1, commits + 1):
            started = time.perf_counter()
            _commit(w, generation, pages, anchors_per_page, pools, stats, timing, log)
            stats["commit_seconds"].append(time.perf_counter() - started)
        t = time.perf_counter()
        w.write()
        timing["write"] = time.perf_counter() - t
    finally:
        w.close(remove_stub=True)
    stats["seconds"] = time.perf_counter() - t0
    stats["archive_bytes"] = target.stat().st_size
    stats["timing"] = timing
    return stats


def _commit(
    w: ArchiveWriter,
    generation: int,
    pages: int,
    anchors_per_page: int,
    pools: Pools,
    stats: dict[str, Any],
    timing: dict[str, float],
    log: Any,
) -> None:
    t0 = time.perf_counter()
    c = w.begin_commit("crawl", options={"synthetic": True, "pages": pages})
    w.begin_analysis(c, ANALYZER, "1.0", {"strict": False})
    first = generation == 1
    it = batches(pages, anchors_per_page, pools, generation)
    written = 0
    while True:
        t = time.perf_counter()
        batch = next(it, None)
        timing["build"] += time.perf_counter() - t
        if batch is None:
            break
        t = time.perf_counter()
        w.put_pages(c, [b.page for _, b in batch])
        timing["put_pages"] += time.perf_counter() - t
        refs = [(res, b.page.url) for _, b in batch for res in b.resources]
        t = time.perf_counter()
        if refs:
            w.put_resources(c, refs)
        timing["put_resources"] += time.perf_counter() - t
        t = time.perf_counter()
        errors = [b.error for _, b in batch if b.error is not None]
        for error in errors:
            w.put_crawl_error(c, error)
        timing["put_crawl_error"] += time.perf_counter() - t
        t = time.perf_counter()
        items = [_analysis(i, b.page.url) for i, b in batch if b.page.html and b.page.status == 200]
        w.put_analyses(c, ANALYZER, items)
        timing["analysis"] += time.perf_counter() - t
        if first:
            stats["anchors"] += sum(len(b.page.anchors or ()) for _, b in batch)
            stats["html_bytes"] += sum(len(b.page.html or "") for _, b in batch)
            stats["resource_refs"] += len(refs)
            stats["crawl_errors"] += len(errors)
            stats["violations"] += sum(len(v) for _, _, v in items)
        before, written = written, written + len(batch)
        if written // (BATCH * 10) > before // (BATCH * 10):
            log(f"  commit {generation}: {written:,} URLs written ({time.perf_counter() - t0:.0f} s)")
    # Resources nothing refers to (an orphaned stylesheet, a stale script).
    w.put_resources(
        c, [(_resource(f"{ROOT}/static/old/unused-{k}.css", "text/css", k), None) for k in range(8)]
    )
    w.add_inventory_run(
        c, hashlib.sha256(f"synthetic-inventory-{generation}".encode()).hexdigest(), {"urls": written}
    )
    w.finish_analysis(c, ANALYZER)
    t = time.perf_counter()
    w.finish_commit(c, "complete", {"pages": written, "errors_by_kind": {}})
    index_commit(w, c, _plugin_manager())  # the crawl checks' findings, as the crawl stores them
    timing["finish_commit"] = timing.get("finish_commit", 0.0) + time.perf_counter() - t
    # Completing a commit builds its link aggregates (edges, components, broken/external links).
    stats["aggregate_seconds"].append(w.aggregate_seconds.get(c, 0.0))
    log(
        f"  commit {generation}: {written:,} URLs in {time.perf_counter() - t0:.1f} s "
        f"(aggregates {stats['aggregate_seconds'][-1]:.1f} s)"
    )


def report(stats: dict[str, Any]) -> str:
    t = stats["timing"]
    secs = stats["seconds"]
    first = stats["commit_seconds"][0]
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in t.items())
    per_commit = ", ".join(f"{x:.1f} s" for x in stats["commit_seconds"])
    per_commit += "; aggregates built at commit finish: " + ", ".join(
        f"{x:.1f} s" for x in stats.get("aggregate_seconds", [])
    )
    return (
        f"generated {stats['commits']} commit(s) ({per_commit}); the first has {stats['pages']:,} URLs, "
        f"{stats['anchors']:,} anchors, {stats['resource_refs']:,} resource "
        f"references, {stats['violations']:,} violations, {stats['crawl_errors']:,} crawl errors, "
        f"{stats['html_bytes'] / 1e6:.0f} MB HTML; {secs:.1f} s in all (first commit "
        f"{stats['pages'] / first:,.0f} URLs/s, {stats['anchors'] / first:,.0f} anchors/s); archive {stats['archive_bytes'] / 1e6:.0f} MB\n  ({parts})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--anchors-per-page", type=int, default=30)
    parser.add_argument(
        "--commits", type=int, default=2, help="crawls to store (the later ones change a little)"
    )
    args = parser.parse_args()
    print(report(generate(args.output, args.pages, args.anchors_per_page, args.commits)))


if __name__ == "__main__":
    main()
