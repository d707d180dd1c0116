"""A commit's hreflang alternates and rel=next/prev links, read from the pages' markup and HTTP Link headers, and
the hreflang alternates its sitemaps declare (``<xhtml:link>`` in a ``<url>``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from requests.utils import parse_header_links

from nitpicker_core.urls import join

if TYPE_CHECKING:
    from .reader import ArchiveReader

__all__ = ["Alternate", "link_header_alternates", "page_alternates", "sitemap_alternates"]

# Header values past this many characters are not read: a hostile header must not cost unbounded time
_MAX_HEADER = 65_536
_PAGINATION = {"next": "next", "prev": "prev", "previous": "prev"}
_ROWS = (
    "SELECT u.url, ps.headers, json_extract(ps.extra, '$.hreflang') AS hreflang, "
    "json_extract(ps.extra, '$.pagination') AS pagination FROM commit_page cp "
    "JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.is_external = 0 AND ps.is_skipped = 0 AND ps.content_type = 'text/html' "
    "AND ps.status BETWEEN 200 AND 299 AND ps.outside_scope IS NULL "
    "AND (json_array_length(json_extract(ps.extra, '$.hreflang')) > 0 "
    "OR json_extract(ps.extra, '$.pagination') IS NOT NULL OR ps.headers LIKE '%\"link\"%' COLLATE NOCASE) "
    "ORDER BY u.url"
)


@dataclass(frozen=True)
class Alternate:
    """One hreflang alternate (``kind`` "hreflang") or pagination link ("next", "prev") of a page.

    ``href`` is absolute as the browser or the Link header resolved it (a ``javascript:`` one stays as
    written); ``hreflang`` is the value as written ("" for next/prev); ``source`` is "html", "header" or
    "sitemap".
    """

    url: str
    kind: str
    href: str
    hreflang: str = ""
    source: str = "html"


def link_header_alternates(url: str, value: str) -> list[Alternate]:
    """The rel=alternate hreflang and rel=next/prev links of an HTTP ``Link`` header value of ``url``.

    Several Link headers arrive joined by newlines or commas; targets are resolved against ``url``.
    """
    found: list[Alternate] = []
    for line in value[:_MAX_HEADER].splitlines():
        for link in parse_header_links(line.strip()) if line.strip() else ():
            target = str(link.get("url") or "").strip()
            rels = str(link.get("rel") or "").lower().split()
            try:
                href = join(url, target) if target else url
            except ValueError:
                href = target
            if "alternate" in rels and "hreflang" in link:
                found.append(Alternate(url, "hreflang", href, str(link["hreflang"]), "header"))
            for rel in rels:
                if rel in _PAGINATION:
                    found.append(Alternate(url, _PAGINATION[rel], href, "", "header"))
    return found


def _from_html(url: str, hreflang: Any, pagination: Any) -> list[Alternate]:
    found = []
    for item in json.loads(hreflang) if hreflang else ():
        if isinstance(item, dict) and "href" in item:  # older archives kept {code: href}: not read
            found.append(Alternate(url, "hreflang", str(item["href"]), str(item.get("hreflang") or "")))
    for item in json.loads(pagination) if pagination else ():
        if isinstance(item, dict) and item.get("rel") in _PAGINATION:
            found.append(Alternate(url, _PAGINATION[item["rel"]], str(item.get("href") or "")))
    return found


def page_alternates(reader: ArchiveReader, commit: int) -> list[Alternate]:
    """Every alternate and pagination link of the commit's internal 2xx HTML pages, markup first, by URL."""
    found: list[Alternate] = []
    for url, headers, hreflang, pagination in reader.execute(_ROWS, [commit]):
        found += _from_html(url, hreflang, pagination)
        decoded = json.loads(headers) if headers else {}
        for name, value in (decoded or {}).items():
            if str(name).lower() == "link":
                found += link_header_alternates(url, str(value))
    return found


_SITEMAP_ROWS = (
    "SELECT u.url, a.hreflang, a.href FROM sitemap_alternate a JOIN url u ON u.id = a.url_id "
    "WHERE a.commit_id = ? ORDER BY a.rowid"
)


def sitemap_alternates(reader: ArchiveReader, commit: int) -> list[Alternate]:
    """The hreflang alternates the commit's sitemaps declare for their URLs, each once, in reading order.

    ``url`` is the ``<loc>`` (a URL several sitemaps list keeps the alternates of every one); none for an
    archive written before sitemaps' alternates were stored.
    """
    if not reader.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sitemap_alternate'"):
        return []
    rows = dict.fromkeys(
        (str(u), str(code), str(href)) for u, code, href in reader.execute(_SITEMAP_ROWS, [commit])
    )
    return [Alternate(url, "hreflang", href, code, "sitemap") for url, code, href in rows]
