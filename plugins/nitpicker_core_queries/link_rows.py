"""Where a link finding is: each (page, target) pair's anchors (text, line:col) and the target's answer."""

from __future__ import annotations

import json
from typing import Any

from nitpicker_core.archive import digest

# The target's own answer, and where it redirects to, the answer at the end (the crawler stores the final
# destination); the error kind from the state or else the commit's crawl errors.
_TARGETS = (
    "SELECT tu.url AS target, ps.status, fs.status AS final_status, fu.url AS final_url, "
    "COALESCE(fs.error_kind, ps.error_kind, "
    "(SELECT MIN(ce.kind || '') FROM crawl_error ce WHERE ce.commit_id = ?1 AND ce.url_id IN (tu.id, fu.id))) "
    "AS error_kind FROM url tu LEFT JOIN commit_page cp ON cp.commit_id = ?1 AND cp.url_id = tu.id "
    "LEFT JOIN page_state ps ON ps.id = cp.state_id LEFT JOIN url fu ON fu.id = ps.redirect_dest_url_id "
    "LEFT JOIN commit_page fc ON fc.commit_id = ?1 AND fc.url_id = fu.id "
    "LEFT JOIN page_state fs ON fs.id = fc.state_id WHERE tu.url IN (SELECT value FROM json_each(?2))"
)


POSITIONS = 5  # line:col of at most this many anchors of one link in a row; the rest are counted


def _anchors(
    archive: Any, commit: int, pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    columns = digest.anchor_columns(archive.execute)
    sql = (
        f"SELECT su.url AS source, tu.url AS target, a.text, {digest.position(columns)} "
        "FROM (SELECT json_extract(value, '$[0]') AS source, json_extract(value, '$[1]') AS target "
        "FROM json_each(?)) p JOIN url su ON su.url = p.source "
        "JOIN commit_page sc ON sc.commit_id = ? AND sc.url_id = su.id "
        "JOIN url tu ON tu.url = p.target JOIN anchor a ON a.state_id = sc.state_id AND a.target_url_id = tu.id "
        "ORDER BY su.url, a.ordinal"
    )
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in archive.execute(sql, [json.dumps(pairs), commit]):
        found.setdefault((r["source"], r["target"]), []).append(
            {"text": r["text"], "line": r["line"], "col": r["col"]}
        )
    return found


def _position(anchor: dict[str, Any]) -> str | None:
    if anchor["line"] is None:
        return None
    return f"{anchor['line']}:{anchor['col']}" if anchor["col"] is not None else str(anchor["line"])


def with_links(
    archive: Any, commits: dict[str, int | None], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Link findings completed: ``target``, anchor ``text``, ``line``/``col`` (``position``), the target's
    ``status``, ``final_status`` (after its redirects), ``error_kind``, and ``answer`` ("301 → 404", "dns").

    ``commits`` maps a finding state to the commit its link is read on (a fixed link: the base). A link
    written several times on its page gives its first anchor's text, line and col, every anchor's line:col in
    ``position`` (the first few, then how many more), and ``anchors`` counts them.
    """
    by_commit: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        commit = commits.get(item["state"])
        item.update(
            target=item["detail"],
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
        pairs = sorted({(i["url"], i["detail"]) for i in chunk})
        anchors = _anchors(archive, commit, pairs)
        targets = {
            r["target"]: dict(r)
            for r in archive.execute(_TARGETS, [commit, json.dumps(sorted({t for _, t in pairs}))])
        }
        for item in chunk:
            found = anchors.get((item["url"], item["detail"])) or []
            if found:
                first = found[0]
                where = [p for p in (_position(a) for a in found[:POSITIONS]) if p]
                more = f" (+{len(found) - POSITIONS})" if len(found) > POSITIONS else ""
                item.update(
                    text=first["text"],
                    line=first["line"],
                    col=first["col"],
                    position=", ".join(where) + more if where else None,
                    anchors=len(found),
                )
            item.update(_answer(targets.get(item["detail"]) or {}))
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
