"""The floor of a Python link crawler: how fast Python alone fetches, parses and follows a site's pages.

No archive, no checks, no records beyond the answers ``docs_site.py`` compares: the pages that answered 200
and the broken link targets with the pages that link to them. What is left is what any Python crawler that
reads pages must do, done the cheapest way this machine offers:

- K threads fetch with urllib3 (one connection pool, no deadline guard, no robots.txt, no redirects kept);
- one process per core parses each HTML page with lxml and returns its ``<a href>`` values, joined to the
  page's URL without their fragments;
- the main thread follows the links under the start URL's origin, each URL once.

``docs_site.py --tools floor,…`` runs it beside the other tools: the gap between this floor and a tool that
stores everything it reads (nitpicker) is the price of the archive, not of the language.

    .venv/bin/python benchmarks/python_floor.py http://127.0.0.1:8000/index.html --parallels 4
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import sys
import time
import urllib.parse
from collections import defaultdict
from typing import Any

import lxml.etree
import urllib3

_PARSER: Any = None


def hrefs(url: str, body: bytes) -> list[str]:
    """The page's ``<a href>`` targets, absolute, without fragments, in document order."""
    global _PARSER
    if _PARSER is None:
        _PARSER = lxml.etree.HTMLParser()
    root = lxml.etree.fromstring(body, _PARSER)
    if root is None:
        return []
    found = []
    for href in root.xpath("//a/@href"):
        with_fragment = urllib.parse.urljoin(url, str(href).strip())
        found.append(urllib.parse.urldefrag(with_fragment)[0])
    return found


def crawl(start: str, parallels: int) -> dict[str, Any]:
    """Every page reachable from ``start`` under its origin: 200 pages, and broken targets → their sources."""
    origin = "{0.scheme}://{0.netloc}/".format(urllib.parse.urlsplit(start))
    http = urllib3.PoolManager(maxsize=parallels, retries=False)

    def fetch(url: str) -> tuple[int, str, bytes]:
        answer = http.request("GET", url, redirect=True)
        return answer.status, answer.headers.get("content-type", ""), answer.data

    sources: dict[str, set[str]] = defaultdict(set)
    pages: list[str] = []
    broken: set[str] = set()
    with (
        cf.ThreadPoolExecutor(parallels) as threads,
        cf.ProcessPoolExecutor(
            os.cpu_count() or 1, mp_context=multiprocessing.get_context("forkserver")
        ) as readers,
    ):
        fetching = {threads.submit(fetch, start): start}
        reading: dict[cf.Future[list[str]], str] = {}
        seen = {start}
        while fetching or reading:
            done, _ = cf.wait([*fetching, *reading], return_when=cf.FIRST_COMPLETED)
            for future in done:
                if future in fetching:
                    url = fetching.pop(future)
                    status, content_type, body = future.result()
                    if status >= 400:
                        broken.add(url)
                    elif status == 200 and content_type.startswith("text/html"):
                        pages.append(url)
                        reading[readers.submit(hrefs, url, body)] = url
                    continue
                page = reading.pop(future)
                for link in future.result():
                    if not link.startswith(origin):
                        continue
                    sources[link].add(page)
                    if link not in seen:
                        seen.add(link)
                        fetching[threads.submit(fetch, link)] = link
    # a target's sources as they are at the end: some were read after the target answered
    return {
        "pages": sorted(pages),
        "broken": {url: sorted(sources[url]) for url in broken},
        "urls": len(seen),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url", help="the start page")
    ap.add_argument("--parallels", type=int, default=4, help="requests at once (default 4)")
    args = ap.parse_args(argv)
    started = time.monotonic()
    found = crawl(args.url, args.parallels)
    found["seconds"] = round(time.monotonic() - started, 3)
    json.dump(found, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
