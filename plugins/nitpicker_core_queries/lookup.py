"""`search` (URLs and titles as one types) and `filter-values` (what a filter can pick, taken from the data)."""

from __future__ import annotations

import bisect
import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# Per field: the SQL of (value, count) rows of one commit (bound as the first parameter), and what it lists.
_VALUES = {
    "analyzer": (
        "SELECT r.analyzer, (SELECT COUNT(*) FROM violation v WHERE v.commit_id = r.commit_id "
        "AND v.analyzer = r.analyzer) FROM analyzer_run r WHERE r.commit_id = ?",
        "analyzers that ran (count: their violations)",
    ),
    "rule": (
        "SELECT v.rule, COUNT(*) FROM violation v WHERE v.commit_id = ? GROUP BY v.rule",
        "rules with violations (count: violations)",
    ),
    "page_content_type": (
        "SELECT ps.content_type, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps "
        "ON ps.id = cp.state_id WHERE cp.commit_id = ? AND ps.content_type IS NOT NULL "
        "AND ps.content_type != '' GROUP BY ps.content_type",
        "content types of pages (count: URLs)",
    ),
    "resource_content_type": (
        "SELECT rs.content_type, COUNT(*) FROM commit_resource cr CROSS JOIN resource_state rs "
        "ON rs.id = cr.state_id WHERE cr.commit_id = ? AND rs.content_type IS NOT NULL AND "
        "rs.content_type != '' GROUP BY rs.content_type",
        "content types of sub-resources (count: resources)",
    ),
    "status": (
        "SELECT ps.status, COUNT(*) FROM commit_page cp CROSS JOIN page_state ps ON ps.id = cp.state_id "
        "WHERE cp.commit_id = ? AND ps.status IS NOT NULL GROUP BY ps.status",
        "status codes of pages (count: URLs)",
    ),
}


def _filter_values(archive: ArchiveReader, commit: int, field: str, limit: int = 1000) -> dict[str, Any]:
    rows = archive.execute(f"SELECT * FROM ({_VALUES[field][0]}) ORDER BY 1 LIMIT ?", [commit, limit + 1])
    items = [{"value": r[0], "count": r[1]} for r in rows[:limit]]
    return {"field": field, "items": items, "more": len(rows) > limit}


# Every row of one commit a search reads: (url, title, status, is_external), in URL order.
_ROWS = (
    "SELECT u.url, ps.title, ps.status, ps.is_external FROM commit_page cp CROSS JOIN url u ON u.id = cp.url_id "
    "CROSS JOIN page_state ps ON ps.id = cp.state_id WHERE cp.commit_id = ? ORDER BY u.url"
)
_KEPT = 4  # indexes kept (one per archive and commit a process reads)


class SearchIndex:
    """A commit's URLs and titles as one lower-cased text, one line per URL: a search is a few ``str.find``.

    A LIKE over 100,000 pages reads every row for a rare word (hundreds of ms); the text is ~10 MB and
    ``find`` goes through it in a few ms, so results come as one types.
    """

    def __init__(self, rows: list[Any]) -> None:
        self.rows = [(r[0], r[1], r[2], bool(r[3])) for r in rows]
        lines = [f"{url}\t{title or ''}".replace("\n", " ").lower() for url, title, _, _ in self.rows]
        self.starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        self.text = "\n".join(lines)

    def find(self, needle: str, limit: int) -> list[int]:
        """Row numbers whose URL or title contains ``needle`` (lower case, no tab or newline), in URL order."""
        found: list[int] = []
        pos = self.text.find(needle)
        while pos >= 0 and len(found) < limit:
            line = bisect.bisect_right(self.starts, pos) - 1
            found.append(line)
            if line + 1 >= len(self.starts):
                break
            pos = self.text.find(needle, self.starts[line + 1])  # the next line: one hit per URL
        return found


_INDEXES: OrderedDict[tuple[Any, ...], SearchIndex] = OrderedDict()


def search_index(archive: ArchiveReader, commit: int) -> SearchIndex:
    """The commit's index, built on first use; a commit a live crawl still adds pages to gets a new one."""
    # A finished commit's pages never change (a resumed crawl sets a new finished_at): one row read says so.
    # Only a running commit is counted (a range scan of its pages: tens of ms at 100,000 pages).
    state = tuple(
        archive.execute("SELECT status, started_at, finished_at FROM commits WHERE id = ?", [commit])[0]
    )
    if state[0] == "running":
        state += tuple(
            archive.execute("SELECT COUNT(*), MAX(state_id) FROM commit_page WHERE commit_id = ?", [commit])[
                0
            ]
        )
    key = (str(getattr(archive, "path", id(archive))), commit, *state)
    if key not in _INDEXES:
        _INDEXES[key] = SearchIndex(archive.execute(_ROWS, [commit]))
        while len(_INDEXES) > _KEPT:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(key)
    return _INDEXES[key]


def _search(archive: ArchiveReader, commit: int, q: str, limit: int = 20) -> dict[str, Any]:
    text = q.strip()
    index = search_index(archive, commit)  # also for a blank text: the search box asks one to prepare it
    # a tab or newline never occurs inside a URL or a title line: such a search finds nothing
    hits = [] if not text or "\t" in text or "\n" in text else index.find(text.lower(), limit + 1)
    items = [
        dict(zip(("url", "title", "status", "is_external"), index.rows[i], strict=True)) for i in hits[:limit]
    ]
    return {"q": text, "items": items, "more": len(hits) > limit}


QUERIES = [
    Query(
        "search",
        "URLs of the commit (pages, failures, external pages) whose URL or title contains `q`, "
        "ignoring case; the first `limit` in URL order, and `more` when there are others. The first search of "
        "a commit reads its URLs into memory (seconds at 100,000 pages); a blank `q` finds nothing and does "
        "only that.",
        _search,
        {
            "q": {"type": "string", "description": "text to find in URLs and titles"},
            "limit": {
                "type": "integer",
                "default": 20,
                "minimum": 1,
                "maximum": 200,
                "description": "matches to return",
            },
        },
        required=("q",),
        order=14,
    ),
    Query(
        "filter-values",
        "The values a filter can take in the commit, each with a count: "
        + "; ".join(f"{name}: {what}" for name, (_, what) in _VALUES.items())
        + ".",
        _filter_values,
        {
            "field": {"type": "string", "enum": list(_VALUES), "description": "what to list"},
            "limit": {
                "type": "integer",
                "default": 1000,
                "minimum": 1,
                "maximum": 10000,
                "description": "values to return (in order; `more` says whether there are others)",
            },
        },
        required=("field",),
        order=15,
    ),
]
