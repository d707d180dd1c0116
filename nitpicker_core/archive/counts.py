"""A commit's stats: the whole commit's counts from its rows, and run totals added up over its runs."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

# Stats that describe one run each and add up over the runs into a commit (--resume, --append).
RUN_TOTALS = ("seconds", "browser_restarts")
# The meanings are the crawler's (see crawler/results.py): pages = URLs recorded (skipped ones apart; a
# placeholder, known only as a link target, is none), rendered = pages with rendered HTML (not those read
# from the HTML as sent: --render never stores that as their HTML, with the reason in unrendered), parsed =
# those, internal errors =
# failed in-scope URLs, external errors = failed external URLs and external URLs answering 400 or more.
# Each URL counts by its current state, so a URL fetched again successfully is no error any more.
_COUNTS_SQL = """
SELECT COALESCE(SUM(recorded AND NOT is_skipped), 0),
       COALESCE(SUM(html AND NOT is_skipped AND unrendered IS NULL), 0),
       COALESCE(SUM(is_skipped), 0), COALESCE(SUM(kind IS NOT NULL AND NOT is_external), 0),
       COALESCE(SUM(is_external AND (kind IS NOT NULL OR COALESCE(status, 0) >= 400)), 0),
       COALESCE(SUM(html AND NOT is_skipped AND unrendered IS NOT NULL), 0)
FROM (SELECT cp.last_crawled_at IS NOT NULL AS recorded, s.is_skipped, s.html_sha256 IS NOT NULL AS html,
             s.is_external, s.status, s.error_kind AS kind, s.unrendered
      FROM commit_page cp JOIN page_state s ON s.id = cp.state_id WHERE cp.commit_id = ?)
"""
_KINDS_SQL = (
    "SELECT s.error_kind AS kind, COUNT(*) FROM commit_page cp "
    "JOIN page_state s ON s.id = cp.state_id WHERE cp.commit_id = ? AND kind IS NOT NULL GROUP BY kind ORDER BY kind"
)


# Rendered pages stored without their title and links because the page did not answer the extraction: not a
# crawl failure (the page answered), but their data is missing, so the summary must say so.
_UNEXTRACTED_SQL = (
    "SELECT COUNT(DISTINCT cp.state_id) FROM commit_page cp JOIN page_error e ON e.state_id = cp.state_id "
    "WHERE cp.commit_id = ? AND e.step = 'extract'"
)


def commit_counts(conn: sqlite3.Connection, commit_id: int) -> dict[str, Any]:
    pages, rendered, skipped, internal, external, parsed = conn.execute(_COUNTS_SQL, (commit_id,)).fetchone()
    kinds = {kind: n for kind, n in conn.execute(_KINDS_SQL, (commit_id,))}
    unextracted = conn.execute(_UNEXTRACTED_SQL, (commit_id,)).fetchone()[0]
    return {
        "pages": pages,
        "rendered": rendered,
        "parsed": parsed,
        "skipped": skipped,
        "internal_errors": internal,
        "external_errors": external,
        "errors_by_kind": kinds,
        "unextracted": unextracted,
    }


def merge(
    before: Mapping[str, Any], run: Mapping[str, Any], status: str, whole: Mapping[str, Any]
) -> dict[str, Any]:
    """The stats a finished run leaves: its own fields, run totals added to the earlier runs', whole counts."""
    merged = {**before, **run}
    for key in RUN_TOTALS:
        if key in run and key in before:
            merged[key] = round(float(before[key]) + float(run[key]), 3)
    # runs that finished (a run killed outright records nothing); a commit finished before they were counted had one
    merged["runs"] = int(before.get("runs", 1 if before else 0)) + 1
    merged["status"] = status
    merged.update(whole)
    return merged
