"""Where on its page the element each crawl check's finding is about stands: ``Check.element`` of the checks.

Issue lists give a finding the line:col of that element, in the stored HTML the finding was made from: the
rendered HTML for what the scrape read from the page (title, description, headings, canonical, robots,
alternates, images), the HTML as sent for what was read from it (a canonical outside <head>, a noindex only
as sent). A finding about an element the page lacks (no <title>, no canonical, no H1) points at where it
belongs: the <head> (the <body> for an H1). A finding about no element (a status, a response header, the
link graph, a sitemap, the page's text as a whole) or one declared outside the HTML (an HTTP Link header, a
sitemap's alternates) has no line. Each locator reads the detail as its check writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from nitpicker_core import RENDERED_HTML, SENT_HTML, ElementTag, Finding, PageElements, Where, scan_elements

Locate = Callable[[Finding], Where | None]
Pick = Callable[[PageElements], Sequence[ElementTag]]


def _rendered(pick: Pick, head: bool = True) -> Locate:
    """A locator of the rendered HTML's elements ``pick`` finds (in <head> first: ``Where.head``)."""
    return lambda finding: Where(RENDERED_HTML, pick, head)


def _head(pick: Pick) -> Where:
    """The rendered HTML's element that belongs in <head> (or is the <html>, the <head>, the <body>)."""
    return Where(RENDERED_HTML, pick, head=True)


def _meta_or_head(name: str, attr: str = "name") -> Pick:
    return lambda page: page.meta(name, attr)[:1] or page.first("head")


def _absent(element: Pick, container: str) -> Locate:
    """title-missing and description-missing: "empty" is the element, "missing" where it belongs."""

    def locate(finding: Finding) -> Where:
        if finding.detail == "empty":
            return _head(lambda page: element(page)[:1] or page.first(container))
        return _head(lambda page: page.first(container))

    return locate


def _canonicals(page: PageElements) -> list[ElementTag]:
    return page.links("canonical")


def _first_canonical(finding: Finding) -> Where:
    return _head(lambda page: _canonicals(page)[:1])


def _canonical_written(finding: Finding) -> Where:
    """canonical-invalid: the canonical written as the detail ('href=""' for a blank one), else the first."""
    value = finding.detail

    def pick(page: PageElements) -> list[ElementTag]:
        tags = _canonicals(page)
        blank = value.startswith('href="') and value.endswith('"')
        wanted = value[6:-1] if blank else value
        same = [t for t in tags if (t.get("href") or "").strip() == wanted.strip()]
        return same or tags[:1]

    return _head(pick)


def _canonical_conflict(finding: Finding) -> Where | None:
    """Every canonical <link> of the HTML the detail names ("HTML" the rendered one, else "HTML as sent");
    none when only HTTP Link headers disagree."""
    sources = {
        name.strip() for part in finding.detail.split(" | ") for name in part.split(": ", 1)[0].split(" + ")
    }
    if "HTML" in sources:
        return Where(RENDERED_HTML, _canonicals)
    if "HTML as sent" in sources:
        return Where(SENT_HTML, _canonicals)
    return None


def _canonical_outside_head(finding: Finding) -> Where:
    # what the check reads: the HTML as sent (the rendered one only for a page whose HTML as sent was not kept)
    def pick(page: PageElements) -> list[ElementTag]:
        same = [t for t in _canonicals(page) if (t.get("href") or "").strip() == finding.detail]
        return [t for t in same if not t.in_head] or same

    return Where(SENT_HTML, pick)


def _robots(page: PageElements) -> list[ElementTag]:
    return page.meta("robots")[:1]


def _noindex(page: PageElements) -> list[ElementTag]:
    """The meta robots saying noindex (or none); none when the page's noindex is its X-Robots-Tag's."""
    return [
        t
        for t in page.meta("robots")
        if {"noindex", "none"} & set((t.get("content") or "").lower().replace(",", " ").split())
    ][:1]


def _meta_robots_said(finding: Finding) -> Where | None:
    """nofollow-page: the meta robots when the detail says it is one of where nofollow is said."""
    return _head(_robots) if "meta robots:" in finding.detail else None


def _js_noindex(finding: Finding) -> Where:
    return Where(
        SENT_HTML if finding.detail == "noindex only as sent" else RENDERED_HTML, _noindex, head=True
    )


def _hreflang(page: PageElements) -> list[ElementTag]:
    return [t for t in page.links("alternate") if t.get("hreflang") is not None]


def _hreflang_code(finding: Finding) -> Where:
    code = finding.detail.removeprefix('hreflang="').removesuffix('"')
    return _head(lambda page: [t for t in _hreflang(page) if t.get("hreflang") == code])


def _hreflang_url(finding: Finding) -> Where:
    code, _, href = finding.detail.partition(": ")

    def pick(page: PageElements) -> list[ElementTag]:
        same = [t for t in _hreflang(page) if t.get("hreflang") == code]
        written = [t for t in same if (t.get("href") or "").strip() == href.strip()]
        return written or page.pointing_to(same, finding.url, href)

    return _head(pick)


def _hreflang_to(target_of: Callable[[str], str]) -> Locate:
    """The alternates naming the page the detail names (``target_of(detail)``)."""

    def locate(finding: Finding) -> Where:
        target = target_of(finding.detail)
        return _head(lambda page: page.pointing_to(_hreflang(page), finding.url, target))

    return locate


def _hreflang_duplicate(finding: Finding) -> Where:
    code = finding.detail.partition(": ")[0]
    return _head(lambda page: [t for t in _hreflang(page) if (t.get("hreflang") or "").lower() == code])


def _pagination(page: PageElements, kind: str) -> list[ElementTag]:
    rels = ("prev", "previous") if kind == "prev" else (kind,)
    return [t for t in page.tags if t.name == "link" and any(rel in t.rels() for rel in rels)]


def _pagination_to(finding: Finding) -> Where | None:
    """pagination-target-not-200 and -not-linked: "next: TARGET" or "next: TARGET (what it answered)"."""
    kind, _, rest = finding.detail.partition(": ")
    if kind not in ("next", "prev"):
        return None
    target = rest.split(" (", 1)[0]
    return _head(lambda page: page.pointing_to(_pagination(page, kind), finding.url, target))


def _pagination_links(kind: str, to: str = "") -> Pick:
    """The page's rel=``kind`` links (those naming ``to`` when given)."""
    if to:
        return lambda page: page.pointing_to(_pagination(page, kind), to, to)
    return lambda page: _pagination(page, kind)


def _pagination_sequence(finding: Finding) -> Where | None:
    """pagination-sequence-error, by the detail's wording (plugins/nitpicker_checks/pagination.py)."""
    detail, url = finding.detail, finding.url
    for kind in ("next", "prev"):
        if detail.startswith(f"several {kind} links: "):
            return _head(_pagination_links(kind))
        if detail == f"{kind} points to the page itself":
            return _head(_pagination_links(kind, url))
    if detail.startswith("next and prev name the same page: "):
        target = detail.removeprefix("next and prev name the same page: ")
        return _head(
            lambda page: page.pointing_to(_pagination(page, "next") + _pagination(page, "prev"), url, target)
        )
    if detail == "the next links lead back to this page":
        return _head(lambda page: _pagination(page, "next"))
    kind, _, rest = detail.partition(" ")
    if kind in ("next", "prev") and " has " in rest:
        target = rest.split(" has ", 1)[0]
        return _head(lambda page: page.pointing_to(_pagination(page, kind), url, target))
    return None


def _hidden_page(finding: Finding) -> Where | None:
    """pagination-canonicalised-or-noindex (the detail is the page's indexability) and noindex-linked."""
    if finding.detail.startswith("canonicalised to "):
        return _first_canonical(finding)
    if finding.detail.startswith("noindex ("):
        return None  # "noindex (X-Robots-Tag)": a response header, no element
    return _head(_noindex)


def _jsonld(page: PageElements) -> list[ElementTag]:
    """The JSON-LD scripts that are no JSON (what jsonld-parse-error reports), else every JSON-LD script."""
    scripts = [
        t for t in page.named("script") if (t.get("type") or "").strip().lower() == "application/ld+json"
    ]
    broken = []
    for tag in scripts:
        try:
            json.loads(tag.text)
        except ValueError:
            broken.append(tag)
    return broken or scripts


def _sourced(*names: str, attr: str = "src") -> Locate:
    """The elements among ``names`` whose ``attr`` resolves to the detail (an image, a loaded resource).

    A merged defect's row found by an analyzer alone has its markup as the detail (``<img src="…">``): the
    element whose ``attr`` is written as there.
    """

    def locate(finding: Finding) -> Where | None:
        detail = finding.detail.strip()
        written = None
        if detail.startswith("<"):
            tags = [t for t in scan_elements(detail).tags if t.name in names]
            written = tags[0].get(attr) if tags else None
            if written is None:
                return None

        def pick(page: PageElements) -> list[ElementTag]:
            tags = [t for t in page.tags if t.name in names]
            if written is not None:
                return [t for t in tags if t.get(attr) == written]
            return page.pointing_to(tags, finding.url, detail, attr)

        return Where(RENDERED_HTML, pick)

    return locate


def _loaded(finding: Finding) -> Where:
    """mixed-content: the element whose src (or <link href>) loads the resource the detail names."""

    def pick(page: PageElements) -> list[ElementTag]:
        sources = [
            t for t in page.tags if t.name in ("img", "script", "iframe", "source", "video", "audio", "embed")
        ]
        found = page.pointing_to(sources, finding.url, finding.detail, "src")
        return found or page.pointing_to(page.named("link"), finding.url, finding.detail)

    return Where(RENDERED_HTML, pick)


def _before_colon(detail: str) -> str:
    return detail.split(": ", 1)[0]


def _before_reason(detail: str) -> str:
    return detail.split(" (", 1)[0]


#: check id → how to find the element its findings are about. The crawl checks left out are about no
#: element of the page (docs/seo.md lists them).
LOCATORS: dict[str, Locate] = {
    "title-missing": _absent(lambda page: page.first("title"), "head"),
    "title-duplicate": _rendered(lambda page: page.first("title")),
    "title-too-long": _rendered(lambda page: page.first("title")),
    "description-missing": _absent(lambda page: page.meta("description"), "head"),
    "description-duplicate": _rendered(lambda page: page.meta("description")[:1]),
    "description-too-long": _rendered(lambda page: page.meta("description")[:1]),
    "viewport-missing": _rendered(_meta_or_head("viewport")),
    "lang-missing": _rendered(lambda page: page.first("html")),
    "og-title-mismatch": _rendered(lambda page: page.meta("og:title", "property")[:1]),
    "og-description-mismatch": _rendered(lambda page: page.meta("og:description", "property")[:1]),
    "h1-missing": _rendered(lambda page: page.first("body")),
    "h1-multiple": _rendered(lambda page: page.named("h1"), head=False),
    "jsonld-parse-error": _rendered(_jsonld, head=False),
    "canonical-invalid": _canonical_written,
    "canonical-mismatch": _first_canonical,
    "canonical-missing": _rendered(lambda page: page.first("head")),
    "canonical-self": _first_canonical,
    "canonical-target-not-indexable": _first_canonical,
    "canonical-conflict": _canonical_conflict,
    "canonical-outside-head": _canonical_outside_head,
    "nofollow-page": _meta_robots_said,
    "robots-directives-conflict": _rendered(_robots),
    "noindex-linked": _hidden_page,
    "js-noindex-mismatch": _js_noindex,
    "hreflang-invalid-code": _hreflang_code,
    "hreflang-invalid-url": _hreflang_url,
    "hreflang-missing-return": _hreflang_to(lambda detail: detail),
    "hreflang-target-non-indexable": _hreflang_to(_before_reason),
    # the set that lacks the page itself or x-default: its alternates, where the missing one belongs
    "hreflang-missing-self": _rendered(_hreflang),
    "hreflang-missing-x-default": _rendered(_hreflang),
    "hreflang-duplicate-code": _hreflang_duplicate,
    "hreflang-inconsistent-code": _hreflang_to(_before_colon),
    "hreflang-target-not-linked": _hreflang_to(lambda detail: detail),
    "pagination-target-not-200": _pagination_to,
    "pagination-target-not-linked": _pagination_to,
    "pagination-sequence-error": _pagination_sequence,
    "pagination-canonicalised-or-noindex": _hidden_page,
    "image-alt-missing": _sourced("img"),
    "image-size-missing": _sourced("img"),
    "image-oversized": _sourced("img"),
    "mixed-content": _loaded,
}
