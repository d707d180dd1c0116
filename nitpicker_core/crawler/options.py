"""Crawl options: one dataclass the CLI fills and the archive records with the commit."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from nitpicker_core.defaults import FETCH_TIMEOUTS, IMAGE_PRESETS, SCRAPE_TIMEOUTS
from nitpicker_core.urls import split_credentials

if TYPE_CHECKING:
    from nitpicker_core.crawler.login import LoginSetup


@dataclass
class CrawlOptions:
    """Everything that shapes a crawl. Credentials never appear here: see ``roots_for_storage``."""

    roots: list[str]
    interval: int = 0  # milliseconds between requests, per worker
    parallels: int = 2  # pages (tabs) rendered at once: on 2 cores K = 2 renders as fast as K = 4 (benchmarks/crawl_throughput.py)
    retry: int = 3
    max_rps: float | None = (
        None  # requests started per second to one host (preflights and navigations); None: no limit
    )
    max_retry_after: float = 120.0  # the longest Retry-After waited for; a longer one is recorded as answered
    recursive: bool = True
    fetch_external: bool = True
    scope: list[str] = field(default_factory=list)
    excludes: list[str] = field(default_factory=list)
    exclude_keywords: list[str] = field(default_factory=list)
    exclude_urls: list[str] = field(default_factory=list)
    disable_queries: bool = False
    max_excluded_depth: int = 0
    max_pages: int | None = None  # internal URLs per commit, resumed ones included; None: no limit
    max_depth: int | None = None  # links from a root (roots are 0); None: no limit
    from_list: bool = False
    user_agent: str = ""
    ignore_robots: bool = False
    image: bool = True
    image_file_size_threshold: int = 0
    image_presets: list[str] = field(default_factory=lambda: list(IMAGE_PRESETS))
    screenshots: bool = False  # a JPEG of each rendered page and a thumbnail, stored by content hash
    headers: dict[str, str] = field(default_factory=dict)
    single: bool = False
    strict: bool = False
    page_timeout: float = SCRAPE_TIMEOUTS["navigation"]
    preflight_timeouts: tuple[float, ...] = FETCH_TIMEOUTS  # per attempt, escalating
    sitemaps: list[str] = field(default_factory=list)  # --sitemap URLs, read besides those found
    sitemap_discovery: bool = True  # robots.txt Sitemap: lines and /sitemap.xml of each root's origin
    sitemap_seed: bool = True  # the sitemaps' URLs in scope are crawled as well as the roots
    # "always": every in-scope page rendered in Chromium; "never": read from the HTML as sent, no browser;
    # "auto": rendered when a rendered sample of the page's template differs from its HTML as sent
    render: str = "always"
    # --cookies, --storage-state, the [login] table: cookies and field values are secrets (see for_storage)
    login: LoginSetup | None = field(default=None, repr=False)

    def for_storage(self) -> dict[str, Any]:
        """The options as recorded in the archive: no credentials, no header values."""
        data = asdict(self)
        data["roots"] = [split_credentials(r)[0] for r in self.roots]
        data["scope"] = [split_credentials(s)[0] for s in self.scope]
        data["sitemaps"] = [split_credentials(s)[0] for s in self.sitemaps]
        data["headers"] = sorted(self.headers)  # names only: values are often tokens
        data["login"] = self.login.for_storage() if self.login is not None else None  # never a value
        return data

    def scrape_options(self) -> dict[str, Any]:
        """What the scrape plugin reads from ``crawl.options``."""
        return {
            "user_agent": self.user_agent,
            "image": self.image,
            "image_presets": list(self.image_presets),
            "screenshots": self.screenshots,
            "timeouts": {**SCRAPE_TIMEOUTS, "navigation": self.page_timeout},
        }


def default_output(root: str, now: datetime | None = None) -> Path:
    """``<host>-<YYYYMMDDHHMMSSmmm>.nitpicker`` in the working directory."""
    now = now or datetime.now()
    host = urlsplit(split_credentials(root)[0]).hostname or "site"
    return Path(f"{host}-{now:%Y%m%d%H%M%S}{now.microsecond // 1000:03d}.nitpicker")
