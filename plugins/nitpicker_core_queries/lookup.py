"""`search` (URLs and titles as one types) and `filter-values` (what a filter can pick, taken from the data)."""

from __future__ import annotations

import bisect
import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from nitpicker_core import Query, read

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

# What each field of `filter-values` lists (the values and counts come from the read model).
_VALUES = {
    "analyzer": "analyzers that ran (count: their violations)",
    "rule": "rules with violations (count: violations)",
    "page_content_type": "content types of pages (count: URLs)",
    "resource_content_type": "content types of sub-resources (count: resources)",
    "status": "status codes of pages (count: URLs)",
}


def _filter_values(archive: ArchiveReader, commit: int, field: str, limit: int = 1000) -> dict[str, Any]:
    rows = read.value_counts(archive, commit, field, limit)
    items = [{"value": r.value, "count": r.count} for r in rows[:limit]]
    return {"field": field, "items": items, "more": len(rows) > limit}


# Every row of one commit a search reads: (url, title, status, is_external), in URL order.
_FIELDS = ("url", "title", "status", "is_external")
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
    state = read.commit_state(archive, commit)
    key = (str(getattr(archive, "path", id(archive))), commit, *state)
    if key not in _INDEXES:
        _INDEXES[key] = SearchIndex(
            [tuple(r.values()) for r in read.page_rows(archive, commit, _FIELDS, ordered=True)]
        )
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
        + "; ".join(f"{name}: {what}" for name, what in _VALUES.items())
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
