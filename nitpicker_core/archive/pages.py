"""Writing pages, placeholders, resources and crawl records into one commit (the crawler's hot path)."""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from nitpicker_core.records import CrawlErrorRecord, Resource, ScrapeResult

from . import screenshots, times
from .hashing import to_json
from .models import PAGE_STATE_COLUMNS
from .prepare import REDIRECT_AT, PreparedPage, placeholder, plain_length, prepare_page, prepare_resource
from .store import ROW_CHUNK, Store, utc_now

_STATE_INSERT = (
    f"INSERT OR IGNORE INTO page_state ({', '.join(PAGE_STATE_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(PAGE_STATE_COLUMNS))})"
)
# The decision goes with the record that wins (a record stored again in the commit brings its own, or none)
_PAGE_UPSERT = (
    'INSERT INTO commit_page (commit_id, url_id, state_id, first_seen_at, last_crawled_at, "order", '
    "response_ms, load_ms, http_version, render_decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (commit_id, url_id) DO UPDATE SET "
    "state_id = excluded.state_id, last_crawled_at = excluded.last_crawled_at, "
    '"order" = COALESCE(commit_page."order", excluded."order"), response_ms = excluded.response_ms, '
    "load_ms = excluded.load_ms, http_version = excluded.http_version, "
    "render_decision = excluded.render_decision"
)
# A state stored before format 6 learns its word count from the first crawl that counts it, one stored
# before format 7 its HTML facts (one statement for both: it runs for every page crawled)
_DERIVED_FILL = (
    "UPDATE page_state SET word_count = coalesce(word_count, ?), html_facts = coalesce(html_facts, ?) "
    "WHERE id = ? AND (word_count IS NULL OR html_facts IS NULL)"
)
_PLACEHOLDER_INSERT = (
    'INSERT OR IGNORE INTO commit_page (commit_id, url_id, state_id, first_seen_at, last_crawled_at, "order") '
    "VALUES (?, ?, ?, ?, NULL, NULL)"
)
# zlib's level 3: a docs page of 84 KB in 0.6 ms instead of level 6's 1.6 ms, 15% larger (its file 3%); any level
# decompresses to the same text, and blobs are addressed by the text's hash
ZLIB_LEVEL = 3
# Anchor texts come back on every page of a site (its navigation): each text's length is worked out once
_plain_length = functools.lru_cache(maxsize=1 << 14)(plain_length)


class Pages:
    """Writes pages, placeholders, resources and crawl records into a commit, over the writer's store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._members: dict[int, set[int]] = {}  # commit → url ids it holds (asked for once per commit)
        self._next_order: dict[int, int] = {}

    # --- public API -----------------------------------------------------------------------------------

    def put_page(
        self,
        commit_id: int,
        result: ScrapeResult,
        crawled_at: str | None = None,
        resources: Sequence[tuple[Resource, str | None]] = (),
    ) -> None:
        """Store one page, and the sub-resources seen while it rendered, in one transaction."""
        self.put_pages(commit_id, [result], crawled_at, resources=resources)

    def put_pages(
        self,
        commit_id: int,
        results: Iterable[ScrapeResult],
        crawled_at: str | None = None,
        *,
        resources: Sequence[tuple[Resource, str | None]] = (),
    ) -> None:
        """Store many pages (and ``resources``, as ``put_resources``) in one transaction; later entries win."""
        at = times.to_ms(crawled_at)
        batch = list(results)
        with self._store.db.atomic():
            self._store.changing(commit_id)
            pairs = self._unstored(commit_id, list(resources))
            if pairs:
                self._resource_rows(commit_id, pairs)
            for start in range(0, len(batch), ROW_CHUNK):
                self._put_chunk(commit_id, batch[start : start + ROW_CHUNK], at)
        self._store.touch()

    def put_records(self, commit_id: int, records: Sequence[tuple[ScrapeResult, str | None]]) -> None:
        """Store each of ``records`` (result, crawled_at) as ``put_page`` stores it, one after the other, in one
        transaction: the rows are those of as many ``put_page`` calls, without a commit each.

        What a crawl records of the link targets it does not fetch (``--no-fetch-external``: thousands, a few
        rows each), where a transaction of its own costs each of them more than its rows."""
        with self._store.db.atomic():
            self._store.changing(commit_id)
            for start in range(0, len(records), ROW_CHUNK):
                part = records[start : start + ROW_CHUNK]
                self._put_chunk(commit_id, [r for r, _ in part], [times.to_ms(at) for _, at in part])
        self._store.touch()

    def put_placeholder(self, commit_id: int, url: str, is_external: bool = False) -> None:
        with self._store.db.atomic():
            self._store.changing(commit_id)
            self._placeholders(commit_id, {url: is_external}, times.to_ms())
        self._store.touch()

    def put_skipped(self, commit_id: int, url: str, reason: str, is_external: bool = False) -> None:
        result = ScrapeResult(
            url=url,
            scraped=True,
            is_skipped=True,
            skip_reason=reason,
            is_external=is_external,
            is_target=False,
            anchors=[],
            images=[],
        )
        self.put_pages(commit_id, [result])

    def put_resource(self, commit_id: int, resource: Resource, referrer_url: str | None) -> None:
        self.put_resources(commit_id, [(resource, referrer_url)])

    def put_resources(self, commit_id: int, items: Iterable[tuple[Resource, str | None]]) -> None:
        pairs = self._unstored(commit_id, list(items))
        if not pairs:  # every one stored as it is already: no transaction to open and close
            self._store.touch()
            return
        with self._store.db.atomic():
            self._store.changing(commit_id)
            self._resource_rows(commit_id, pairs)
        self._store.touch()

    def _unstored(
        self, commit_id: int, pairs: list[tuple[Resource, str | None]]
    ) -> list[tuple[Resource, str | None]]:
        """``pairs`` but the resources the commit holds as they are already, which writing again changes nothing.

        Every page names the site's few style sheets and scripts, all stored when the first page named them.
        Only a URL named once in ``pairs``, and known to the store, can be left out: with more, each state the
        URL goes through keeps its row, as it did. Read outside a transaction: this thread is the only writer.
        """
        cache = self._store.url_cache
        counts: dict[str, int] = {}  # not a Counter: a call has one pair, mostly, and a Counter costs more
        for r, _ in pairs:
            counts[r.url] = counts.get(r.url, 0) + 1
        known = {cache[r.url]: r for r, _ in pairs if counts[r.url] == 1 and r.url in cache}
        if not known:
            return pairs
        stored = self._store.lookup(
            "SELECT c.url_id, s.hash FROM commit_resource c JOIN resource_state s ON s.id = c.state_id "
            "WHERE c.url_id IN ({marks}) AND c.commit_id = " + str(int(commit_id)),
            known,
        )
        same = {r.url for url_id, r in known.items() if stored.get(url_id) == prepare_resource(r)[0]}
        return [(r, referrer) for r, referrer in pairs if r.url not in same] if same else pairs

    def _resource_rows(self, commit_id: int, pairs: Sequence[tuple[Resource, str | None]]) -> None:
        """The rows of ``pairs`` (resource, referrer), inside the caller's transaction; later ones win, but a
        304 never replaces an answer: it is a browser revalidating the copy it has (no type, no length), which
        a page rendered after the first that used the file gets.

        The referrer is not stored here: which pages referenced a resource is what their states list."""
        ids = self._store.url_ids([r.url for r, _ in pairs])
        answered = {r.url for r, _ in pairs if r.status != 304}
        revalidated = {ids[r.url] for r, _ in pairs if r.status == 304 and r.url not in answered}
        if revalidated:
            known = self._store.lookup(
                "SELECT url_id, 1 FROM commit_resource WHERE url_id IN ({marks}) AND commit_id = "
                + str(int(commit_id)),
                revalidated,
            )
            pairs = [
                (r, ref)
                for r, ref in pairs
                if r.status != 304 or not (r.url in answered or ids[r.url] in known)
            ]
        prepared = [(r, *prepare_resource(r)) for r, _ in pairs]
        self._store.conn.executemany(
            "INSERT OR IGNORE INTO resource_state (hash, url_id, status, status_text, content_type, "
            "content_length, compression, cdn, headers, is_external) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [(h, ids[r.url], *values) for r, h, values in prepared],
        )
        state_ids = self._store.lookup(
            "SELECT hash, id FROM resource_state WHERE hash IN ({marks})", {h for _, h, _ in prepared}
        )
        self._store.conn.executemany(
            "INSERT INTO commit_resource (commit_id, url_id, state_id) VALUES (?, ?, ?) "
            "ON CONFLICT (commit_id, url_id) DO UPDATE SET state_id = excluded.state_id",
            [(commit_id, ids[r.url], state_ids[h]) for r, h, _ in prepared],
        )

    def put_crawl_error(self, commit_id: int, error: CrawlErrorRecord, at: str | None = None) -> None:
        with self._store.db.atomic():
            self._store.changing(commit_id)
            self._store.conn.execute(
                "INSERT INTO crawl_error (commit_id, url_id, kind, message, phase, at) VALUES (?,?,?,?,?,?)",
                (
                    commit_id,
                    self._store.url_id(error.url),
                    error.kind,
                    error.message,
                    error.phase or "",
                    times.to_ms(at),
                ),
            )
        self._store.touch()

    def add_inventory_run(
        self, commit_id: int, sha256: str, counts: dict[str, Any], at: str | None = None
    ) -> None:
        with self._store.db.atomic():
            self._store.conn.execute(
                "INSERT INTO inventory_run (commit_id, sha256, counts, at) VALUES (?, ?, ?, ?)",
                (commit_id, sha256, to_json(counts), at or utc_now()),
            )
        self._store.touch()

    def put_sitemaps(self, commit_id: int, files: Sequence[Any]) -> None:
        """The crawl's sitemaps (``SitemapFile``s) with the commit; see archive/sitemaps.py."""
        from nitpicker_core.archive.sitemaps import store_sitemaps

        with self._store.db.atomic():
            store_sitemaps(self._store.conn, commit_id, files)
        self._store.touch()

    def put_robots_files(self, commit_id: int, files: Sequence[Any]) -> None:
        """The robots.txt files the crawl read, with the commit; see archive/robots_files.py."""
        from nitpicker_core.archive.robots_files import store_robots_files

        with self._store.db.atomic():
            store_robots_files(self._store.conn, commit_id, files)
        self._store.touch()

    # --- internals ------------------------------------------------------------------------------------

    def commit_urls(self, commit_id: int) -> dict[str, bool]:
        """URLs of the commit that were fetched (or skipped), each with whether it was rendered."""
        rows = self._store.conn.execute(
            "SELECT u.url, s.html_sha256 IS NOT NULL FROM commit_page c JOIN page_state s ON s.id = c.state_id "
            "JOIN url u ON u.id = c.url_id WHERE c.commit_id = ? AND s.scraped = 1",
            (commit_id,),
        )
        return {url: bool(rendered) for url, rendered in rows}

    def render_decisions(self, commit_id: int) -> list[tuple[str, dict[str, Any]]]:
        """Pages of the commit stored with a ``--render auto`` decision (commit_page.render_decision), with it,
        in crawl order: what a resumed crawl takes its templates' verdicts from (crawler/auto.py)."""
        rows = self._store.conn.execute(
            "SELECT u.url, c.render_decision FROM commit_page c JOIN url u ON u.id = c.url_id "
            'WHERE c.commit_id = ? AND c.render_decision IS NOT NULL ORDER BY c."order", u.id',
            (commit_id,),
        )
        return [(url, json.loads(fact)) for url, fact in rows]

    def pending_urls(self, commit_id: int) -> list[str]:
        """URLs the commit knows of but never fetched (link targets), in the order they were found."""
        rows = self._store.conn.execute(
            "SELECT u.url FROM commit_page c JOIN page_state s ON s.id = c.state_id JOIN url u ON u.id = c.url_id "
            "WHERE c.commit_id = ? AND s.scraped = 0 ORDER BY c.first_seen_at, u.id",
            (commit_id,),
        )
        return [url for (url,) in rows]

    def failed_urls(self, commit_id: int) -> dict[str, str]:
        """URLs of the commit whose current state is a failed fetch, with the classified error kind."""
        rows = self._store.conn.execute(
            "SELECT u.url, s.error_kind FROM commit_page c "
            "JOIN page_state s ON s.id = c.state_id JOIN url u ON u.id = c.url_id "
            "WHERE c.commit_id = ? AND s.error_kind IS NOT NULL",
            (commit_id,),
        )
        return {url: kind for url, kind in rows}

    def _members_of(self, commit_id: int) -> set[int]:
        members = self._members.get(commit_id)
        if members is None:
            rows = self._store.conn.execute(
                "SELECT url_id FROM commit_page WHERE commit_id = ?", (commit_id,)
            )
            members = self._members[commit_id] = {r[0] for r in rows}
        return members

    def _order_start(self, commit_id: int, count: int) -> int:
        start = self._next_order.get(commit_id)
        if start is None:
            row = self._store.conn.execute(
                'SELECT COALESCE(MAX("order"), 0) + 1 FROM commit_page WHERE commit_id = ?', (commit_id,)
            ).fetchone()
            start = row[0]
        self._next_order[commit_id] = start + count
        return start

    def _held(self, commit_id: int, url: str) -> tuple[int, dict[str, bool]] | None:
        """``url``'s current state in this commit, with which of its anchors, headings and images it has rows.

        One statement for the three: the URL a degraded record asks after is a link target mostly (an
        external link the crawl does not fetch), whose placeholder state has none of them."""
        row = self._store.conn.execute(
            "SELECT cp.state_id, EXISTS (SELECT 1 FROM anchor WHERE state_id = cp.state_id), "
            "EXISTS (SELECT 1 FROM heading WHERE state_id = cp.state_id), "
            "EXISTS (SELECT 1 FROM image WHERE state_id = cp.state_id) "
            "FROM commit_page cp JOIN url u ON u.id = cp.url_id WHERE cp.commit_id = ? AND u.url = ?",
            (commit_id, url),
        ).fetchone()
        if row is None:
            return None
        return row[0], {"anchor": bool(row[1]), "heading": bool(row[2]), "image": bool(row[3])}

    def _previous(self, held: tuple[int, dict[str, bool]] | None, table: str) -> list[tuple[Any, ...]]:
        """The anchors, images or headings of a URL's current state ``held`` in this commit (for a degraded
        scrape)."""
        if held is None or not held[1][table]:
            return []
        if table == "anchor":
            sql = (
                "SELECT t.url, a.fragment, a.text, a.raw_href, a.line, a.col FROM anchor a "
                "JOIN url t ON t.id = a.target_url_id WHERE a.state_id = ? ORDER BY a.ordinal"
            )
        elif table == "heading":
            sql = "SELECT level, text FROM heading WHERE state_id = ? ORDER BY ordinal"
        else:
            sql = (
                "SELECT src, current_src, alt, width, height, natural_width, natural_height, is_lazy, "
                "viewport_width, markup FROM image WHERE state_id = ? ORDER BY ordinal"
            )
        return [tuple(r) for r in self._store.conn.execute(sql, (held[0],))]

    def _prepare_all(self, commit_id: int, results: Sequence[ScrapeResult]) -> list[PreparedPage]:
        latest: dict[str, PreparedPage] = {}
        out = []
        for result in results:
            anchors = images = headings = None
            prev = latest.get(result.url)
            held = None
            if prev is None and (result.anchors is None or result.images is None):
                held = self._held(commit_id, result.url)
            if result.anchors is None:
                anchors = prev.anchors if prev else self._previous(held, "anchor")
                if result.headings is None:  # the page could not be read: it keeps what it had
                    headings = prev.headings if prev else self._previous(held, "heading")
            if result.images is None:
                images = prev.images if prev else self._previous(held, "image")
            prepared = latest[result.url] = prepare_page(result, anchors, images, headings)
            out.append(prepared)
        return out

    def _put_chunk(self, commit_id: int, results: Sequence[ScrapeResult], at: int | Sequence[int]) -> None:
        """Store ``results`` in order, each as at ``at`` (one time for all, or one each)."""
        ats = [at] * len(results) if isinstance(at, int) else list(at)
        prepared = self._prepare_all(commit_id, results)
        state_ids = self._store_states(prepared)
        shots = [
            (state_ids[p.hash], r.screenshot) for p, r in zip(prepared, results, strict=True) if r.screenshot
        ]
        screenshots.store(self._store.conn, shots)
        ids = self._store.url_cache
        first = self._order_start(commit_id, len(prepared))
        self._store.conn.executemany(
            _PAGE_UPSERT,
            [
                (
                    commit_id,
                    ids[p.url],
                    state_ids[p.hash],
                    when,
                    when,
                    first + n,
                    r.response_ms,
                    r.load_ms,
                    r.http_version,
                    r.render_decision,
                )
                for n, (p, r, when) in enumerate(zip(prepared, results, ats, strict=True))
            ],
        )
        derived = [
            (r.word_count, r.html_facts, state_ids[p.hash])
            for p, r in zip(prepared, results, strict=True)
            if r.word_count is not None or r.html_facts is not None
        ]
        if derived:
            self._store.conn.executemany(_DERIVED_FILL, derived)
        # What a page referenced lives in page_resource (shared between commits); who referenced a
        # resource in a commit is derived from it (the commit_resource_referrer view).
        members = self._members_of(commit_id)
        members.update(ids[p.url] for p in prepared)
        wanted: dict[int, dict[str, bool]] = {}  # known since when: the time of the page naming them first
        named: set[str] = set()  # the targets in ``wanted``, whatever their time
        is_external = self._store.is_external
        for p, when in zip(prepared, ats, strict=True):
            # a page names each of its targets many times (a docs page: 300 anchors, 40 URLs), and the
            # commit holds most of them already
            for target in dict.fromkeys([a[0] for a in p.anchors]):
                if target not in named and ids[target] not in members:
                    named.add(target)
                    external = bool(is_external(target)) if is_external else False
                    wanted.setdefault(when, {})[target] = external
        for when, found in wanted.items():
            self._placeholders(commit_id, found, when)

    def _placeholders(self, commit_id: int, urls: dict[str, bool], at: int) -> None:
        members = self._members_of(commit_id)
        ids = self._store.url_ids(urls)
        todo = [placeholder(u, ext) for u, ext in urls.items() if ids[u] not in members]
        if not todo:
            return
        state_ids = self._store_states(todo)
        self._store.conn.executemany(
            _PLACEHOLDER_INSERT, [(commit_id, ids[p.url], state_ids[p.hash], at) for p in todo]
        )
        members.update(ids[p.url] for p in todo)

    def _store_states(self, prepared: Sequence[PreparedPage]) -> dict[str, int]:
        """Insert the states whose hash is new (with their children and blobs); return hash → id."""
        unique = {p.hash: p for p in prepared}
        state_ids = self._store.lookup("SELECT hash, id FROM page_state WHERE hash IN ({marks})", unique)
        new = [p for h, p in unique.items() if h not in state_ids]
        urls = {p.url for p in prepared}
        for p in prepared:  # every anchor target needs an id, also for states that already exist
            urls.update([a[0] for a in p.anchors])
            urls.update(p.resources)
            if p.redirect_dest:
                urls.add(p.redirect_dest)
        ids = self._store.url_ids(urls)
        if not new:
            return state_ids
        self._store_blobs(new)
        rows = []
        for p in new:
            fields = list(p.fields)
            fields[REDIRECT_AT] = ids[p.redirect_dest] if p.redirect_dest else None
            rows.append((p.hash, ids[p.url], *fields))
        self._store.conn.executemany(_STATE_INSERT, rows)
        state_ids.update(
            self._store.lookup(
                "SELECT hash, id FROM page_state WHERE hash IN ({marks})", [p.hash for p in new]
            )
        )
        self._store_children(new, state_ids, ids)
        return state_ids

    def _store_blobs(self, new: Sequence[PreparedPage]) -> None:
        # The rendered and the sent HTML share one content-addressed table: equal bodies are stored once
        bodies = {p.html_sha256: p.html for p in new if p.html_sha256 is not None}
        bodies.update({p.source_sha256: p.source for p in new if p.source_sha256 is not None})
        if not bodies:
            return
        have = self._store.lookup("SELECT sha256, 1 FROM blob WHERE sha256 IN ({marks})", bodies)
        rows = []
        for sha, html in bodies.items():
            if sha not in have and html is not None:
                raw = html.encode("utf-8")
                rows.append((sha, "zlib", len(raw), zlib.compress(raw, ZLIB_LEVEL)))
        self._store.conn.executemany(
            "INSERT OR IGNORE INTO blob (sha256, codec, size, data) VALUES (?, ?, ?, ?)", rows
        )

    def _store_children(
        self, new: Sequence[PreparedPage], state_ids: dict[str, int], ids: dict[str, int]
    ) -> None:
        conn = self._store.conn

        def insert(sql: str, rows: list[tuple[Any, ...]]) -> None:
            if rows:  # most states have no images, JSON-LD or errors (a link target's, no rows at all)
                conn.executemany(sql, rows)

        insert(
            "INSERT INTO anchor (state_id, ordinal, target_url_id, fragment, text, raw_href, line, col, plain) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (state_id, n, ids[a[0]], *a[1:], _plain_length(a[2]))
                for p in new
                for state_id in (state_ids[p.hash],)
                for n, a in enumerate(p.anchors)
            ],
        )
        insert(
            "INSERT INTO heading (state_id, ordinal, level, text) VALUES (?, ?, ?, ?)",
            [(state_ids[p.hash], n, level, text) for p in new for n, (level, text) in enumerate(p.headings)],
        )
        insert(
            "INSERT INTO image (state_id, ordinal, src, current_src, alt, width, height, natural_width, "
            "natural_height, is_lazy, viewport_width, markup) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(state_ids[p.hash], n, *img) for p in new for n, img in enumerate(p.images)],
        )
        insert(
            "INSERT INTO page_resource (state_id, resource_url_id) VALUES (?, ?)",
            [(state_ids[p.hash], ids[r]) for p in new for r in p.resources],
        )
        insert(
            "INSERT INTO jsonld (state_id, ordinal, kind, raw, parsed, types, error) VALUES (?,?,?,?,?,?,?)",
            [(state_ids[p.hash], n, *j) for p in new for n, j in enumerate(p.jsonld)],
        )
        insert(
            "INSERT INTO tag (state_id, ordinal, provider, category, external_id, version, confidence) "
            "VALUES (?,?,?,?,?,?,?)",
            [(state_ids[p.hash], n, *t) for p in new for n, t in enumerate(p.tags)],
        )
        insert(
            "INSERT INTO page_error (state_id, ordinal, step, message) VALUES (?, ?, ?, ?)",
            [(state_ids[p.hash], n, *e) for p in new for n, e in enumerate(p.errors)],
        )
