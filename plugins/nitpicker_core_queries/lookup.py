"""`search` (URLs and titles as one types) and `filter-values` (what a filter can pick, taken from the data)."""

from __future__ import annotations

from typing import Any

from nitpicker_core import Query, UsageError

# Per field: the SQL of (value, count) rows of one commit (bound as the first parameter), and what it lists.
_VALUES = {
    "analyzer": ("SELECT r.analyzer, (SELECT COUNT(*) FROM violation v WHERE v.commit_id = r.commit_id "
                 "AND v.analyzer = r.analyzer) FROM analyzer_run r WHERE r.commit_id = ?", "analyzers that ran "
                 "(count: their violations)"),
    "rule": ("SELECT v.rule, COUNT(*) FROM violation v WHERE v.commit_id = ? GROUP BY v.rule",
             "rules with violations (count: violations)"),
    "page_content_type": ("SELECT ps.content_type, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps "
                          "ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.content_type IS NOT NULL "
                          "AND ps.content_type != '' GROUP BY ps.content_type", "content types of pages (count: URLs)"),
    "resource_content_type": ("SELECT rs.content_type, COUNT(*) FROM commit_resource cr CROSS JOIN resource_state rs "
                              "ON rs.id = cr.state_id WHERE cr.commit_id = ? AND rs.content_type IS NOT NULL AND "
                              "rs.content_type != '' GROUP BY rs.content_type",
                              "content types of sub-resources (count: resources)"),
    "status": ("SELECT ps.status, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps ON ps.id = cp.state_id "
               "WHERE cp.commit_id = ? AND ps.status IS NOT NULL GROUP BY ps.status", "status codes of pages "
               "(count: URLs)"),
}


def _filter_values(archive: Any, commit: int, field: str, limit: int = 1000) -> dict[str, Any]:
    rows = archive.execute(f"SELECT * FROM ({_VALUES[field][0]}) ORDER BY 1 LIMIT ?", [commit, limit + 1])
    items = [{"value": r[0], "count": r[1]} for r in rows[:limit]]
    return {"field": field, "items": items, "more": len(rows) > limit}


def _like(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere (SQLite's LIKE ignores ASCII case)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# Driven by the URL index (URLs in order, each looked up in the commit): the first `limit` matches in URL
# order end the scan, so a common word answers at once and only a rare one reads every page.
_SEARCH = (
    "SELECT u.url, ps.title, ps.status, ps.is_external FROM url u CROSS JOIN commit_page cp "
    "ON cp.commit_id = ? AND cp.url_id = u.id CROSS JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE (u.url LIKE ?2 ESCAPE '\\' OR ps.title LIKE ?2 ESCAPE '\\') ORDER BY u.url LIMIT ?"
)


def _search(archive: Any, commit: int, q: str, limit: int = 20) -> dict[str, Any]:
    text = q.strip()
    if not text:
        raise UsageError("parameter 'q' must not be blank")
    rows = archive.execute(_SEARCH, [commit, _like(text), limit + 1])
    items = [{**dict(r), "is_external": bool(r["is_external"])} for r in rows[:limit]]
    return {"q": text, "items": items, "more": len(rows) > limit}


QUERIES = [
    Query("search", "URLs of the commit (pages, failures, external pages) whose URL or title contains `q`, "
          "ignoring ASCII case; the first `limit` in URL order, and `more` when there are others.", _search,
          {"q": {"type": "string", "description": "text to find in URLs and titles"},
           "limit": {"type": "integer", "default": 20, "minimum": 1, "maximum": 200,
                     "description": "matches to return"}},
          required=("q",), order=14),
    Query("filter-values", "The values a filter can take in the commit, each with a count: "
          + "; ".join(f"{name}: {what}" for name, (_, what) in _VALUES.items()) + ".", _filter_values,
          {"field": {"type": "string", "enum": list(_VALUES), "description": "what to list"},
           "limit": {"type": "integer", "default": 1000, "minimum": 1, "maximum": 10000,
                     "description": "values to return (in order; `more` says whether there are others)"}},
          required=("field",), order=15),
]
