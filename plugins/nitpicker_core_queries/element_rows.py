"""Where a page finding is: the line:col of the element it is about, in the stored HTML it was made from.

Looked up for the rows asked for only (a page of `issue-urls`, one URL's findings): each page's HTML is
read by its hash and scanned once (``nitpicker_core.scan_elements``, a fraction of a millisecond), and the
scans of the last pages read are kept, so the checks of one page, or a list paged through again, scan
nothing twice. Nothing is read for the other pages of the commit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nitpicker_core import (
    RENDERED_HTML,
    SENT_HTML,
    ElementTag,
    Finding,
    PageElements,
    Where,
    read,
    scan_elements,
)

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

POSITIONS = 5  # line:col of at most this many elements of one finding in a row; the rest are counted
_KEPT = 512  # scans kept, by HTML hash (the same bytes in any archive) and extent: a few pages of rows
_SCANS: OrderedDict[tuple[str, bool], PageElements | None] = OrderedDict()
_LOCK = threading.Lock()  # the viewer answers from several threads


def _scanned(archive: ArchiveReader, sha256: str, head_only: bool) -> PageElements | None:
    """The page's elements, its head's only (``head_only``) unless the whole page was scanned already."""
    with _LOCK:
        for key in ((sha256, False), (sha256, True)) if head_only else ((sha256, False),):
            if key in _SCANS:
                _SCANS.move_to_end(key)
                return _SCANS[key]
    text = archive.html_by_sha256(sha256)
    found = scan_elements(text, head_only) if text else None
    with _LOCK:
        _SCANS[(sha256, head_only)] = found
        while len(_SCANS) > _KEPT:
            _SCANS.popitem(last=False)
    return found


def _located(archive: ArchiveReader, sha256: str, where: Where) -> list[ElementTag]:
    """The elements ``where`` picks in the stored HTML ``sha256``: in its head first when they belong there."""
    for head_only in (True, False) if where.head else (False,):
        page = _scanned(archive, sha256, head_only)
        if page is None:
            return []
        try:
            tags = list(where.find(page))
        except Exception:  # noqa: BLE001 - plugin code: a finding without a line, never a failed list
            return []
        if tags or page.complete:
            return tags
    return []


def _empty(item: dict[str, Any]) -> None:
    item.update(line=None, col=None, position=None, html=None, element=None)


def with_elements(
    archive: ArchiveReader,
    commits: dict[str, int | None],
    items: list[dict[str, Any]],
    locate: Callable[[Finding], Where | None],
) -> list[dict[str, Any]]:
    """Page findings completed with where their element is: ``line``/``col`` of the first element (1-based,
    as the anchors' of link findings), ``position`` (every element's line:col: the first few, then how many
    more), ``html`` (the stored HTML the line is in: "rendered", or "sent" for the HTML as sent, which a page
    not rendered, or rendered to the same bytes, has as its only HTML) and ``element`` (the tag's name: the
    element, or where a missing one belongs, e.g. "head"). All None when the finding is about no element,
    the element is not in that HTML (declared in a header or a sitemap), or that HTML was not kept.

    ``commits`` maps a finding state to the commit its page is read on (a fixed finding: the base).
    """
    wanted: dict[int, list[tuple[dict[str, Any], Where]]] = {}
    for item in items:
        _empty(item)
        commit = commits.get(item["state"])
        if commit is None:
            continue
        try:
            where = locate(Finding(item["url"], item["detail"]))
        except Exception:  # noqa: BLE001 - plugin code: a finding without a line, never a failed list
            where = None
        if where is not None:
            wanted.setdefault(commit, []).append((item, where))
    for commit, chunk in wanted.items():
        hashes = read.page_html_hashes(archive, commit, {item["url"] for item, _ in chunk})
        for item, where in chunk:
            stored = hashes.get(item["url"])
            if stored is None:
                continue
            sha = stored.sent if where.html == SENT_HTML else stored.rendered
            if sha is None:
                continue
            tags = _located(archive, sha, where)
            if not tags:
                continue
            first = tags[0]
            more = f" (+{len(tags) - POSITIONS})" if len(tags) > POSITIONS else ""
            item.update(
                line=first.line,
                col=first.col,
                position=", ".join(f"{t.line}:{t.col}" for t in tags[:POSITIONS]) + more,
                html=SENT_HTML if where.html == SENT_HTML or sha == stored.sent else RENDERED_HTML,
                element=first.name,
            )
    return items
