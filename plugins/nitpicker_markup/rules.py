"""Structural markup rules checked on the lxml tree of the rendered page, in one walk over its elements."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

# Non-conforming features of the HTML Living Standard (§16.2 "Non-conforming features").
OBSOLETE_ELEMENTS = frozenset(
    {
        "acronym",
        "applet",
        "basefont",
        "bgsound",
        "big",
        "blink",
        "center",
        "dir",
        "font",
        "frame",
        "frameset",
        "isindex",
        "keygen",
        "listing",
        "marquee",
        "menuitem",
        "multicol",
        "nextid",
        "nobr",
        "noembed",
        "noframes",
        "plaintext",
        "rb",
        "rtc",
        "spacer",
        "strike",
        "tt",
        "xmp",
    }
)
# Presentational attributes: attribute -> the elements it is obsolete on (None: on every element).
_TABLE_PARTS = frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th", "col", "colgroup", "caption"})
OBSOLETE_ATTRIBUTES: dict[str, frozenset[str] | None] = {
    "align": None,
    "bgcolor": None,
    "valign": None,
    "background": None,
    "hspace": None,
    "vspace": None,
    "border": frozenset({"img", "object", "table"}),
    "cellpadding": frozenset({"table"}),
    "cellspacing": frozenset({"table"}),
    "frame": frozenset({"table"}),
    "rules": frozenset({"table"}),
    "summary": frozenset({"table"}),
    "width": frozenset({"table", "td", "th", "col", "colgroup", "hr", "pre"}),
    "height": frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th"}),
    "nowrap": frozenset({"td", "th"}),
    "char": _TABLE_PARTS,
    "charoff": _TABLE_PARTS,
    "axis": frozenset({"td", "th"}),
    "abbr": frozenset({"td"}),
    "scope": frozenset({"td"}),
    "noshade": frozenset({"hr"}),
    "size": frozenset({"hr"}),
    "clear": frozenset({"br"}),
    "compact": frozenset({"dl", "ol", "ul", "menu", "dir"}),
    "text": frozenset({"body"}),
    "link": frozenset({"body"}),
    "vlink": frozenset({"body"}),
    "alink": frozenset({"body"}),
    "marginheight": frozenset({"body", "iframe"}),
    "marginwidth": frozenset({"body", "iframe"}),
    "topmargin": frozenset({"body"}),
    "leftmargin": frozenset({"body"}),
    "rightmargin": frozenset({"body"}),
    "bottommargin": frozenset({"body"}),
    "frameborder": frozenset({"iframe"}),
    "scrolling": frozenset({"iframe"}),
    "longdesc": frozenset({"img", "iframe"}),
    "language": frozenset({"script"}),
    "event": frozenset({"script"}),
    "for": frozenset({"script"}),
    "rev": frozenset({"a", "link"}),
    "charset": frozenset({"a", "link"}),
    "coords": frozenset({"a"}),
    "shape": frozenset({"a"}),
    "datasrc": None,
    "datafld": None,
    "dataformatas": None,
}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
LABELABLE = frozenset({"button", "input", "meter", "output", "progress", "select", "textarea"})
NAMING_ATTRIBUTES = ("aria-label", "aria-labelledby", "title")
SNIPPET_LIMIT = 200


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    element: Any


def start_tag(element: Any) -> str:
    """The element's start tag rebuilt from its attributes (the snippet a finding shows)."""
    attrs = "".join(f' {name}="{value}"' for name, value in element.attrib.items())
    text = f"<{element.tag}{attrs}>"
    return text if len(text) <= SNIPPET_LIMIT else text[: SNIPPET_LIMIT - 1] + "…"


class Selectors:
    """Short CSS selectors for elements: ``#id`` when the id is unique, else a child path from there."""

    def __init__(self, id_counts: Counter[str]) -> None:
        self._ids = id_counts

    def __call__(self, element: Any) -> str:
        parts: list[str] = []
        while element is not None:
            ident = element.get("id")
            if ident and self._ids[ident] == 1 and _plain_ident(ident):
                parts.append(f"#{ident}")
                break
            parent = element.getparent()
            part = element.tag
            if parent is not None:
                same = [child for child in parent if child.tag == element.tag]
                if len(same) > 1:
                    part += f":nth-of-type({same.index(element) + 1})"
            parts.append(part)
            element = parent
        return " > ".join(reversed(parts))


def _plain_ident(ident: str) -> bool:
    return ident[0].isalpha() and all(ch.isalnum() or ch in "-_" for ch in ident)


def _text(element: Any) -> str:
    return "".join(element.itertext()).strip()


def _has_name(element: Any) -> bool:
    """Whether a link or button has an accessible name: text, naming attributes or an image's alt."""
    if (element.text or "").strip() or _text(element):  # the common case first: plain link text
        return True
    if any((element.get(attr) or "").strip() for attr in NAMING_ATTRIBUTES):
        return True
    for img in element.iter("img", "area", "input"):
        if (img.get("alt") or "").strip():
            return True
    return False


def _labelable(element: Any) -> bool:
    if element.tag not in LABELABLE:
        return False
    return not (element.tag == "input" and (element.get("type") or "").lower() == "hidden")


def check(document: Any) -> tuple[list[Finding], Selectors]:
    """Every structural finding of ``document`` in document order, and the selector maker for them."""
    elements = [el for el in document.iter() if isinstance(el.tag, str)]
    ids: dict[str, Any] = {}
    id_counts: Counter[str] = Counter()
    for el in elements:
        ident = el.get("id")
        if ident:
            id_counts[ident] += 1
            ids.setdefault(ident, el)
    findings: list[Finding] = []
    add = findings.append
    root = document.getroottree().getroot()
    if not (root.get("lang") or "").strip():
        add(Finding("html-lang", "the <html> element has no lang attribute", root))
    seen_ids: Counter[str] = Counter()
    h1_total = sum(1 for el in elements if el.tag == "h1")
    h1_seen = 0
    previous_level = 0
    for el in elements:
        tag = el.tag
        ident = el.get("id")
        if ident:
            seen_ids[ident] += 1
            if seen_ids[ident] > 1:
                add(Finding("duplicate-id", f'id "{ident}" is already used by an earlier element', el))
        if tag in OBSOLETE_ELEMENTS:
            add(Finding("obsolete-element", f"<{tag}> is obsolete", el))
        for attr in el.attrib:
            where = OBSOLETE_ATTRIBUTES.get(attr, ())
            if where is None or (where and tag in where):
                add(Finding("obsolete-attribute", f"the {attr} attribute on <{tag}> is obsolete", el))
        if tag in ("img", "input"):
            _check_alt(el, add)
        elif tag in HEADINGS:
            level = HEADINGS[tag]
            if previous_level and level > previous_level + 1:
                skipped = ", ".join(f"h{n}" for n in range(previous_level + 1, level))
                add(Finding("heading-skip", f"{tag} follows h{previous_level}, skipping {skipped}", el))
            previous_level = level
            if tag == "h1":
                h1_seen += 1
                if h1_seen > 1:
                    add(
                        Finding(
                            "multiple-h1", f"h1 number {h1_seen} of {h1_total}; a page should have one", el
                        )
                    )
        elif tag == "a":
            if el.get("href") is not None and not _has_name(el):
                add(Finding("empty-link", "the link has no text, aria-label, title or image alt", el))
        elif tag == "button":
            if not _has_name(el):
                add(Finding("empty-button", "the button has no text, aria-label, title or image alt", el))
        elif tag == "label":
            _check_label(el, ids, add)
        if (
            tag == "input"
            and (el.get("type") or "").lower() == "button"
            and not (
                (el.get("value") or "").strip() or any((el.get(a) or "").strip() for a in NAMING_ATTRIBUTES)
            )
        ):
            add(Finding("empty-button", "the button has no value, aria-label or title", el))
    return findings, Selectors(id_counts)


def _check_alt(el: Any, add: Any) -> None:
    if el.tag == "input" and (el.get("type") or "").lower() != "image":
        return
    alt = el.get("alt")
    if alt is None:
        add(Finding("img-alt-missing", f"<{el.tag}> has no alt attribute", el))
    elif not alt.strip() and el.tag == "input":
        add(Finding("img-alt-missing", "an image button needs a non-empty alt", el))
    elif not alt.strip():
        add(Finding("img-alt-empty", "empty alt: the image is treated as decorative", el))


def _check_label(el: Any, ids: dict[str, Any], add: Any) -> None:
    target = el.get("for")
    if target is not None:
        control = ids.get(target)
        if control is None:
            add(
                Finding(
                    "label-without-control", f'the label points to id "{target}", which does not exist', el
                )
            )
        elif not _labelable(control):
            add(
                Finding(
                    "label-without-control",
                    f'the label points to id "{target}", a <{control.tag}> that cannot be labelled',
                    el,
                )
            )
    elif not any(_labelable(child) for child in el.iterdescendants()):
        add(
            Finding(
                "label-without-control", "the label has no for attribute and contains no form control", el
            )
        )
