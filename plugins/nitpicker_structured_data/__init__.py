"""The `structured-data` analyzer: JSON-LD, Microdata and RDFa read with extruct, validated against the
schema.org vocabulary and the rich-result requirements of the common types (docs/structured-data.md)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    PageInput,
    PageReport,
    Register,
    RegisterSetting,
    Rule,
    UsageError,
    Violation,
    hookimpl,
    load_translations,
)

from .extract import (
    DEFAULT_MAX_BLOCK,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ITEMS,
    Extracted,
    Item,
    Node,
    extract,
    signature,
)
from .tree import tree

NAME = "structured-data"
#: the data cell holding the page's items (tree.py): stored with the results, not a table column
TREE_CELL = "_items"
_SURROGATE = re.compile("[\ud800-\udfff]")
_SCHEMA = "https://schema.org/docs/schemas.html"
_GALLERY = "https://developers.google.com/search/docs/appearance/structured-data/search-gallery"
_JS = "https://developers.google.com/search/docs/appearance/structured-data/generate-structured-data-with-javascript"
TRANSLATIONS = load_translations(Path(__file__).with_name("messages"))
# rule id -> (severity, title, priority, type, description, fix, help URL); the priority is the one the
# severity has on nitpicker's scale (error high, warning medium, info low), as the viewer shows a finding
RULES: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "invalid": (
        "error",
        "Structured data errors",
        "high",
        "issue",
        "A structured data item (JSON-LD, Microdata or RDFa) without a schema.org context, with an unknown "
        "schema.org type or property, "
        "a value of the wrong type, or a property a rich result requires missing.",
        "Correct the item at the property path named: use schema.org's type and property names, a value "
        "of the expected type, and add the properties the rich result requires.",
        _SCHEMA,
    ),
    "warning": (
        "warning",
        "Structured data warnings",
        "medium",
        "warning",
        "A structured data item using a deprecated (superseded) schema.org term, missing a property a rich "
        "result recommends, or too large or too deeply nested to read whole.",
        "Replace superseded terms by their successors and add the recommended properties where the "
        "page has the information.",
        _GALLERY,
    ),
    "rich-result-eligible": (
        "info",
        "Items eligible for a rich result",
        "low",
        "opportunity",
        "A structured data item of a rich-result type (Product, Article, Recipe, …) with every property the "
        "search engine requires and no error: it can be shown as a rich result.",
        "Nothing to fix; keep the item valid. Eligible is not guaranteed: search engines decide.",
        _GALLERY,
    ),
    "rendered-only": (
        "warning",
        "Structured data only in the rendered page",
        "medium",
        "warning",
        "A structured data item that the page's scripts add or change: it is in the rendered page but not "
        "(or not the same) in the HTML the server sent, so crawlers that do not run scripts miss it.",
        "Put the item in the HTML the server sends (server-side rendering), or make sure the search "
        "engines you care about render the page.",
        _JS,
    ),
}
PRIORITY = {rule: spec[2] for rule, spec in RULES.items()}


def _setting(settings: Mapping[str, Any], name: str, default: int) -> int:
    value = settings.get(name)
    value = default if value is None else int(value)
    if value < 1:
        raise UsageError(
            f"structured-data {name} (--structured-data-{name.replace('_', '-')}) must be 1 or more"
        )
    return value


class StructuredData(Analyzer):
    name = NAME
    label = "Structured data: JSON-LD, Microdata and RDFa validated"
    version = "1.1.0"  # 1.1: the items stored for the viewer's tree (the data cell _items)
    columns = (
        Column("items", "Structured data items"),
        Column("errors", "Structured data errors"),
        Column("rich_results", "Rich results eligible"),
    )
    order = 40
    # What search engines validate after rendering; the HTML as sent is read too, to say what scripts added.
    reads = "rendered"

    def rules(self) -> list[Rule]:
        return [
            Rule(
                rule,
                title,
                priority,
                description,
                url,
                type=kind,
                fix=fix,
                i18n=TRANSLATIONS.get(rule, {}),
            )
            for rule, (_, title, priority, kind, description, fix, url) in RULES.items()
        ]

    def check(self, settings: Mapping[str, Any]) -> None:
        self.limits(settings)

    def limits(self, settings: Mapping[str, Any]) -> tuple[int, int, int]:
        return (
            _setting(settings, "max_items", DEFAULT_MAX_ITEMS),
            _setting(settings, "max_depth", DEFAULT_MAX_DEPTH),
            _setting(settings, "max_block", DEFAULT_MAX_BLOCK),
        )

    def each_page(self, page: PageInput) -> PageReport:
        max_items, max_depth, max_block = self.limits(page.settings)
        html, document = page.html, None
        if _SURROGATE.search(html):  # undecodable bytes kept as surrogates: lxml would stop reading at one
            html = _SURROGATE.sub("\ufffd", html)
        else:
            document = page.document
        found = extract(html, page.url, document, max_items, max_depth, max_block)
        sent = None
        if page.html_kind == "rendered":
            source = page.html_as("source")
            if source is not None:
                sent = extract(
                    _SURROGATE.sub("\ufffd", source), page.url, None, max_items, max_depth, max_block
                )
            source_lines(found, sent)
        placements: list[tuple[Item, str, Node | None, str]] = []
        violations = report(found, placements)
        if sent is not None:
            violations.extend(rendered_only(found, sent))
        by_rule = Counter(v.rule for v in violations)
        types = Counter(t.removeprefix("?") for item in found.items for t in item.node.types)
        eligible = [v.message.split(": ", 1)[0] for v in violations if v.rule == "rich-result-eligible"]
        cells: dict[str, Any] = {
            "items": Cell(len(found.items), ", ".join(f"{t} ×{n}" for t, n in sorted(types.items()))),
            "errors": by_rule["invalid"],
            "rich_results": Cell(len(eligible), ", ".join(eligible)),
        }
        if found.items:  # the items themselves, for the viewer's tree: a data cell, no column
            cells[TREE_CELL] = tree(found, placements, sent)
        return PageReport(cells=cells, violations=violations)


def _violation(rule: str, message: str, location: str, snippet: str = "") -> Violation:
    return Violation(rule, message, RULES[rule][0], location, snippet=snippet, help_url=RULES[rule][6])


def report(
    found: Extracted, placements: list[tuple[Item, str, Node | None, str]] | None = None
) -> list[Violation]:
    """The findings of every item of ``found``: vocabulary problems, rich-result requirements, eligibility.

    ``placements`` gets (item, message, node, property) of each finding about a node or property of an item."""
    from .validate import Problem, rich_result, type_name, validate

    out: list[Violation] = []
    for syntax, index, message in found.errors:
        if syntax == "json-ld":
            continue  # the crawl's own check jsonld-parse-error reports those already
        where = f"{syntax} item {index + 1}" if index is not None else syntax
        out.append(_violation("invalid", message, where))
    for item in found.items:
        problems = validate(item.node)
        feature, needs = rich_result(item.node)
        problems.extend(needs)
        if "\ufffd" in json.dumps(item.node.plain(), ensure_ascii=False, default=str):
            problems.append(
                Problem(
                    "warning",
                    type_name(item.node),
                    "text with U+FFFD replacement characters: the page's bytes "
                    "were not valid in its encoding",
                    item.node,
                )
            )
        for p in problems:
            rule = "invalid" if p.severity == "error" else "warning"
            out.append(_violation(rule, f"{p.path}: {p.message}", item.location))
            if placements is not None:
                placements.append((item, out[-1].message, p.node, p.prop))
        if feature and not any(p.severity == "error" for p in problems):
            name = item.node.types[0] if item.node.types else ""
            out.append(
                _violation(
                    "rich-result-eligible", f"{feature}: {name} has every required property", item.location
                )
            )
    for limit in found.limits:
        out.append(_violation("warning", f"not read whole: {limit}", "page"))
    return out


def source_lines(rendered: Extracted, sent: Extracted | None) -> None:
    """Give the rendered page's items the line of the same item in the HTML as sent, where it is there (what a
    user opens); the others keep their line in the rendered page, and their location says so."""
    lines = {signature(item): item.line for item in sent.items} if sent is not None else {}
    for item in rendered.items:
        line = lines.get(signature(item))
        if line:
            item.line = line
        else:
            item.rendered_line = True


def rendered_only(rendered: Extracted, source: Extracted) -> list[Violation]:
    """An item of the rendered page missing from the HTML as sent, or changed by a script."""
    sent = {signature(item) for item in source.items}
    sent_kinds = Counter((item.syntax, tuple(item.node.types)) for item in source.items)
    out = []
    for item in rendered.items:
        if signature(item) in sent:
            continue
        kind = (item.syntax, tuple(item.node.types))
        name = " ".join(item.node.types) or "(no type)"
        if sent_kinds[kind]:
            sent_kinds[kind] -= 1
            message = f"{name}: differs from the HTML as sent (changed by a script)"
        else:
            message = f"{name}: only in the rendered page (added by a script)"
        out.append(_violation("rendered-only", message, item.location))
    return out


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register(
        "max_items",
        type="int",
        default=DEFAULT_MAX_ITEMS,
        help="items and nested items read per page; the rest are reported, not read",
    )
    register(
        "max_depth",
        type="int",
        default=DEFAULT_MAX_DEPTH,
        help="levels of nesting read per item; deeper levels are reported, not read",
    )
    register(
        "max_block",
        type="int",
        default=DEFAULT_MAX_BLOCK,
        help="characters of one JSON-LD block; a longer block is reported, not parsed",
    )


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(StructuredData())
