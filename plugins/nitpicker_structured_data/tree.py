"""The page's items as the analyzer stores them for the viewer's tree: a bounded, plain-JSON form.

Stored as the data cell ``_items`` (a cell whose key starts with ``_`` is kept with the analyzer's results
but is no table column; docs/structured-data.md). Each item: its syntax, location (the findings' location),
whether the HTML as sent has it, and its root node; each node: ``key`` (its place: ``0``, ``0.2.0`` for the
first value of the root's third property), types, ``@id``, properties as ``[name, [values]]`` in the page's
order. ``placed`` says where each finding of the item is: ``[message, node key, property]`` (property ""
for the node itself; a property the node lacks is one that is missing there).

Bounded whatever the page holds: at most ``MAX_ENTRIES`` property names and values per page (the rest are
counted in ``more``), text cut at ``MAX_TEXT`` characters.
"""

from __future__ import annotations

from typing import Any

from .extract import Extracted, Item, Node, signature

MAX_ENTRIES = 1000
MAX_TEXT = 200
#: the tree's format, for a viewer reading cells another version stored
FORMAT = 1


def _text(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[: MAX_TEXT - 1] + "…"
    return value


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_ENTRIES
        self.omitted = 0

    def take(self) -> bool:
        if self.left <= 0:
            self.omitted += 1
            return False
        self.left -= 1
        return True


def _node(node: Node, key: str, budget: _Budget, keys: dict[int, str]) -> dict[str, Any]:
    keys[id(node)] = key
    out: dict[str, Any] = {"key": key, "types": [t.removeprefix("?") for t in node.types], "props": []}
    if node.ident:
        out["id"] = _text(node.ident)
    if node.ref:
        out["ref"] = True
    if node.cut:
        out["cut"] = True
    more = 0
    for n, (name, values) in enumerate(node.props.items()):
        if not budget.take():
            more += 1 + len(values)
            continue
        kept: list[Any] = []
        for i, value in enumerate(values):
            if not budget.take():
                more += 1
            elif isinstance(value, Node):
                kept.append(_node(value, f"{key}.{n}.{i}", budget, keys))
            else:
                kept.append(_text(value))
        out["props"].append([name.removeprefix("?"), kept])
    if more:
        out["more"] = more
    return out


def tree(
    found: Extracted, placements: list[tuple[Item, str, Node | None, str]], sent: Extracted | None
) -> dict[str, Any]:
    """The stored form of ``found``'s items; ``placements``: (item, finding message, node, property) of each
    finding report() placed; ``sent``: what the HTML as sent has (None: not read)."""
    budget = _Budget()
    keys: dict[int, str] = {}
    in_sent = {signature(item) for item in sent.items} if sent is not None else None
    items = []
    by_item: dict[int, list[list[str]]] = {}
    for n, item in enumerate(found.items):
        entry: dict[str, Any] = {
            "syntax": item.syntax,
            "location": item.location,
            "line": item.line,
            "sent": None if in_sent is None else signature(item) in in_sent,
            "root": _node(item.node, str(n), budget, keys),
            "placed": by_item.setdefault(id(item), []),
        }
        items.append(entry)
    for item, message, node, prop in placements:
        root = keys.get(id(item.node))
        if root is None:
            continue
        at = keys.get(id(node)) if node is not None else None
        # a node past the budget: the finding is shown at the item's root, its property named in the message
        by_item.setdefault(id(item), []).append([message, at or root, prop if at else ""])
    return {"format": FORMAT, "items": items, "omitted": budget.omitted}
