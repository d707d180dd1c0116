"""Extractor specs: ``NAME=[all:][raw:|rendered:]css:SEL[::text|::html|@attr] | xpath:EXPR | regex:PATTERN``.

Parsing compiles every selector, XPath and regular expression, so bad input is one ``ValueError`` line
naming the extractor, raised before any page is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import regex

from nitpicker_core import read

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
KINDS = ("css", "xpath", "regex")
_ATTR = re.compile(r"^(?P<sel>.+?)@(?P<attr>[A-Za-z_:][-A-Za-z0-9_:.]*)$", re.DOTALL)
_SPACE = re.compile(r"\s+")
#: names of the page fields every table already shows: an extractor cannot take one (its column would clash);
#: ``clashing`` adds every column of the `pages` query and the columns of the other analyzers installed
RESERVED = frozenset(
    """
    url status title description keywords lang canonical robots hash headers extra content_type depth
    indexable indexability_reason redirect_dest first_seen_at last_crawled_at order size word_count
    h1 outcome category error scraped is_target is_external is_skipped source_sha256 total
    """.split()
) | frozenset(read.PAGE_CONTENT_COLUMNS)  # the duplicate checks' columns (main_words, near_duplicates…)


@dataclass(frozen=True)
class Extractor:
    """One named extractor: what it reads (``source`` HTML as sent, or ``rendered``), how, and what it keeps."""

    name: str
    spec: str
    kind: str  # css, xpath or regex
    expr: str
    html: str = "rendered"  # "source" (as sent, ``raw:``) or "rendered"
    all: bool = False  # every match (a list) or the first (a string)
    output: str = "text"  # css: text, html or attr
    attr: str = ""
    compiled: Any = field(default=None, compare=False, hash=False, repr=False)

    def values(self, document: Any, html: str, timeout: float) -> list[str]:
        """The matches, in document order (``regex``: raises ``TimeoutError`` after ``timeout`` seconds)."""
        if self.kind == "regex":
            out = []
            for match in self.compiled.finditer(html, timeout=timeout):
                groups = [g for g in match.groups() if g is not None]
                value = _SPACE.sub(" ", groups[0] if groups else match.group(0)).strip()
                if not value:  # an empty match says nothing
                    continue
                out.append(value)
                if not self.all:
                    break
            return out
        found = self.compiled(document)
        items = found if isinstance(found, list) else [found]
        return [v for v in (self._value(item) for item in items) if v is not None]

    def _value(self, item: Any) -> str | None:
        if isinstance(item, bool | int | float):  # an XPath function: count(), boolean(), number()
            return str(int(item)) if isinstance(item, float) and item.is_integer() else str(item)
        if isinstance(item, str):  # an XPath string or attribute value
            return _SPACE.sub(" ", str(item)).strip()
        if not isinstance(getattr(item, "tag", None), str):  # a comment or processing instruction
            return None
        if self.output == "attr":
            got = item.get(self.attr)
            return None if got is None else _SPACE.sub(" ", got).strip()
        if self.output == "html":
            import lxml.html

            return str(lxml.html.tostring(item, encoding="unicode", with_tail=False))
        return _SPACE.sub(" ", item.text_content()).strip()


def parse(item: str) -> Extractor:
    """``NAME=SPEC`` → an ``Extractor`` with its expression compiled; ``ValueError`` (one line) otherwise."""
    name, sep, spec = item.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(
            f"extractor {item!r}: expected NAME=css:SELECTOR, NAME=xpath:EXPR or NAME=regex:PATTERN"
        )
    if not NAME.match(name):
        raise ValueError(f"extractor {name!r}: a name is a letter then letters, digits, - or _ (at most 64)")
    if name.lower() in RESERVED:
        raise ValueError(f"extractor {name!r}: the name is a built-in column; choose another")
    rest, every, html = spec.strip(), False, "rendered"
    while True:
        prefix, colon, after = rest.partition(":")
        if colon and prefix == "all":
            every, rest = True, after
        elif colon and prefix in ("raw", "source", "rendered"):
            html, rest = ("rendered" if prefix == "rendered" else "source"), after
        else:
            break
    kind, colon, expr = rest.partition(":")
    if not colon or kind not in KINDS:
        raise ValueError(f"extractor {name!r}: {spec!r} does not start with css:, xpath: or regex:")
    if not expr.strip():
        raise ValueError(f"extractor {name!r}: empty {kind} expression")
    base = Extractor(name, spec, kind, expr, html, every)
    if kind == "css":
        return _css(base)
    if kind == "xpath":
        return _xpath(base)
    return _regex(base)


def _css(ex: Extractor) -> Extractor:
    from lxml.cssselect import CSSSelector, SelectorError

    selector, output, attr = ex.expr.strip(), "text", ""
    if selector.endswith("::text"):
        selector = selector[: -len("::text")]
    elif selector.endswith("::html"):
        selector, output = selector[: -len("::html")], "html"
    else:
        match = _ATTR.match(selector)
        if match is not None:
            selector, output, attr = match["sel"], "attr", match["attr"]
    try:
        compiled = CSSSelector(selector.strip())
    except (SelectorError, ValueError, SyntaxError) as exc:
        raise ValueError(f"extractor {ex.name!r}: invalid CSS selector {selector.strip()!r}: {exc}") from None
    return Extractor(ex.name, ex.spec, "css", selector.strip(), ex.html, ex.all, output, attr, compiled)


def _xpath(ex: Extractor) -> Extractor:
    from lxml import etree

    try:
        compiled = etree.XPath(ex.expr.strip())
    except etree.XPathError as exc:
        raise ValueError(f"extractor {ex.name!r}: invalid XPath {ex.expr.strip()!r}: {exc}") from None
    return Extractor(ex.name, ex.spec, "xpath", ex.expr.strip(), ex.html, ex.all, compiled=compiled)


def _regex(ex: Extractor) -> Extractor:
    try:
        compiled = regex.compile(ex.expr)
    except regex.error as exc:
        raise ValueError(f"extractor {ex.name!r}: invalid regular expression {ex.expr!r}: {exc}") from None
    return Extractor(ex.name, ex.spec, "regex", ex.expr, ex.html, ex.all, compiled=compiled)


def parse_all(items: Iterable[str]) -> list[Extractor]:
    """Every extractor in order; a name given twice is an error naming it."""
    out: dict[str, Extractor] = {}
    for item in items:
        ex = parse(item)
        if ex.name in out:
            raise ValueError(f"extractor {ex.name!r}: named twice")
        out[ex.name] = ex
    return list(out.values())


def clashing(extractors: Iterable[Extractor], analyzers: Iterable[Any] = ()) -> str | None:
    """The first extractor whose name (case aside) is a column of the `pages` query or of another analyzer
    (an installed plugin's), as one line naming both; None when every name is free.

    ``analyzers``: the registered analyzers; the extract analyzers' own columns (the extractors) do not count."""
    from nitpicker_core import read

    pages = {c.lower() for c in read.PAGE_LIST_COLUMNS} | RESERVED
    owners: dict[str, str] = {}
    for analyzer in analyzers:
        if analyzer.name in ("extract", "extract-source"):
            continue
        for column in getattr(analyzer, "columns", ()):
            owners.setdefault(column.key.lower(), analyzer.name)
    for ex in extractors:
        name = ex.name.lower()
        if name in pages:
            return f"extractor {ex.name!r}: the name is a built-in column; choose another"
        if name in owners:
            return f"extractor {ex.name!r}: the name is a column of the analyzer {owners[name]!r}; choose another"
    return None
