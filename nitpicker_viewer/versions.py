"""The page view's "Raw vs rendered" tab: the page's HTML as sent beside its rendered HTML (the `page-versions`
query), compared field by field, link by link and line by line.

Plain data for the template (templates/_versions.html), which escapes every value: the crawled HTML is shown as
text only and never runs in the viewer's origin. The work is bounded: the query returns at most ``MAX_CHARS``
of each version, the line diff reads at most ``MAX_LINES`` lines of each, and runs of more than
``2 * CONTEXT + 1`` identical lines are folded into one row that counts them; the page says what was cut.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from itertools import zip_longest
from typing import Any

QUERY = "page-versions"
MAX_CHARS = 200_000  # of each version's HTML read for the line diff (the records read the whole HTML)
MAX_LINES = 3_000  # lines of each version the line diff compares
CONTEXT = 3  # identical lines kept around each change
LINKS_SHOWN = 200  # links listed of each "only in" list (the count is exact)
#: The compared fields, in the table's order: the record's key and whether it is a count (never "only").
FIELDS = (
    ("title", False),
    ("description", False),
    ("canonicals", False),
    ("robots", False),
    ("h1s", False),
    ("link_count", True),
    ("main_words", True),
)


def field_row(name: str, sent: Any, rendered: Any, count: bool) -> dict[str, Any]:
    """One row of the comparison: both values and its state (same, changed, only_rendered, only_raw)."""
    if count:
        state = "same" if sent == rendered else "changed"
    else:
        has_sent, has_rendered = bool(sent), bool(rendered)  # None, "" and [] are absent
        if sent == rendered or not (has_sent or has_rendered):
            state = "same"
        elif not has_sent:
            state = "only_rendered"
        elif not has_rendered:
            state = "only_raw"
        else:
            state = "changed"
    return {"field": name, "sent": sent, "rendered": rendered, "state": state}


def only_in(links: list[str], other: list[str]) -> dict[str, Any]:
    """The links of ``links`` that ``other`` has not: the first ``LINKS_SHOWN`` and how many in all."""
    seen = set(other)
    found = [link for link in links if link not in seen]
    return {"items": found[:LINKS_SHOWN], "total": len(found), "more": max(0, len(found) - LINKS_SHOWN)}


def _lines(version: dict[str, Any]) -> tuple[list[str], bool]:
    """The lines the diff compares of one version, and whether any of the version was left out."""
    lines = str(version.get("html") or "").splitlines()
    return lines[:MAX_LINES], bool(version.get("truncated")) or len(lines) > MAX_LINES


def line_rows(sent: list[str], rendered: list[str]) -> Iterator[dict[str, Any]]:
    """Side-by-side rows of a line diff: ``change`` is equal, changed, removed (only as sent), inserted (only
    rendered) or fold (``count`` identical lines not shown); line numbers count from 1."""
    matcher = difflib.SequenceMatcher(None, sent, rendered, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            size = i2 - i1
            keep = (
                range(size)
                if size <= 2 * CONTEXT + 1
                else [*range(CONTEXT), -1, *range(size - CONTEXT, size)]
            )
            for k in keep:
                if k < 0:
                    yield {"change": "fold", "count": size - 2 * CONTEXT}
                else:
                    yield {
                        "change": "equal",
                        "a": i1 + k + 1,
                        "left": sent[i1 + k],
                        "b": j1 + k + 1,
                        "right": rendered[j1 + k],
                    }
            continue
        change = {"replace": "changed", "delete": "removed", "insert": "inserted"}[tag]
        pairs = zip_longest(range(i1, i2), range(j1, j2))
        for a, b in pairs:
            row_change = (
                change if a is not None and b is not None else ("removed" if b is None else "inserted")
            )
            yield {
                "change": row_change,
                "a": None if a is None else a + 1,
                "left": None if a is None else sent[a],
                "b": None if b is None else b + 1,
                "right": None if b is None else rendered[b],
            }


def comparison(answer: dict[str, Any] | None) -> dict[str, Any]:
    """What the tab shows of a `page-versions` answer: ``state`` says whether there is a comparison (``ok``) or
    why not (``unrendered``, ``no_sent``, ``no_rendered``, ``unreadable``), with the reason stored."""
    if answer is None:
        return {"state": "no_rendered", "reason": None}
    sent, rendered = answer.get("sent"), answer.get("rendered")
    if answer.get("unrendered"):
        return {"state": "unrendered", "reason": answer["unrendered"]}
    if rendered is None:
        return {"state": "no_rendered", "reason": None}
    if sent is None:
        return {"state": "no_sent", "reason": answer.get("source_omitted")}
    a, b = sent.get("record"), rendered.get("record")
    if a is None or b is None:
        return {"state": "unreadable", "reason": None}
    left, left_cut = _lines(sent)
    right, right_cut = _lines(rendered)
    rows = [field_row(name, a.get(name), b.get(name), count) for name, count in FIELDS]
    lines = list(line_rows(left, right))
    return {
        "state": "ok",
        "fields": rows,
        "differs": sum(row["state"] != "same" for row in rows),
        "only_rendered": only_in(b["links"], a["links"]),
        "only_raw": only_in(a["links"], b["links"]),
        "lines": lines,
        "line_changes": sum(row["change"] not in ("equal", "fold") for row in lines),
        "identical": sent.get("html") == rendered.get("html") and not (left_cut or right_cut),
        "cut": left_cut or right_cut,
        "sizes": {"sent": sent.get("length", 0), "rendered": rendered.get("length", 0)},
        "limits": {"chars": MAX_CHARS, "lines": MAX_LINES},
    }
