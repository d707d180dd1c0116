"""Turn a ScrapeResult into storage tuples plus the content hash of its logical state."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from nitpicker_core.content_types import normalize_content_type
from nitpicker_core.records import BOOLEAN_METADATA, METADATA_FIELDS, Resource, ScrapeResult

from .hashing import canonical_json, content_hash, sha256_text
from .logical import VOLATILE_HEADERS as VOLATILE_HEADERS  # where pagediff and older callers find it
from .logical import as_set, logical_headers, logical_sha256
from .models import PROMOTED

_META_SET = frozenset(METADATA_FIELDS)
_NO_META = (None,) * len(METADATA_FIELDS)  # _meta_value of each field's None
_NO_PROMOTED = (None,) * len(PROMOTED)  # _promoted_value of each key's None


@dataclass(slots=True)
class PreparedPage:
    url: str
    hash: str
    # page_state values from status through html_sha256 and the metadata (see models.PAGE_STATE_COLUMNS);
    # position REDIRECT_AT holds the redirect destination URL until it is swapped for its id.
    fields: tuple[Any, ...]
    redirect_dest: str | None
    html: str | None
    html_sha256: str | None
    source: str | None = None
    source_sha256: str | None = None
    # (target URL, fragment, text, raw href, line, col)
    anchors: list[tuple[Any, ...]] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    images: list[tuple[Any, ...]] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    jsonld: list[tuple[Any, ...]] = field(default_factory=list)
    tags: list[tuple[Any, ...]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)


REDIRECT_AT = 5
EXTRA_AT = 11
HTML_AT = 12  # html_sha256, followed by the metadata, source_sha256 and the promoted keys of extra


def _promoted_value(kind: str, value: Any) -> Any:
    """A promoted key's value as its column stores it (models.PROMOTED)."""
    if value is None:
        return None
    if kind == "flag":
        return 1 if value else 0
    if kind == "json" or not isinstance(value, (str, int, float)):
        return canonical_json(value)
    return value


def stable_headers(headers: dict[str, str] | None) -> dict[str, Any]:
    """The headers a state hash sees (see ``logical.logical_headers``)."""
    return logical_headers(headers)


def _meta_value(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in BOOLEAN_METADATA:
        return 1 if value else 0
    return value if isinstance(value, str) else canonical_json(value)


def redirect_dest(result: ScrapeResult) -> str | None:
    chain = result.redirect_chain
    if not chain:
        return None
    last = chain[-1]
    while isinstance(last, list | tuple) and last:  # tolerate nested hops: flatten to the final one
        last = last[-1]
    return last if isinstance(last, str) and last != result.url else None


def chain_hops(result: ScrapeResult) -> list[str]:
    """The hops of a chain of two or more redirects, final destination last; [] for one redirect or none.

    Only chains are kept (in ``extra``): a single redirect's row stays as it was, and so does its state hash.
    """
    hops = [hop for hop in result.redirect_chain if isinstance(hop, str)]
    return hops if len(hops) >= 2 and hops[-1] != result.url else []


def _sha256(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None


_NO_PLACE = (None, None, None)  # an anchor without what format 2 added (raw href, line, col)


def prepare_page(
    result: ScrapeResult,
    anchors: list[tuple[Any, ...]] | None = None,
    images: list[tuple[Any, ...]] | None = None,
    headings: list[tuple[int, str]] | None = None,
) -> PreparedPage:
    """``anchors``/``images``/``headings`` override the result's own lists (a degraded scrape inherits them)."""
    page, payload = _prepare(result, anchors, images, headings)
    page.hash = content_hash(payload)
    return page


def _prepare(
    result: ScrapeResult,
    anchors: list[tuple[Any, ...]] | None,
    images: list[tuple[Any, ...]] | None,
    headings: list[tuple[int, str]] | None,
) -> tuple[PreparedPage, dict[str, Any]]:
    """``prepare_page``'s page without its hash, and the payload its hash is taken of."""
    if anchors is None:
        anchors = [
            (a.href, a.fragment or "", a.text or "", a.raw_href, a.line, a.col) for a in result.anchors or ()
        ]
    if headings is None:
        headings = [(int(h.level), h.text or "") for h in result.headings or ()]
    if images is None:
        images = [
            (
                i.src,
                i.current_src or "",
                i.alt,
                i.width,
                i.height,
                i.natural_width,
                i.natural_height,
                1 if i.is_lazy else 0,
                i.viewport_width or 0,
                i.markup or "",
            )
            for i in result.images or ()
        ]
    extra = dict(result.extra)
    hops = chain_hops(result)
    if hops:  # where a chain starts and how it runs: the redirect-chain check's detail
        extra["redirect_chain"] = hops
    for key, value in result.metadata.items():
        if key not in _META_SET:
            extra.setdefault(key, value)  # unknown metadata is kept, in the JSON column
    metadata = result.metadata
    # a link target's record (a URL checked, or left unchecked) has no metadata: forty Nones, built once
    meta = tuple(_meta_value(n, metadata.get(n)) for n in METADATA_FIELDS) if metadata else _NO_META
    html_sha = _sha256(result.html)
    # Without a browser the page's HTML is the HTML as sent (one text twice): hashed, and normalised, once
    same_source = result.source is not None and result.source == result.html
    source_sha = html_sha if same_source else _sha256(result.source)
    dest = redirect_dest(result)
    ctype = normalize_content_type(result.content_type)
    headers = canonical_json(result.headers or {})
    # The hash sees extra whole, as before format 5 moved the core's keys into columns: an unchanged page
    # keeps its state across the upgrade. The stored extra keeps only plugins' keys.
    hashed_extra = canonical_json(extra)
    promoted = (
        tuple(_promoted_value(kind, extra.pop(name, None)) for name, kind in PROMOTED)
        if extra
        else _NO_PROMOTED
    )
    extra_json = canonical_json(extra)
    fields = (
        result.status,
        result.status_text or "",
        ctype,
        result.content_length,
        headers,
        dest,
        int(bool(result.scraped)),
        int(bool(result.is_target)),
        int(bool(result.is_external)),
        int(bool(result.is_skipped)),
        result.skip_reason or "",
        extra_json,
        html_sha,
        *meta,
        source_sha,
        *promoted,
        result.word_count,  # outside the hash, as everything after html_sha256 but the metadata
        result.html_facts,
    )
    jsonld = [
        (
            j.kind,
            j.raw,
            None if j.parsed is None else canonical_json(j.parsed),
            canonical_json(list(j.types)),
            j.error or "",
        )
        for j in result.jsonld
    ]
    tags = [(t.provider, t.category, t.external_id, t.version, t.confidence) for t in result.tags]
    errors = [(e.step, e.message) for e in result.errors]
    resources = list(result.resources)
    # What the hash sees is the page's logical content: volatile headers out, per-render nonces out of the
    # HTML, and the lists whose order is a race (network responses, images per device preset, detected
    # technologies) as sets. The stored rows keep everything as it came.
    logical_html = logical_sha256(result.html, html_sha)
    hashed_fields = (
        *fields[:4],
        canonical_json(stable_headers(result.headers)),
        *fields[5:EXTRA_AT],
        hashed_extra,
        *fields[EXTRA_AT + 1 : HTML_AT],
        logical_html,
        *meta,
    )
    payload: dict[str, Any] = {
        "url": result.url,
        "fields": hashed_fields,
        # Without what format 2 added, an anchor hashes as it always did: unchanged pages keep their state hash
        "anchors": [a[:3] if a[3:] == _NO_PLACE else a for a in anchors],
        "images": as_set(images),
        "resources": sorted(set(resources)),
        "jsonld": jsonld,
        "tags": as_set(tags),
        "errors": errors,
    }
    # Added by format 2, hashed only when present, so a state without them keeps the hash it had in format 1
    if source_sha is not None:
        payload["source_sha256"] = logical_html if same_source else logical_sha256(result.source, source_sha)
    if headings:
        payload["headings"] = headings
    page = PreparedPage(
        url=result.url,
        hash="",
        fields=fields,
        redirect_dest=dest,
        html=result.html,
        html_sha256=html_sha,
        source=result.source,
        source_sha256=source_sha,
        anchors=anchors,
        images=images,
        headings=headings,
        resources=resources,
        jsonld=jsonld,
        tags=tags,
        errors=errors,
    )
    return page, payload


def placeholder(url: str, is_external: bool) -> PreparedPage:
    """A URL known only as a link target: not scraped, not a target, no children.

    A crawl stores thousands (every link target before it is checked), and they differ in their URL alone: the
    hashed text is the one of ``prepare_page`` with the URL put in its place, the rest prepared once."""
    before, after, fields = _placeholder_template(bool(is_external))
    text = before + canonical_json(url) + after
    return PreparedPage(
        url=url, hash=sha256_text(text), fields=fields, redirect_dest=None, html=None, html_sha256=None
    )


def _placeholder_result(url: str, is_external: bool) -> ScrapeResult:
    return ScrapeResult(
        url=url, is_external=is_external, is_target=False, scraped=False, anchors=[], images=[]
    )


@functools.cache
def _placeholder_template(is_external: bool) -> tuple[str, str, tuple[Any, ...]]:
    """The hashed text of a placeholder around its URL (before, after) and its fields, which no URL changes."""
    page, payload = _prepare(_placeholder_result(_MARK, is_external), None, None, None)
    before, mark, after = canonical_json(payload).partition(canonical_json(_MARK))
    if not mark or _MARK in page.fields or canonical_json(_MARK) in after:
        raise AssertionError("a placeholder's URL is expected once in its hashed text, and nowhere else")
    return before, after, page.fields


_MARK = "\x00the placeholder's URL\x00"  # no URL holds a NUL


def prepare_resource(resource: Resource) -> tuple[str, tuple[Any, ...]]:
    """The content hash and the resource_state values after (hash, url_id)."""
    key = _resource_key(resource)
    known = _PREPARED_RESOURCES.get(key) if key is not None else None
    if known is None:
        known = _prepare_resource(resource)
        if key is not None:
            if len(_PREPARED_RESOURCES) >= 4096:
                _PREPARED_RESOURCES.clear()
            _PREPARED_RESOURCES[key] = known
    return known


# A crawl's pages name the same few resources, each answered once: prepared once per content
_PREPARED_RESOURCES: dict[tuple[Any, ...], tuple[str, tuple[Any, ...]]] = {}


def _resource_key(resource: Resource) -> tuple[Any, ...] | None:
    """What ``_prepare_resource`` reads of ``resource``, with the types that change its JSON (1, 1.0 and True
    are equal keys, not equal text); None for headers that are not all text."""
    items = tuple((resource.headers or {}).items())
    if not all(type(name) is str and type(value) is str for name, value in items):
        return None
    status, length = resource.status, resource.content_length
    return (
        resource.url,
        status,
        type(status),
        resource.status_text or "",
        resource.content_type,
        length,
        type(length),
        resource.compression or "",
        resource.cdn or "",
        bool(resource.is_external),
        items,
    )


def _prepare_resource(resource: Resource) -> tuple[str, tuple[Any, ...]]:
    values = (
        resource.status,
        resource.status_text or "",
        normalize_content_type(resource.content_type),
        resource.content_length,
        resource.compression or "",
        resource.cdn or "",
        canonical_json(resource.headers or {}),
        int(bool(resource.is_external)),
    )
    hashed = (*values[:6], canonical_json(logical_headers(resource.headers)), *values[7:])
    return content_hash({"url": resource.url, "fields": hashed}), values


# A plain anchor text: printable ASCII but `"` and `\` (what SQLite's json_quote leaves as it is, DEL
# included), beginning and ending with a letter or digit, without two spaces in a row
_PLAIN = re.compile(r"[A-Za-z0-9](?:[ !#-\[\]-\x7f]*[A-Za-z0-9])?")


def plain_length(text: str | None) -> int | None:
    """The length of a plain anchor text, 0 for any other text, None for none (stored as ``anchor.plain``).

    What ``linkgraph._PLAIN`` computes in SQL for a row stored without it: the anchor-text check reads the
    stored value instead of working it out for every anchor of a commit again.
    """
    if text is None or "\x00" in text:
        return None  # left to SQL, as before
    return len(text) if _PLAIN.fullmatch(text) and "  " not in text else 0
