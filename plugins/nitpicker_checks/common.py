"""What several crawl checks read, gathered once per check context: URL rows, error kinds, resolved links."""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from nitpicker_core import Check, CheckContext, Finding, non_indexable_reason, read, stored_html_facts

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


# Only the fields the checks read: ArchiveReader.pages() decodes every JSON column of every row, several times
# slower on a large commit.
_FIELDS = (
    "url",
    "status",
    "content_type",
    "redirect_dest",
    "is_external",
    "is_skipped",
    "skip_reason",
    "error_kind",
    "blocked",
    "redirect_chain",
    "outside_scope",
    "noindex",
    "title",
    "description",
    "viewport",
    "lang",
    "headers",
    "canonical",
    "canonical_href",
)


def rows(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """Every URL row of the commit by URL, ``error_kind`` from the row or else the commit's crawl errors."""

    def load() -> dict[str, dict[str, Any]]:
        kinds: dict[str, str] = {}
        for error in ctx.reader.crawl_errors(ctx.commit):
            if error["kind"] and (error["url"] not in kinds or error["kind"] < kinds[error["url"]]):
                kinds[error["url"]] = error["kind"]
        found = {}
        for item in read.page_rows(ctx.reader, ctx.commit, _FIELDS):
            item["error_kind"] = item["error_kind"] or kinds.get(item["url"])
            found[item["url"]] = item
        return found

    return memo(ctx, "rows", load)


# Decoded response headers by their stored JSON: a site's pages mostly send the same few header sets.
# Read-only, shared by every row that stored the same text.
_HEADERS: dict[str, dict[str, str]] = {}


def headers(row: dict[str, Any]) -> dict[str, str]:
    """A row's response headers, names lower-cased (decoded on first use: only content pages need them)."""
    raw = row.get("headers")
    if isinstance(raw, dict):  # decoded already (asked 600,000 times at 100,000 pages)
        return raw
    raw = raw or ""
    decoded = _HEADERS.get(raw)
    if decoded is None:
        found = json.loads(raw) if raw else {}
        decoded = {str(k).lower(): str(v) for k, v in (found or {}).items()}
        if len(_HEADERS) < 10_000:
            _HEADERS[raw] = decoded
    row["headers"] = decoded
    return decoded


def indexability(row: dict[str, Any]) -> str | None:
    """``non_indexable_reason`` of a row of ``rows``, its headers decoded in place (no copy of the row)."""
    headers(row)
    return non_indexable_reason(row)


def content_pages(ctx: CheckContext) -> list[dict[str, Any]]:
    """Internal HTML pages that answered 2xx: the pages metadata, heading and header checks look at.

    A URL of the site's host outside the crawl's scope is internal but was only checked: it is no page.
    Picked out of ``rows`` once per context (in its order); read-only, as the rows are.
    """

    def load() -> list[dict[str, Any]]:
        found = []
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
                found.append(row)
        return found

    return memo(ctx, "content_pages", load)


def content_urls(ctx: CheckContext) -> set[str]:
    return memo(ctx, "content_urls", lambda: {r["url"] for r in content_pages(ctx)})


def directives(ctx: CheckContext) -> dict[str, read.PageDirectives]:
    """Each internal crawled URL's robots meta, nofollow, canonical, language and stored HTML, read once."""
    return memo(ctx, "directives", lambda: {d.url: d for d in read.page_directives(ctx.reader, ctx.commit)})


# What checks read out of each content page's stored HTML: name → (whether from the HTML as sent rather than
# the rendered one, the reader of (URL, HTML)). ``html_facts`` runs every reader of one HTML in the same pass,
# so each page's HTML is read and decompressed once for all of them.
_HTML_READERS: dict[str, tuple[bool, Callable[[str, str], Any]]] = {}


def html_reader(
    name: str, sent: bool = False
) -> Callable[[Callable[[str, str], Any]], Callable[[str, str], Any]]:
    """Register a reader of (URL, HTML) as ``name`` for ``html_facts`` (a decorator)."""

    def register(reader: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
        _HTML_READERS[name] = (sent, reader)
        return reader

    return register


def html_facts(ctx: CheckContext, name: str) -> dict[str, Any]:
    """What reader ``name`` found in each content page's stored HTML (pages without stored HTML left out)."""
    sent = _HTML_READERS[name][0]

    def load() -> dict[str, dict[str, Any] | Exception]:
        readers = {key: reader for key, (of_sent, reader) in _HTML_READERS.items() if of_sent == sent}
        found: dict[str, dict[str, Any] | Exception] = {key: {} for key in readers}
        pages = content_urls(ctx)
        # What the crawl stored of each page's HTML (format 7) stands for reading it, page by page: a page
        # stored before, or missing a reader's facts, is read from its HTML below
        unread = set(pages)
        parsed: dict[str, dict[str, Any]] = memo(ctx, "html_facts_parsed", dict)  # the same text: parsed once
        stored_rows = memo(ctx, "html_facts_stored", lambda: read.page_html_facts(ctx.reader, ctx.commit))
        for url, text, has_html, has_sent in stored_rows:  # read once for both kinds of HTML
            if text is None or url not in pages:
                continue
            if not (has_sent if sent else has_html):
                unread.discard(url)  # no such HTML stored: left out, as page_html leaves it out
                continue
            stored = parsed.get(text)
            if stored is None:
                stored = parsed[text] = stored_html_facts(text)
            if all(key in stored for key in readers):
                unread.discard(url)
                for key in readers:
                    facts = found[key]
                    if isinstance(facts, dict):
                        facts[url] = stored[key]
        # every other page's HTML in one query
        for url, html in read.page_html(ctx.reader, ctx.commit, sent, only=unread):
            if url in pages:
                for key, reader in readers.items():
                    facts = found[key]
                    if isinstance(facts, dict):
                        try:
                            facts[url] = reader(url, html)
                        except Exception as exc:  # noqa: BLE001 - fails the checks of this reader only
                            found[key] = exc
        return found

    found = memo(ctx, f"html_facts:{sent}", load)[name]
    if isinstance(found, Exception):
        raise found
    return found


def stored_fact(ctx: CheckContext, name: str) -> dict[str, Any]:
    """What the crawl stored as ``name`` in the facts of each page whose rendered HTML is stored (URL → value;
    ``nitpicker_core.html_facts``): pages stored without it are left out, for the caller to read their HTML."""

    def load() -> dict[str, Any]:
        parsed: dict[str, dict[str, Any]] = memo(ctx, "html_facts_parsed", dict)  # shared with html_facts
        stored_rows = memo(ctx, "html_facts_stored", lambda: read.page_html_facts(ctx.reader, ctx.commit))
        found: dict[str, Any] = {}
        for url, text, has_html, _ in stored_rows:
            if text is None or not has_html:
                continue
            stored = parsed.get(text)
            if stored is None:
                stored = parsed[text] = stored_html_facts(text)
            if name in stored:
                found[url] = stored[name]
        return found

    return memo(ctx, f"stored_fact:{name}", load)  # type: ignore[no-any-return]


def final(ctx: CheckContext, url: str) -> dict[str, Any] | None:
    """The row a URL leads to, its redirects followed (None when it was never recorded or redirects in a circle)."""
    ends: dict[str, dict[str, Any] | None] = memo(ctx, "final", dict)
    if url not in ends:  # asked once per link: the same targets over and over
        ends[url] = _final(ctx, url)
    return ends[url]


def _final(ctx: CheckContext, url: str) -> dict[str, Any] | None:
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
    """Distinct links of crawled pages to targets a link check may report (most links lead to fine pages).

    In no particular order (each check's findings are a set).
    """

    def load() -> list[Link]:
        g = graph(ctx)
        suspects = {g.ids[url] for url, row in rows(ctx).items() if url in g.ids and _suspect(row)}
        found = [
            Link(g.urls[source], g.urls[target])
            for source, targets in g.targets.items()
            for target in targets & suspects
        ]
        return found

    return memo(ctx, "links", load)


def internal_links(ctx: CheckContext) -> list[read.InternalLink]:
    """Every distinct (source, target, text) link of the commit's crawled internal pages, read once.

    Millions of rows on a large site: the checks that need no text read ``graph`` instead.
    """
    return memo(ctx, "internal_links", lambda: read.internal_links(ctx.reader, ctx.commit))


def graph(ctx: CheckContext) -> read.AnchorGraph:
    """The links of ``internal_links`` (texts aside) as URL ids, read once per context."""
    return memo(ctx, "graph", lambda: read.anchor_graph(ctx.reader, ctx.commit))


def linked(ctx: CheckContext) -> set[str]:
    """The URLs (as written) some internal crawled page links to, other than itself."""

    def load() -> set[str]:
        g = graph(ctx)
        return {g.urls[i] for i in g.linked()}

    return memo(ctx, "linked", load)


def reached(ctx: CheckContext, self_links: bool) -> set[str]:
    """The URLs internal crawled pages link to (other than themselves), and where those redirect to.

    A link is (source, target) and adds its target unless it is the source, then the target's ``final``
    URL unless that is the source; ``self_links`` False leaves out a page's links to itself altogether.
    """

    def load() -> set[str]:
        g = graph(ctx)
        found = set(linked(ctx))
        # only a redirect's final URL differs from the target itself (or is None)
        redirecting = {
            g.ids[url] for url, row in rows(ctx).items() if row.get("redirect_dest") and url in g.ids
        }
        for source, targets in g.targets.items():
            for target in targets & redirecting:
                if target == source and not self_links:
                    continue
                end = final(ctx, g.urls[target])
                if end and end["url"] != g.urls[source]:
                    found.add(end["url"])
        return found

    return memo(ctx, f"reached:{self_links}", load)


def without_positions(message: str) -> str:
    """A parser or browser message without the positions in it, so it names the same defect after an edit."""
    return _POSITIONS.sub("", message or "").strip().rstrip(":").strip()


def unique(found: Iterable[Finding]) -> Iterable[Finding]:
    """Each finding once, in first-seen order (one image per device preset, one link per anchor).

    Gathered when called, as a dict's keys: a set made of them takes their hashes as they are rather than
    hashing a million findings again.
    """
    return dict.fromkeys(found)


class _Targets(Mapping[str, set[str]]):
    """Each internal crawled page → the URLs its anchors point to, named when asked for (most never are)."""

    def __init__(self, g: read.AnchorGraph) -> None:
        self._graph = g
        self._named: dict[str, set[str]] = {}

    def __getitem__(self, url: str) -> set[str]:
        if url not in self._named:
            g = self._graph
            ids = g.targets[g.ids[url]] if url in g.ids and g.ids[url] in g.targets else None
            if ids is None:
                raise KeyError(url)
            self._named[url] = {g.urls[i] for i in ids}
        return self._named[url]

    def __iter__(self) -> Iterator[str]:
        return (self._graph.urls[i] for i in self._graph.targets)

    def __len__(self) -> int:
        return len(self._graph.targets)


def anchor_targets(ctx: CheckContext) -> Mapping[str, set[str]]:
    """Each internal crawled page → the URLs its anchors point to (fragments off), read once per context."""
    return memo(ctx, "anchor_targets", lambda: _Targets(graph(ctx)))


def family(category: str, help_url: str) -> Callable[..., Check]:
    """The check factory of one family of checks: its category and help link said once, findings each once.

    ``make(id, title, priority, description, fix, find, order, help_url=..., **check_fields)``.
    """

    def make(
        id: str,
        title: str,
        priority: str,
        description: str,
        fix: str,
        find: Callable[[CheckContext], Iterator[Finding]],
        order: int,
        *,
        help_url: str = help_url,
        **kw: Any,
    ) -> Check:
        return Check(
            id,
            title,
            category,
            priority,
            description,
            fix,
            help_url,
            lambda ctx: unique(find(ctx)),
            order=order,
            **kw,
        )

    return make
