"""JSON-LD, Microdata and RDFa items of one HTML document, read with extruct, as one plain tree form.

Every item becomes a ``Node``: its types and its properties, schema.org terms by their short names
(``Product``, ``offers``), other vocabularies' terms as the IRIs they are (the validator leaves them alone).
``@id`` references are resolved within the page (JSON-LD across all its blocks, as search engines merge
them); a reference back to a node being expanded (an ``@id`` loop) stays a reference. Bounded: at most
``max_items`` nodes and ``max_depth`` levels per page, a JSON-LD block of at most ``max_block`` characters;
what is cut is said (``Extracted.limits``), never raised.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SCHEMA_PREFIXES = ("https://schema.org/", "http://schema.org/", "schema:", "//schema.org/")
SYNTAXES = ("json-ld", "microdata", "rdfa")
DEFAULT_MAX_ITEMS = 2000
DEFAULT_MAX_DEPTH = 20
DEFAULT_MAX_BLOCK = 2_000_000
_TYPEOF = re.compile(r"\btypeof\s*=", re.IGNORECASE)

Value = Any  # str | int | float | bool | Node


@dataclass
class Node:
    """One item: ``types`` and ``props`` (name -> values). ``ref``: the expansion of an ``@id`` defined
    elsewhere on the page (validated where it is defined); ``cut``: deeper levels were left out."""

    types: list[str] = field(default_factory=list)
    props: dict[str, list[Value]] = field(default_factory=dict)
    ident: str = ""
    ref: bool = False
    cut: bool = False

    def plain(self) -> Any:
        """A JSON-able form (what the comparison of the HTML as sent and the rendered page hashes)."""
        return {
            "@type": self.types,
            **{
                k: [v.plain() if isinstance(v, Node) else v for v in vs]
                for k, vs in sorted(self.props.items())
            },
        }


@dataclass
class Item:
    """A top-level item: its syntax, its index among the page's items of that syntax, its line if known."""

    syntax: str
    index: int
    node: Node
    line: int | None = None
    #: the line is of the rendered page's HTML (the item is not in the HTML as sent, or that was not read)
    rendered_line: bool = False

    @property
    def location(self) -> str:
        where = f"{self.syntax} item {self.index + 1}"
        if not self.line:
            return where
        return f"{where}, line {self.line}" + (" of the rendered page" if self.rendered_line else "")


@dataclass
class Extracted:
    items: list[Item] = field(default_factory=list)
    #: what could not be read: (syntax, index or None, message)
    errors: list[tuple[str, int | None, str]] = field(default_factory=list)
    #: limits reached (the page's items past them are not validated)
    limits: list[str] = field(default_factory=list)


def short(term: str) -> str:
    """A schema.org IRI or prefixed name as its short name; any other term unchanged."""
    for prefix in SCHEMA_PREFIXES:
        if term.startswith(prefix):
            return term[len(prefix) :].strip("/")
    return term


class _Budget:
    def __init__(self, max_items: int, max_depth: int) -> None:
        self.left, self.max_depth = max_items, max_depth
        self.spent = False
        self.too_deep = False

    def take(self) -> bool:
        if self.left <= 0:
            self.spent = True
            return False
        self.left -= 1
        return True


# --- JSON-LD ---------------------------------------------------------------------------------------------


def _schema_context(context: Any) -> bool:
    """Whether a JSON-LD @context makes plain terms schema.org's (a string, a list or an @vocab naming it)."""
    if isinstance(context, str):
        return "schema.org" in context
    if isinstance(context, list):
        return any(_schema_context(c) for c in context)
    if isinstance(context, dict):
        return "schema.org" in str(context.get("@vocab", "")) or "schema.org" in str(
            context.get("schema", "")
        )
    return False


class _JsonLd:
    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        self.defined: dict[str, tuple[dict[str, Any], bool]] = {}  # @id -> (node, schema context)

    def collect(self, data: Any, schema: bool, depth: int = 0) -> None:
        """Every node with an @id and more than it, anywhere in ``data`` (iteratively bounded by depth)."""
        if depth > self.budget.max_depth:
            return
        if isinstance(data, list):
            for d in data:
                self.collect(d, schema, depth + 1)
        elif isinstance(data, dict):
            schema = _schema_context(data["@context"]) if "@context" in data else schema
            ident = data.get("@id")
            if isinstance(ident, str) and len(data) > 1 and ident not in self.defined:
                self.defined[ident] = (data, schema)
            for key, value in data.items():
                if key != "@context" and isinstance(value, (dict, list)):
                    self.collect(value, schema, depth + 1)

    def term(self, name: str, schema: bool) -> str:
        name = short(name)
        if schema or "/" in name or ":" in name:
            return name
        return f"?{name}"  # a plain term with no schema.org context: unknown vocabulary

    def node(self, data: dict[str, Any], schema: bool, depth: int, stack: tuple[str, ...]) -> Node:
        if "@context" in data:
            schema = _schema_context(data["@context"])
        raw_types = data.get("@type", [])
        types = [self.term(t, schema) for t in (raw_types if isinstance(raw_types, list) else [raw_types])]
        ident = data.get("@id") if isinstance(data.get("@id"), str) else ""
        node = Node([t for t in types if isinstance(t, str)], ident=ident or "")
        if ident:
            stack = (*stack, ident)
        if depth >= self.budget.max_depth:
            node.cut = True
            self.budget.too_deep = True
            return node
        for key, value in data.items():
            if key.startswith("@"):
                continue
            values = value if isinstance(value, list) else [value]
            out = node.props.setdefault(self.term(key, schema), [])
            for v in values:
                converted = self.value(v, schema, depth + 1, stack)
                if converted is not None:
                    out.extend(converted if isinstance(converted, list) else [converted])
        return node

    def value(self, v: Any, schema: bool, depth: int, stack: tuple[str, ...]) -> Any:
        if isinstance(v, (str, int, float, bool)):
            return v
        if isinstance(v, list):  # a list in a list (JSON-LD forbids it; read it flat)
            return [x for x in (self.value(i, schema, depth, stack) for i in v) if x is not None]
        if not isinstance(v, dict):
            return None
        if "@value" in v:
            inner = v["@value"]
            return inner if isinstance(inner, (str, int, float, bool)) else None
        if "@list" in v or "@set" in v:
            return self.value(v.get("@list", v.get("@set")), schema, depth, stack)
        ident = v.get("@id")
        if isinstance(ident, str) and len(v) == 1:  # a reference
            if ident in stack or ident not in self.defined:
                return ident  # an @id loop, or a node not on this page: the IRI itself
            if not self.budget.take():
                return ident
            target, target_schema = self.defined[ident]
            node = self.node(target, target_schema, depth, stack)
            node.ref = True
            return node
        if not self.budget.take():
            return None
        return self.node(v, schema, depth, stack)


def _jsonld(document: Any, budget: _Budget, max_block: int, out: Extracted) -> None:
    from extruct.jsonld import JsonLdExtractor

    blocks: list[tuple[int, Any]] = []
    scripts = document.xpath('//script[@type="application/ld+json"]')
    extractor = JsonLdExtractor()
    for n, script in enumerate(scripts):
        size = len(script.text or "")
        if size > max_block:
            out.limits.append(f"JSON-LD block {n + 1}: {size:,} characters over the limit of {max_block:,}")
            continue
        try:
            data = extractor.extract_items(script)  # this block only: one bad block loses no other
        except RecursionError:
            out.limits.append(f"JSON-LD block {n + 1}: nested too deeply to parse")
            continue
        except ValueError as exc:
            out.errors.append(("json-ld", n, f"JSON-LD block {n + 1} does not parse: {exc}"))
            continue
        blocks.append((script.sourceline or 0, data))
    reader = _JsonLd(budget)
    for _, data in blocks:
        reader.collect(data, False)
    index = 0
    for line, data in blocks:
        for top in data:
            if not isinstance(top, dict):
                continue
            schema = _schema_context(top.get("@context"))
            graph = top.get("@graph")
            nodes = graph if isinstance(graph, list) else [top]
            for entry in nodes:
                if not isinstance(entry, dict) or not budget.take():
                    continue
                node = reader.node(
                    entry, _schema_context(entry["@context"]) if "@context" in entry else schema, 0, ()
                )
                out.items.append(Item("json-ld", index, node, line or None))
                index += 1


# --- Microdata -------------------------------------------------------------------------------------------


def _microdata_node(data: dict[str, Any], budget: _Budget, depth: int) -> Node:
    raw = data.get("type", [])
    types = [short(t) for t in (raw if isinstance(raw, list) else [raw]) if isinstance(t, str)]
    node = Node(types, ident=str(data.get("id", "")))
    if depth >= budget.max_depth:
        node.cut = True
        budget.too_deep = True
        return node
    for key, value in (data.get("properties") or {}).items():
        values = value if isinstance(value, list) else [value]
        out = node.props.setdefault(short(key), [])
        for v in values:
            if isinstance(v, dict):
                if budget.take():
                    out.append(_microdata_node(v, budget, depth + 1))
            elif isinstance(v, (str, int, float, bool)):
                out.append(v)
    return node


def _microdata(document: Any, base_url: str, budget: _Budget, out: Extracted) -> None:
    from extruct.w3cmicrodata import MicrodataExtractor

    try:
        found = MicrodataExtractor(add_html_node=True).extract_items(document, base_url)
    except (ValueError, RecursionError) as exc:
        out.errors.append(("microdata", None, f"Microdata could not be read: {exc}"))
        return
    for index, data in enumerate(found):
        if not isinstance(data, dict) or not budget.take():
            continue
        html_node = data.get("htmlNode")
        line = getattr(html_node, "sourceline", None)
        out.items.append(Item("microdata", index, _microdata_node(data, budget, 0), line))


# --- RDFa ------------------------------------------------------------------------------------------------


def _rdfa(html: str, base_url: str, budget: _Budget, out: Extracted) -> None:
    if not _TYPEOF.search(html):  # no typed RDFa node: nothing to validate (og: meta tags are not items)
        return
    from extruct.rdfa import RDFaExtractor

    try:
        graph = RDFaExtractor().extract(html, base_url=base_url)
    except Exception as exc:  # pyRdfa and rdflib raise many kinds; any is "could not be read" for this page
        out.errors.append(("rdfa", None, f"RDFa could not be read: {type(exc).__name__}: {exc}"))
        return
    nodes = {n["@id"]: n for n in graph if isinstance(n, dict) and isinstance(n.get("@id"), str)}
    referenced = {
        v["@id"]
        for n in nodes.values()
        for key, vs in n.items()
        if not key.startswith("@") and isinstance(vs, list)
        for v in vs
        if isinstance(v, dict) and "@id" in v
    }

    def convert(data: dict[str, Any], depth: int, stack: tuple[str, ...]) -> Node:
        node = Node([short(t) for t in data.get("@type", []) if isinstance(t, str)], ident=data["@id"])
        if depth >= budget.max_depth:
            node.cut = True
            budget.too_deep = True
            return node
        for key, values in data.items():
            if key.startswith("@") or not key.startswith(SCHEMA_PREFIXES):
                continue
            out_values = node.props.setdefault(short(key), [])
            for v in values if isinstance(values, list) else []:
                if "@value" in v:
                    out_values.append(v["@value"])
                elif "@id" in v:
                    target = nodes.get(v["@id"])
                    if target is None or v["@id"] in stack or not budget.take():
                        out_values.append(v["@id"])
                    else:
                        out_values.append(convert(target, depth + 1, (*stack, v["@id"])))
        return node

    roots = []
    for ident, data in nodes.items():
        schema_types = [
            t for t in data.get("@type", []) if isinstance(t, str) and t.startswith(SCHEMA_PREFIXES)
        ]
        if not schema_types or ident in referenced or not budget.take():
            continue
        roots.append(convert(data, 0, (ident,)))
    # pyRdfa's graph has no document order (blank node ids are random): numbered in a stable order instead
    roots.sort(key=lambda n: json.dumps(n.plain(), sort_keys=True, default=str))
    out.items.extend(Item("rdfa", index, root) for index, root in enumerate(roots))


def extract(
    html: str,
    base_url: str,
    document: Any = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_block: int = DEFAULT_MAX_BLOCK,
) -> Extracted:
    """The items of ``html`` in the three syntaxes; ``document``: its lxml tree when already parsed."""
    import lxml.html

    out = Extracted()
    if document is None:
        document = lxml.html.document_fromstring(html) if html.strip() else lxml.html.fromstring("<html/>")
    budget = _Budget(max_items, max_depth)
    _jsonld(document, budget, max_block, out)
    _microdata(document, base_url, budget, out)
    _rdfa(html, base_url, budget, out)
    if budget.spent:
        out.limits.append(f"more than {max_items:,} items and nested items: the rest were not read")
    if budget.too_deep:
        out.limits.append(f"items nested more than {max_depth} levels deep: the deeper levels were not read")
    return out


def signature(item: Item) -> str:
    """What identifies an item's content across the HTML as sent and the rendered page."""
    return item.syntax + json.dumps(item.node.plain(), sort_keys=True, default=str)
