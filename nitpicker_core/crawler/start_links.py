"""What the start pages link to on their own host, so a crawl left narrow by its scope says why and how to widen it."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from nitpicker_core.urls import looks_like_html

# "Far fewer": a crawl that rendered under half the same-host pages its start pages link to, when the scope
# left some of them out, explains itself. A start page at /docs/index.html of a 500-page site rendering 1
# page is the case this is for (issue 12); a crawl that got most of them says nothing.
FAR_FEWER = 0.5


@dataclass
class StartLinks:
    """Same-host page links of the start pages, each with whether the scope left it out (checked only)."""

    pages: dict[str, bool] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    host: str = ""

    def observe(self, page_url: str, links: list[tuple[str, bool]], scope: Any) -> dict[str, Any]:
        """Note a rendered start page's links, as (URL, crawled) pairs; the summary of all start pages so far."""
        entry = scope.match(page_url)
        if entry is not None and entry.url not in self.scopes:
            self.scopes.append(entry.url)
        self.host = self.host or urlsplit(page_url).netloc
        for url, crawled in links:
            if url != page_url and scope.same_host(url) and looks_like_html(url):
                self.pages[url] = self.pages.get(url, True) and not crawled
        return self.as_dict()

    def as_dict(self) -> dict[str, Any]:
        outside = sorted(url for url, left_out in self.pages.items() if left_out)
        return {
            "pages": len(self.pages),
            "outside": len(outside),
            "host": self.host,
            "scope": list(self.scopes),
            "widen": _common_directory([*self.scopes, *outside]) if outside else "",
        }


def _common_directory(urls: list[str]) -> str:
    """The deepest directory holding every URL (``http://h/a/`` for ``http://h/a/b/`` and ``http://h/a/c.html``)."""
    first = urlsplit(urls[0])
    directories = [urlsplit(url).path.rsplit("/", 1)[0] + "/" for url in urls]
    common = posixpath.commonpath(directories)
    return urlunsplit((first.scheme, first.netloc, common.rstrip("/") + "/", "", ""))


def scope_note(start_links: dict[str, Any] | None, rendered: int) -> str:
    """One line saying the scope left most of what the start page links to out, and how to widen it ("" if not)."""
    if not start_links or not start_links.get("outside") or rendered >= FAR_FEWER * start_links["pages"]:
        return ""
    scope = ", ".join(start_links["scope"])
    widen = start_links["widen"]
    return (
        f"only {rendered} page(s) rendered: {start_links['outside']} of the {start_links['pages']} pages the "
        f"start page links to on {start_links['host']} are outside the scope ({scope}), so they were checked, "
        f"not crawled; to crawl them, widen the scope with --scope {widen} or start at {widen} (a start URL "
        "ending in / covers its whole directory)"
    )
