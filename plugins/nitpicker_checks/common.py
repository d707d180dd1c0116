"""What several crawl checks read, gathered once per check context: URL rows, error kinds, resolved links."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from nitpicker_core import CheckContext, Finding

# Checks of one context share what they read: every URL row of the commit is loaded once, not once per check.
_CACHE: weakref.WeakKeyDictionary[CheckContext, dict[str, Any]] = weakref.WeakKeyDictionary()
# Redirects followed at most this far when resolving a link (the crawler stores final destinations already).
_MAX_HOPS = 20
# Positions in parser messages ("line 1 column 19 (char 18)", ":3:14") shift when unrelated markup changes.
_POSITIONS = re.compile(r"\s*(?:at\s+)?(?:line \d+,?\s*column \d+|\(char \d+\)|:\d+:\d+|position \d+)")


def memo(ctx: CheckContext, key: str, make: Callable[[], Any]) -> Any:
    """``make()`` once per context and key."""
    found = _CACHE.setdefault(ctx, {})
    if key not in found:
        found[key] = make()
    return found[key]


def rows(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """Every URL row of the commit by URL, with ``error_kind`` filled from the row or the commit's errors."""
    def load() -> dict[str, dict[str, Any]]:
        kinds: dict[str, str] = {}
        for error in ctx.reader.crawl_errors(ctx.commit):
            if error["kind"] and (error["url"] not in kinds or error["kind"] < kinds[error["url"]]):
                kinds[error["url"]] = error["kind"]
        found = {}
        for row in ctx.reader.pages(ctx.commit):
            extra = row.get("extra") or {}
            row["error_kind"] = (extra.get("error_kind") if isinstance(extra, dict) else None) or kinds.get(row["url"])
            found[row["url"]] = row
        return found

    return memo(ctx, "rows", load)


def content_pages(ctx: CheckContext) -> Iterator[dict[str, Any]]:
    """Internal HTML pages that answered 2xx: the pages metadata, heading and header checks look at."""
    for row in rows(ctx).values():
        status = row.get("status")
        if (not row.get("is_external") and not row.get("is_skipped") and row.get("content_type") == "text/html"
                and status is not None and 200 <= status < 300):
            yield row


def content_urls(ctx: CheckContext) -> set[str]:
    return memo(ctx, "content_urls", lambda: {r["url"] for r in content_pages(ctx)})


def final(ctx: CheckContext, url: str) -> dict[str, Any] | None:
    """The row a URL leads to, its redirects followed (None when it was never recorded or redirects in a circle)."""
    table = rows(ctx)
    seen = set()
    row = table.get(url)
    while row is not None and row.get("redirect_dest") and len(seen) < _MAX_HOPS:
        seen.add(row["url"])
        dest = row["redirect_dest"]
        if dest in seen:
            return None
        row = table.get(dest)
    return row


@dataclass(frozen=True)
class Link:
    """One (source page, written target) pair of the commit, however many anchors make it."""

    source: str
    target: str


def links(ctx: CheckContext) -> list[Link]:
    """Distinct links of internal pages, in (source, first anchor) order."""
    def load() -> list[Link]:
        # One join over the commit's anchors: a per-page anchors() call would be one query per page.
        found = ctx.reader.execute(
            "SELECT su.url AS source, tu.url AS target FROM commit_page sc "
            "JOIN page_state sps ON sps.id = sc.state_id JOIN url su ON su.id = sc.url_id "
            "JOIN anchor a ON a.state_id = sc.state_id JOIN url tu ON tu.id = a.target_url_id "
            "WHERE sc.commit_id = ? AND sps.is_external = 0 ORDER BY su.url, a.ordinal", [ctx.commit])
        return list(dict.fromkeys(Link(r["source"], r["target"]) for r in found))

    return memo(ctx, "links", load)


def children(ctx: CheckContext, table: str, columns: str, joins: str = "") -> list[dict[str, Any]]:
    """Rows of a per-page child table ``t`` (jsonld, page_error, page_resource) of the commit, with ``url``."""
    found = ctx.reader.execute(
        f"SELECT u.url AS url, {columns} FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        f"JOIN {table} t ON t.state_id = cp.state_id {joins} WHERE cp.commit_id = ? ORDER BY u.url, t.id",
        [ctx.commit])
    return [dict(r) for r in found]


def without_positions(message: str) -> str:
    """A parser or browser message without the positions in it, so it names the same defect after an edit."""
    return _POSITIONS.sub("", message or "").strip().rstrip(":").strip()


def unique(found: Iterator[Finding]) -> Iterator[Finding]:
    """Each finding once, in first-seen order (one image per device preset, one link per anchor)."""
    yield from dict.fromkeys(found)
