"""The page view's "Raw vs rendered" tab: the page's HTML as sent beside its rendered HTML (the `page-versions`
query), compared field by field, link by link and line by line.

Plain data for the template (templates/_versions.html), which escapes every value: the crawled HTML is shown as
text only and never runs in the viewer's origin. The work is bounded: the query returns at most ``MAX_CHARS``
of each version, the line diff reads at most ``MAX_LINES`` lines of each and aligns them for at most
``ALIGN_SECONDS`` (then pairs them by position), and runs of more than ``2 * CONTEXT + 1`` identical lines are
folded into one row that counts them; the page says what was cut.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator
from itertools import zip_longest
from typing import Any

QUERY = "page-versions"
MAX_CHARS = 200_000  # of each version's HTML read for the line diff (the records read the whole HTML)
MAX_LINES = 3_000  # lines of each version the line diff compares
ALIGN_SECONDS = 0.5  # aligning the lines may take this long; past it, lines are paired by position
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


class _TooSlow(Exception):
    pass


class _Bounded(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """difflib's matcher that gives up at ``deadline``: aligning many repeated lines (rows of ``</div>`` and
    ``<li>``) can take minutes, and the page view must answer in a moment whatever the page is."""

    deadline = 0.0

    def find_longest_match(self, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() > self.deadline:
            raise _TooSlow
        return super().find_longest_match(*args, **kwargs)


Opcode = tuple[str, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)


def opcodes(sent: list[str], rendered: list[str]) -> tuple[list[Opcode], bool]:
    """difflib's opcodes turning ``sent`` into ``rendered``, and whether they are aligned: past
    ``ALIGN_SECONDS`` the lines are paired by position instead (line n beside line n)."""
    matcher = _Bounded(None, sent, rendered)  # autojunk: lines in over 1 % of a long page align no others
    matcher.deadline = time.monotonic() + ALIGN_SECONDS
    try:
        return list(matcher.get_opcodes()), True
    except _TooSlow:
        found: list[Opcode] = []
        for i, (a, b) in enumerate(zip(sent, rendered, strict=False)):  # the longer one's rest: below
            tag = "equal" if a == b else "replace"
            if found and found[-1][0] == tag:
                found[-1] = (tag, found[-1][1], i + 1, found[-1][3], i + 1)
            else:
                found.append((tag, i, i + 1, i, i + 1))
        common = min(len(sent), len(rendered))
        if len(sent) > common:
            found.append(("delete", common, len(sent), common, common))
        if len(rendered) > common:
            found.append(("insert", common, common, common, len(rendered)))
        return found, False


def line_rows(sent: list[str], rendered: list[str], codes: list[Opcode]) -> Iterator[dict[str, Any]]:
    """Side-by-side rows of a line diff: ``change`` is equal, changed, removed (only as sent), inserted (only
    rendered) or fold (``count`` identical lines not shown); line numbers count from 1."""
    for tag, i1, i2, j1, j2 in codes:
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
        for a, b in zip_longest(range(i1, i2), range(j1, j2)):
            row: dict[str, Any] = {
                "change": "changed"
                if a is not None and b is not None
                else ("removed" if b is None else "inserted"),
                "a": None if a is None else a + 1,
                "left": None if a is None else sent[a],
                "b": None if b is None else b + 1,
                "right": None if b is None else rendered[b],
            }
            if row["change"] == "changed":
                row["left_parts"], row["right_parts"] = differing_middle(row["left"], row["right"])
            yield row


def differing_middle(left: str, right: str) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """Each line cut in three around what differs: (common start, the rest up to the common end, common end).

    Linear in the lines' length, so a changed line of any size is marked at once (one edit is marked
    exactly; several are marked from the first to the last)."""
    start = 0
    limit = min(len(left), len(right))
    while start < limit and left[start] == right[start]:
        start += 1
    end = 0
    while end < limit - start and left[-1 - end] == right[-1 - end]:
        end += 1
    return (
        (left[:start], left[start : len(left) - end], left[len(left) - end :]),
        (right[:start], right[start : len(right) - end], right[len(right) - end :]),
    )


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
    codes, aligned = opcodes(left, right)
    lines = list(line_rows(left, right, codes))
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
        "aligned": aligned,
        "sizes": {"sent": sent.get("length", 0), "rendered": rendered.get("length", 0)},
        "limits": {"chars": MAX_CHARS, "lines": MAX_LINES, "seconds": ALIGN_SECONDS},
    }
