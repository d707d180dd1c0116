"""Where a link finding is: each (page, target) pair's anchors (text, line:col) and the target's answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker_core import read

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader

POSITIONS = 5  # line:col of at most this many anchors of one link in a row; the rest are counted


def _position(anchor: read.AnchorPosition) -> str | None:
    if anchor.line is None:
        return None
    return f"{anchor.line}:{anchor.col}" if anchor.col is not None else str(anchor.line)


# A finding's detail "TEXT → TARGET" (anchor-text-non-descriptive): the link's text, then its target
TEXT_AND_TARGET = " → "


def _split(detail: str) -> tuple[str | None, str]:
    """(the anchor text the detail names, or None; the link's target as written)."""
    if TEXT_AND_TARGET in detail:
        text, target = detail.rsplit(TEXT_AND_TARGET, 1)
        return text, target
    return None, detail


def with_links(
    archive: ArchiveReader, commits: dict[str, int | None], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Link findings completed: ``target``, anchor ``text``, ``line``/``col`` (``position``), the target's
    ``status``, ``final_status`` (after its redirects), ``error_kind``, and ``answer`` ("301 → 404", "dns").

    ``commits`` maps a finding state to the commit its link is read on (a fixed link: the base). A link
    written several times on its page gives its first anchor's text, line and col, every anchor's line:col in
    ``position`` (the first few, then how many more), and ``anchors`` counts them. A detail "TEXT → TARGET"
    (a URL has no spaces) is the link to TARGET written with TEXT: only the anchors with that text count.
    """
    by_commit: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        commit = commits.get(item["state"])
        item.update(
            target=_split(item["detail"])[1],
            text=None,
            status=None,
            final_status=None,
            error_kind=None,
            answer=None,
            line=None,
            col=None,
            position=None,
            anchors=0,
        )
        if commit is not None:
            by_commit.setdefault(commit, []).append(item)
    for commit, chunk in by_commit.items():
        pairs = sorted({(i["url"], i["target"]) for i in chunk})
        anchors = read.link_anchors(archive, commit, pairs)
        targets = {
            t: a._asdict() for t, a in read.link_targets(archive, commit, (t for _, t in pairs)).items()
        }
        for item in chunk:
            found = anchors.get((item["url"], item["target"])) or []
            text = _split(item["detail"])[0]
            if text is not None:
                found = [a for a in found if (a.text or "").strip() == text] or found
            if found:
                first = found[0]
                where = [p for p in (_position(a) for a in found[:POSITIONS]) if p]
                more = f" (+{len(found) - POSITIONS})" if len(found) > POSITIONS else ""
                item.update(
                    text=first.text,
                    line=first.line,
                    col=first.col,
                    position=", ".join(where) + more if where else None,
                    anchors=len(found),
                )
            item.update(_answer(targets.get(item["target"]) or {}))
    return items


def _answer(target: dict[str, Any]) -> dict[str, Any]:
    """The target's status, the status at the end of its redirects, its error kind, and all that as words."""
    status = target.get("status")
    final = target.get("final_status") if target.get("final_url") else None
    shown = status if final is None else final
    kind = target.get("error_kind") if shown is None else None
    parts = [str(s) for s in (status, final) if s is not None]
    answer = " → ".join(parts) if parts else None
    if kind:
        answer = f"{answer} → {kind}" if answer else kind
    return {"status": status, "final_status": final, "error_kind": kind, "answer": answer}
