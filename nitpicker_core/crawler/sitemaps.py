"""Finding and reading a crawl's sitemaps, under deadlines and the protocol's limits, through nitpicker's own HTTP rules."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import requests

from nitpicker_core.crawler.deadline import DeadlineAdapter, Exchange, Guard
from nitpicker_core.crawler.errors import classify
from nitpicker_core.crawler.login import CookieSession
from nitpicker_core.crawler.options import CrawlOptions
from nitpicker_core.crawler.robots import RobotsCache, origin_of
from nitpicker_core.sitemaps.parse import Parsed, SitemapParser
from nitpicker_core.urls import normalize, split_credentials

__all__ = [
    "MAX_DEPTH",
    "MAX_FILES",
    "SitemapFile",
    "SitemapReader",
    "location_scope",
    "seed_urls",
    "sitemap_starts",
]

MAX_FILES = 500  # sitemap files read per crawl: an index of 50,000 children is not a reason to fetch them all
MAX_DEPTH = 3  # an index may list indexes (the protocol says it should not) this many levels down at most
FETCH_SECONDS = 30.0  # one sitemap file, connect to last byte
# URLs kept from every sitemap of the crawl together, hreflang alternates counted (memory and storage stay bounded)
MAX_URLS = 1_000_000
TOTAL_SECONDS = 300.0  # every sitemap of the crawl; the crawl goes on with what was read by then
_CHUNK = 64 * 1024


def location_scope(url: str) -> str:
    """What a sitemap at ``url`` may list (sitemaps.org "location"): URLs under its directory, same host."""
    parts = urlsplit(url)
    directory = parts.path.rsplit("/", 1)[0] + "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), directory, "", ""))


@dataclass
class SitemapFile:
    """One sitemap as read: where it came from, what it listed and what was wrong with it.

    ``source`` is "given" (``--sitemap``), "robots.txt", "default" (``/sitemap.xml``) or "index" (listed
    by ``parent``). ``scope`` is the URL prefix its URLs must start with. ``problems`` are ``(kind,
    detail)`` pairs, kind "unreachable", "invalid" or "over-limit". ``entries`` are ``(URL, lastmod)``,
    URLs normalised as the crawl's; for an index, the sitemaps it lists. ``alternates`` are the ``(URL,
    hreflang, href)`` of the ``<xhtml:link rel="alternate" hreflang>`` of its ``<url>``s: the URL normalised
    as the entry's, the href resolved against it and normalised when it is http(s), else as written.
    """

    url: str
    source: str
    parent: str | None = None
    scope: str = ""
    kind: str = ""
    status: int | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
    entries: list[tuple[str, str | None]] = field(default_factory=list)
    alternates: list[tuple[str, str, str]] = field(default_factory=list)


class SitemapReader:
    """Reads sitemaps breadth first from the given ones, following indexes, bounded in files, depth and time.

    ``fetchable(url)`` says whether a sitemap may be fetched (the crawl's own hosts); one that may not is
    recorded as unreachable, unfetched. ``credentials(url)`` and ``headers(url)`` give what the crawl
    sends that URL (in scope only); ``cookies(url)`` a logged-in crawl's ``Cookie`` header, on every hop. A missing ``/sitemap.xml`` (a 4xx, or a 200 that is no sitemap at all,
    such as the home page a site answers every unknown URL with) is no finding: it is only a guess.
    """

    def __init__(
        self,
        user_agent: str,
        *,
        fetchable: Callable[[str], bool],
        credentials: Callable[[str], tuple[str, str] | None] = lambda url: None,
        headers: Callable[[str], dict[str, str] | None] = lambda url: None,
        cookies: Callable[[str], str | None] | None = None,
        disable_queries: bool = False,
        timeout: float = FETCH_SECONDS,
        total: float = TOTAL_SECONDS,
        max_files: int = MAX_FILES,
        session: requests.Session | None = None,
    ) -> None:
        self.user_agent = user_agent
        self._fetchable, self._credentials, self._headers = fetchable, credentials, headers
        self._disable_queries = disable_queries
        self.timeout, self.total, self.max_files = timeout, total, max_files
        self._session = session or CookieSession()
        if cookies is not None:
            if not isinstance(self._session, CookieSession):
                raise TypeError("logged-in sitemaps need the reader's own session")
            self._session.use_login(cookies)
        self._session.max_redirects = 10
        DeadlineAdapter.mount_on(self._session)
        self._guard = Guard()

    def abort(self) -> None:
        """Cut a sitemap fetch in flight; later ones are not made (the crawl is stopping)."""
        self._guard.abort()

    def read(self, starts: Iterable[tuple[str, str]]) -> list[SitemapFile]:
        """Every sitemap reached from ``starts`` (``(url, source)`` pairs), each once, in reading order."""
        deadline = time.monotonic() + self.total
        queue: deque[tuple[SitemapFile, int, tuple[str, ...]]] = deque()
        seen: set[str] = set()
        for url, source in starts:
            key = self._key(url)
            if key not in seen:
                seen.add(key)
                # one named by robots.txt may list any URL of that host (sitemaps.org, cross-submission)
                scope = origin_of(key) + "/" if source == "robots.txt" else location_scope(key)
                queue.append((SitemapFile(key, source, scope=scope), 0, ()))
        files: list[SitemapFile] = []
        kept = 0
        while queue:
            file, depth, chain = queue.popleft()
            if (
                len(files) >= self.max_files
                or kept >= MAX_URLS
                or time.monotonic() >= deadline
                or self._guard.aborted
            ):
                self._left_out(files, file, len(queue) + 1, deadline)
                break
            self._fetch(file, deadline)
            if file.source == "default" and (
                (file.status is not None and 400 <= file.status < 500)
                or (file.status == 200 and not file.kind)
            ):
                continue  # no /sitemap.xml (a 4xx, or a page that is no sitemap): it was only a guess
            files.append(file)
            kept += len(file.entries) + len(file.alternates)
            if file.kind != "index":
                continue
            for child, _ in file.entries:
                key = self._key(child)
                if key in chain or key == file.url:
                    file.problems.append(("invalid", f"index loop: lists {key}, itself or an index above it"))
                elif key in seen:
                    continue  # listed twice (robots.txt and an index): read once
                elif depth + 1 > MAX_DEPTH:
                    file.problems.append(
                        ("over-limit", f"indexes nested deeper than {MAX_DEPTH} levels: {key} not read")
                    )
                else:
                    seen.add(key)
                    item = SitemapFile(key, "index", parent=file.url, scope=location_scope(key))
                    queue.append((item, depth + 1, (*chain, file.url)))
        return files

    def _left_out(self, files: list[SitemapFile], file: SitemapFile, count: int, deadline: float) -> None:
        """Sitemaps past a bound are not read: one over-limit problem says how many and why."""
        if self._guard.aborted:
            return
        if len(files) >= self.max_files:
            why = f"the crawl reads at most {self.max_files} sitemap files"
        elif sum(len(f.entries) for f in files) >= MAX_URLS:
            why = f"the crawl keeps at most {MAX_URLS:,} sitemap URLs"
        else:
            why = f"reading sitemaps stopped after {self.total:g} s"
        holder = next((f for f in files if f.url == file.parent), None) or (files[-1] if files else None)
        if holder is not None:
            holder.problems.append(("over-limit", f"{count} sitemap(s) not read: {why}"))

    def _key(self, url: str) -> str:
        try:
            return normalize(url, disable_queries=self._disable_queries)
        except ValueError:
            return url.strip()

    def _fetch(self, file: SitemapFile, deadline: float) -> None:
        url = file.url
        if urlsplit(url).scheme.lower() not in ("http", "https"):
            file.problems.append(("unreachable", "not fetched: not an http(s) URL"))
            return
        if not self._fetchable(url):
            file.problems.append(("unreachable", "not fetched: on another host than the crawl's"))
            return
        seconds = min(self.timeout, max(0.0, deadline - time.monotonic()))
        try:
            file.status, parsed = self._guard.run(lambda exchange: self._read(exchange, url), seconds)
        except (requests.RequestException, OSError, RuntimeError) as exc:
            kind = "aborted" if self._guard.aborted else classify(exc)
            file.problems.append(("unreachable", kind))
            return
        if file.status != 200 or parsed is None:
            file.problems.append(("unreachable", f"HTTP {file.status}"))
            return
        self._take(file, parsed)

    def _take(self, file: SitemapFile, parsed: Parsed) -> None:
        file.kind = parsed.kind
        file.problems.extend(parsed.problems)
        for loc, lastmod in parsed.entries:
            try:
                file.entries.append((normalize(loc, disable_queries=self._disable_queries), lastmod))
            except ValueError:
                file.problems.append(("invalid", f"a URL no request can go to: {loc[:200]}"))
        for loc, hreflang, href in parsed.alternates:
            try:
                page = normalize(loc, disable_queries=self._disable_queries)
            except ValueError:
                continue  # the entry itself is the problem, said above
            file.alternates.append((page, hreflang, self._target(page, href)))

    def _target(self, page: str, href: str) -> str:
        """An alternate's href as the hreflang checks compare it: absolute and normalised when it is http(s); an
        empty one stays empty (no web address: hreflang-invalid-url), it does not mean the page itself."""
        if not href:
            return ""
        try:
            return normalize(href, page, disable_queries=self._disable_queries)[:2048]
        except ValueError:  # an http(s) URL no request can go to: hreflang-invalid-url judges it as written
            return href[:2048]

    def _read(self, exchange: Exchange[tuple[int, Parsed | None]], url: str) -> tuple[int, Parsed | None]:
        """The status and the body parsed as it arrives, raw (gzip is the parser's, with its cap).

        The parser lives and ends in this thread: lxml parsers must not cross threads.
        """
        headers = {"User-Agent": self.user_agent, "Accept-Encoding": "gzip", **(self._headers(url) or {})}
        response = self._session.get(
            url,
            headers=headers,
            auth=self._credentials(url),
            timeout=(self.timeout, self.timeout),
            stream=True,
        )
        try:
            if response.status_code != 200:
                return response.status_code, None
            parser = SitemapParser()
            while not exchange.is_cut:
                chunk = response.raw.read(_CHUNK, decode_content=False)
                if not chunk or not parser.feed(chunk):
                    break
            return 200, parser.close()
        finally:
            response.close()


def sitemap_starts(options: CrawlOptions, robots: RobotsCache) -> list[tuple[str, str]]:
    """The sitemaps a crawl reads: ``--sitemap`` ones, then (a recursive crawl of roots) those its robots.txt
    files name and each root origin's ``/sitemap.xml``. Fetches robots.txt: blocks."""
    starts = [(split_credentials(url)[0], "given") for url in options.sitemaps]
    if not options.sitemap_discovery or not options.recursive or options.from_list:
        return starts
    origins = list(dict.fromkeys(origin_of(split_credentials(root)[0]) for root in options.roots))
    for origin in origins:
        starts.extend((line, "robots.txt") for line in robots.sitemaps(origin + "/"))
    starts.extend((origin + "/sitemap.xml", "default") for origin in origins)
    return starts


def seed_urls(files: Iterable[SitemapFile], in_scope: Callable[[str], bool]) -> list[str]:
    """The URLs of ``files`` the crawl may start from: inside their sitemap's location and the crawl's scope."""
    found: dict[str, None] = {}
    for file in files:
        if file.kind == "index":
            continue
        for url, _ in file.entries:
            if url.startswith(file.scope) and in_scope(url):
                found[url] = None
    return list(found)
