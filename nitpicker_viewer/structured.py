"""The structured-data tab's tree: the items the `structured-data` analyzer stored for a page (its data cell
``_items``), each finding placed at the property it is about, or at the node where a missing one should be.

Plain data for the template (templates/_structured.html), which escapes every value: nothing of the page is
ever markup here.
"""

from __future__ import annotations

from typing import Any

ANALYZER = "structured-data"
CELL = "_items"
FORMAT = 1


def _view(node: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "key": str(node.get("key", "")),
        "types": [str(t) for t in node.get("types") or []],
        "id": node.get("id") or "",
        "ref": bool(node.get("ref")),
        "cut": bool(node.get("cut")),
        "more": int(node.get("more") or 0),
        "findings": [],
        "props": [],
    }
    nodes[out["key"]] = out
    for name, values in node.get("props") or []:
        shown = [_view(v, nodes) if isinstance(v, dict) else v for v in values]
        out["props"].append({"name": str(name), "values": shown, "findings": []})
    return out


def tree(stored: Any, violations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``{"items", "page", "omitted"}`` from the stored cell and the page's violations (all analyzers');
    None when there is no stored tree of a known format (not analyzed, or by an older analyzer).

    Each item: ``syntax``, ``location``, ``line``, ``sent`` (True, False: only in the rendered page, None:
    not known), ``root`` (nodes: ``types``, ``id``, ``ref``, ``props`` of ``name``, ``values`` and
    ``findings``, node-level ``findings`` each with the ``prop`` it lacks) and ``findings`` about the item
    as a whole. ``page``: findings about no item (limits reached, syntax that could not be read)."""
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        return None
    nodes: dict[str, dict[str, Any]] = {}
    items = []
    by_location: dict[str, dict[str, Any]] = {}
    for item in stored.get("items") or []:
        view = {
            "syntax": item.get("syntax", ""),
            "location": item.get("location", ""),
            "line": item.get("line"),
            "sent": item.get("sent"),
            "root": _view(item.get("root") or {}, nodes),
            "findings": [],
            "placed": {},
        }
        for message, key, prop in item.get("placed") or []:
            view["placed"].setdefault(message, []).append((key, prop))
        items.append(view)
        by_location[view["location"]] = view
    page = []
    for v in violations:
        if v.get("analyzer") != ANALYZER:
            continue
        item = by_location.get(v.get("location", ""))
        if item is None:
            page.append(v)
            continue
        spots = item["placed"].get(v.get("message", ""))
        if not spots:
            item["findings"].append(v)  # about the item as a whole: eligible, only in the rendered page
            continue
        key, prop = spots.pop(0)
        node = nodes.get(key) or item["root"]
        named = next((p for p in node["props"] if p["name"] == prop), None) if prop else None
        if named is not None:
            named["findings"].append(v)
        else:  # the node itself, or a property it lacks (missing: shown where it should be)
            node["findings"].append({**v, "prop": prop})
    for item in items:
        del item["placed"]
    return {"items": items, "page": page, "omitted": int(stored.get("omitted") or 0)}
