"""What several crawl checks read, gathered once per check context: URL rows, error kinds, resolved links."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from nitpicker_core import CheckContext, Finding
from nitpicker_core.archive import linkgraph

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


# Only the columns the checks read, with the error kind and the bot-wall flag pulled out of ``extra`` in SQL:
# ArchiveReader.pages() decodes every JSON column of every row, several times slower on a large commit.
_ROWS = (
    "SELECT u.url, ps.status, ps.content_type, d.url AS redirect_dest, ps.is_external, ps.is_skipped, "
    "ps.skip_reason, json_extract(ps.extra, '$.error_kind') AS error_kind, "
    "json_extract(ps.extra, '$.blocked') AS blocked, json_extract(ps.extra, '$.redirect_chain') AS redirect_chain, "
    "json_extract(ps.extra, '$.outside_scope') AS outside_scope, "
    "ps.noindex, ps.title, ps.description, ps.viewport, ps.lang, "
    "ps.headers FROM commit_page cp JOIN url u ON u.id = cp.url_id JOIN page_state ps ON ps.id = cp.state_id "
    "LEFT JOIN url d ON d.id = ps.redirect_dest_url_id WHERE cp.commit_id = ?"
)


def rows(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """Every URL row of the commit by URL, ``error_kind`` from the row or else the commit's crawl errors."""

    def load() -> dict[str, dict[str, Any]]:
        kinds: dict[str, str] = {}
        for error in ctx.reader.crawl_errors(ctx.commit):
            if error["kind"] and (error["url"] not in kinds or error["kind"] < kinds[error["url"]]):
                kinds[error["url"]] = error["kind"]
        found = {}
        for row in ctx.reader.execute(_ROWS, [ctx.commit]):
            item = dict(row)
            item["error_kind"] = item["error_kind"] or kinds.get(item["url"])
            found[item["url"]] = item
        return found

    return memo(ctx, "rows", load)


def headers(row: dict[str, Any]) -> dict[str, str]:
    """A row's response headers, names lower-cased (decoded on first use: only content pages need them)."""
    if not isinstance(row.get("headers"), dict):
        decoded = json.loads(row["headers"]) if row.get("headers") else {}
        row["headers"] = {str(k).lower(): str(v) for k, v in (decoded or {}).items()}
    return row["headers"]


def content_pages(ctx: CheckContext) -> Iterator[dict[str, Any]]:
    """Internal HTML pages that answered 2xx: the pages metadata, heading and header checks look at.

    A URL of the site's host outside the crawl's scope is internal but was only checked: it is no page.
    """
    for row in rows(ctx).values():
        status = row.get("status")
        if (
            not row.get("is_external")
            and not row.get("is_skipped")
            and row.get("content_type") == "text/html"
            and not row.get("outside_scope")
            and status is not None
            and 200 <= status < 300
        ):
            yield row


def content_urls(ctx: CheckContext) -> set[str]:
    return memo(ctx, "content_urls", lambda: {r["url"] for r in content_pages(ctx)})


def final(ctx: CheckContext, url: str) -> dict[str, Any] | None:
    """The row a URL leads to, its redirects followed (None when it was never recorded or redirects in a circle)."""
    table = rows(ctx)
    seen: set[str] = set()
    row = table.get(url)
    while row is not None and row.get("redirect_dest") and len(seen) < _MAX_HOPS:
        seen.add(row["url"])
        dest = row["redirect_dest"]
        if dest in seen:
            return None
        row = table.get(dest)
    return row


class Link(NamedTuple):
    """One (source page, written target) pair of the commit, however many anchors make it."""

    source: str
    target: str


def _suspect(row: dict[str, Any]) -> bool:
    """Whether links to this row can be a finding: anything but an internal 2xx page that is indexable."""
    status = row.get("status")
    return bool(
        row.get("is_external")
        or row.get("redirect_dest")
        or row.get("noindex")
        or "x-robots-tag" in str(row.get("headers") or "").lower()
        or row.get("error_kind")
        or status is None
        or not 200 <= status < 300
    )


def links(ctx: CheckContext) -> list[Link]:
    """Distinct links of crawled pages to targets a link check may report (most links lead to fine pages)."""

    def load() -> list[Link]:
        targets = json.dumps([url for url, row in rows(ctx).items() if _suspect(row)])
        # One join over the anchors of the suspect targets: a per-page anchors() call is one query per page.
        found = ctx.reader.execute(
            "SELECT DISTINCT su.url AS source, tu.url AS target FROM url tu "
            "JOIN anchor a ON a.target_url_id = tu.id "
            "JOIN commit_page sc ON sc.commit_id = ? AND sc.state_id = a.state_id "
            "JOIN page_state sps ON sps.id = sc.state_id JOIN url su ON su.id = sc.url_id "
            "WHERE tu.url IN (SELECT value FROM json_each(?)) AND sps.is_external = 0 "
            "AND json_extract(sps.extra, '$.outside_scope') IS NULL",
            [ctx.commit, targets],
        )
        return sorted(Link(r[0], r[1]) for r in found)

    return memo(ctx, "links", load)


def internal_links(ctx: CheckContext) -> list[linkgraph.InternalLink]:
    """Every distinct (source, target, text) link of the commit's crawled internal pages, read once."""
    return memo(ctx, "internal_links", lambda: linkgraph.internal_links(ctx.reader, ctx.commit))


def children(ctx: CheckContext, table: str, columns: str, joins: str = "") -> list[dict[str, Any]]:
    """Rows of a per-page child table ``t`` (jsonld, page_error, page_resource) of the commit, with ``url``."""
    found = ctx.reader.execute(
        f"SELECT u.url AS url, {columns} FROM commit_page cp JOIN url u ON u.id = cp.url_id "
        f"JOIN {table} t ON t.state_id = cp.state_id {joins} WHERE cp.commit_id = ? ORDER BY u.url, t.id",
        [ctx.commit],
    )
    return [dict(r) for r in found]


def without_positions(message: str) -> str:
    """A parser or browser message without the positions in it, so it names the same defect after an edit."""
    return _POSITIONS.sub("", message or "").strip().rstrip(":").strip()


def unique(found: Iterator[Finding]) -> Iterator[Finding]:
    """Each finding once, in first-seen order (one image per device preset, one link per anchor)."""
    yield from dict.fromkeys(found)
