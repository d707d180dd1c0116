"""``crawl --update`` without re-rendering: the base commit's validators, and pages taken over unchanged.

An update commit's parent is its base. A page whose server answers the conditional request with 304 Not
Modified is not rendered again: the new commit points at the base commit's page state (and so at its
anchors, images, blobs and cached analyzer results) and at the base states of the sub-resources it
loaded. Nothing is copied, so an unchanged site costs the new commit its index rows only.
"""

from __future__ import annotations

from . import times
from .pages import Pages
from .store import Store

__all__ = ["Revalidator"]

# Rendered pages that answered 2xx themselves: the only states a 304 may stand for. A state without
# its extraction (the page did not answer in time) is rendered again rather than kept degraded.
_VALIDATORS_SQL = (
    "SELECT u.url, json_extract(s.headers, '$.etag'), json_extract(s.headers, '$.\"last-modified\"') "
    "FROM commit_page c JOIN page_state s ON s.id = c.state_id JOIN url u ON u.id = c.url_id "
    "WHERE c.commit_id = ? AND s.html_sha256 IS NOT NULL AND s.redirect_dest_url_id IS NULL "
    "AND s.is_target = 1 AND s.is_skipped = 0 AND s.status BETWEEN 200 AND 299 "
    "AND NOT EXISTS (SELECT 1 FROM page_error e WHERE e.state_id = s.id AND e.step = 'extract')"
)


class Revalidator:
    """The update's side of the writer: validators of a base commit, and pages taken over from it."""

    def __init__(self, store: Store, pages: Pages) -> None:
        self._store, self._pages = store, pages

    def base_of(self, commit_id: int) -> int | None:
        """The commit ``commit_id`` was made from (its parent), whose pages an update may take over."""
        row = self._store.conn.execute("SELECT parent_id FROM commits WHERE id = ?", (commit_id,)).fetchone()
        return row[0] if row else None

    def validators(self, commit_id: int) -> dict[str, dict[str, str]]:
        """URL → ``{"etag": …, "last_modified": …}`` (either may be missing) of ``commit_id``'s pages.

        Only pages a 304 can stand for are listed, and only those whose server sent a validator.
        """
        found: dict[str, dict[str, str]] = {}
        for url, etag, modified in self._store.conn.execute(_VALIDATORS_SQL, (commit_id,)):
            pair = {
                k: v for k, v in (("etag", etag), ("last_modified", modified)) if isinstance(v, str) and v
            }
            if pair:
                found[url] = pair
        return found

    def put_unchanged(
        self, commit_id: int, base_id: int, url: str, at: str | None = None
    ) -> list[str] | None:
        """``commit_id`` takes ``url``'s state (and its sub-resources' states) from ``base_id``.

        Returns the page's link targets (the crawl follows them as a rendered page's), or None when the
        base commit has no state for ``url`` (nothing is written then).
        """
        conn = self._store.conn
        with self._store.db.atomic():
            url_id = self._store.url_id(url)
            row = conn.execute(
                "SELECT state_id FROM commit_page WHERE commit_id = ? AND url_id = ?", (base_id, url_id)
            ).fetchone()
            if row is None:
                return None
            state_id = row[0]
            self._store.changing(commit_id)
            when = times.to_ms(at)
            conn.execute(
                'INSERT INTO commit_page (commit_id, url_id, state_id, first_seen_at, last_crawled_at, "order") '
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (commit_id, url_id) DO UPDATE SET "
                "state_id = excluded.state_id, last_crawled_at = excluded.last_crawled_at, "
                # nothing was decided for it (--render auto): the state is the base commit's
                '"order" = COALESCE(commit_page."order", excluded."order"), render_decision = NULL',
                (commit_id, url_id, state_id, when, when, self._pages._order_start(commit_id, 1)),
            )
            self._pages._members_of(commit_id).add(url_id)
            # the sub-resources it loaded, as the base commit recorded them (they were not fetched again)
            conn.execute(
                "INSERT OR IGNORE INTO commit_resource (commit_id, url_id, state_id) "
                "SELECT ?, cr.url_id, cr.state_id FROM commit_resource cr WHERE cr.commit_id = ? "
                "AND cr.url_id IN (SELECT resource_url_id FROM page_resource WHERE state_id = ?)",
                (commit_id, base_id, state_id),
            )
            # what it links to is known to the commit, as a rendered page's links are
            targets = self.state_links(state_id)
            members = self._pages._members_of(commit_id)
            ids = self._store.url_ids(targets)
            wanted = {
                t: bool(self._store.is_external(t)) if self._store.is_external else False for t in targets
            }
            wanted = {t: ext for t, ext in wanted.items() if ids[t] not in members}
            if wanted:
                self._pages._placeholders(commit_id, wanted, when)
        self._store.touch()
        return targets

    def state_links(self, state_id: int) -> list[str]:
        """The link targets of one page state, in document order, each once."""
        rows = self._store.conn.execute(
            "SELECT t.url FROM anchor a JOIN url t ON t.id = a.target_url_id WHERE a.state_id = ? "
            "ORDER BY a.ordinal",
            (state_id,),
        )
        return list(dict.fromkeys(url for (url,) in rows))
