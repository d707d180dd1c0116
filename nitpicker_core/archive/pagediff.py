"""Diffs that explain: per page, what changed between two commits (of one archive or of two), and the HTML."""

from __future__ import annotations

import difflib
import functools
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nitpicker_core.errors import UsageError

from .cells import url_cells
from .diffwords import summarize
from .prepare import VOLATILE_HEADERS
from .reader import ArchiveReader

# Row keys that say when or where a page was seen, not what it was.
_NOT_CONTENT = frozenset({"url", "hash", "first_seen_at", "last_crawled_at", "order"})
# Fields whose JSON objects are compared key by key instead of as one value.
_MAPPINGS = ("headers", "extra")
# Headers that differ on every response of an unchanged page: named when they differ, never shown as changes.
NOISY_HEADERS = VOLATILE_HEADERS | {"set-cookie"}
FACETS: dict[str, Callable[[ArchiveReader, str, int], list[Any]]] = {
    "anchors": lambda r, url, c: [
        {"href": a["href"] + (f"#{a['fragment']}" if a["fragment"] else ""), "text": a["text"]}
        for a in r.anchors(url, c)
    ],
    "images": lambda r, url, c: [{"src": i["src"], "alt": i["alt"]} for i in r.images(url, c)],
    "resources": lambda r, url, c: list(r.page_resources(url, c)),
    "jsonld": lambda r, url, c: [
        {"kind": j["kind"], "types": j["types"], "data": j["raw"] if j["parsed"] is None else j["parsed"]}
        for j in r.jsonld(url, c)
    ],
    "tags": lambda r, url, c: [
        {k: t[k] for k in ("provider", "category", "external_id", "version")} for t in r.tags(url, c)
    ],
    "headings": lambda r, url, c: [{"level": h["level"], "text": h["text"]} for h in r.headings(url, c)],
    "errors": lambda r, url, c: [{"step": e["step"], "message": e["message"]} for e in r.page_errors(url, c)],
}


@dataclass(frozen=True)
class Side:
    """One side of a diff: a resolved commit of an open archive."""

    reader: ArchiveReader
    commit: int

    @property
    def label(self) -> str:
        return f"{self.reader.name}@{self.commit}"


def side(reader: ArchiveReader, commit: int | str | None = None) -> Side:
    """``commit`` (an id, "HEAD" or None) of ``reader`` resolved; ``ArchiveError`` for an unknown one."""
    return Side(reader, reader.resolve(commit))


def parent_side(new: Side) -> Side | None:
    """The side of ``new``'s parent commit, None for a commit without one."""
    rows = new.reader.execute("SELECT parent_id FROM commits WHERE id = ?", (new.commit,))
    parent = rows[0][0] if rows else None
    return None if parent is None else Side(new.reader, parent)


def compare(old: Side, new: Side) -> dict[str, Any]:
    """Page URLs ``added``, ``removed``, ``gone`` (``is_gone``: answered before, an error now), ``modified``
    (the others that changed) and ``added``/``removed``/``modified`` for ``resources``, by URL.

    Within one archive equal state ids mean equal content; across two archives, equal state hashes.
    """
    if old.reader is new.reader:
        return split_gone(old.reader.diff(old.commit, new.commit), old.reader.gone(old.commit, new.commit))
    pages = _by_hash(old.reader.row_hashes(old.commit), new.reader.row_hashes(new.commit))
    resources = _by_hash(*({r["url"]: r["hash"] for r in s.reader.resources(s.commit)} for s in (old, new)))
    gone = [
        url
        for url in pages["modified"]
        if is_gone(old.reader.page(url, old.commit), new.reader.page(url, new.commit))
    ]
    return split_gone({**pages, "resources": resources}, gone)


def split_gone(changes: dict[str, Any], gone: Iterable[str]) -> dict[str, Any]:
    """``changes`` with the ``gone`` pages out of ``modified`` and in a list of their own."""
    gone = set(gone)
    out = dict(changes)
    out["gone"] = sorted(url for url in changes.get("modified", ()) if url in gone)
    out["modified"] = [url for url in changes.get("modified", ()) if url not in gone]
    return out


def is_gone(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether a page that answered (2xx/3xx) in row ``a`` is gone in row ``b``: an error status (404, 410,
    5xx) or a fetch that failed (no status)."""
    if a is None or b is None or not isinstance(a.get("status"), int) or not 200 <= a["status"] < 400:
        return False
    status = b.get("status")
    if status is None:
        return bool(b.get("scraped", True)) and not b.get("is_skipped")
    return int(status) >= 400


def _by_hash(a: dict[str, str], b: dict[str, str]) -> dict[str, list[str]]:
    return {
        "added": sorted(b.keys() - a.keys()),
        "removed": sorted(a.keys() - b.keys()),
        "modified": sorted(url for url in a.keys() & b.keys() if a[url] != b[url]),
    }


def page_diff(old: Side, new: Side, url: str) -> dict[str, Any]:
    """What changed in ``url`` from ``old`` to ``new``: ``status`` (added, removed, gone — answered before, an
    error status or a failed fetch now —, modified, unchanged),
    ``changed`` (the names below that differ) and, per changed name, the difference:

    - a field of the page's row: ``[old, new]``;
    - ``headers``/``extra``: ``{"added": {k: v}, "removed": {k: v}, "changed": {k: [old, new]}}``, headers
      that differ on every response (``NOISY_HEADERS``) or only in a nonce just named in ``"noise"``;
    - ``anchors``, ``images``, ``resources``, ``jsonld``, ``tags``, ``headings``, ``errors``: ``{"added": [...],
      "removed": [...]}``, compared as sets (with multiplicity), so a mere change of order is no change;
    - ``analysis``: analyzer cells that differ, ``{"analyzer/column": [old, new]}`` (an extracted price),
      only cells both commits have (an analyzer run on one side only is no change of the page);
    - ``summary`` (of a modified page): the changes in words (``diffwords.summarize``), the most telling first.

    ``UsageError`` when ``url`` is in neither commit.
    """
    a, b = old.reader.page(url, old.commit), new.reader.page(url, new.commit)
    if a is None and b is None:
        raise UsageError(f"{url} is in neither {old.label} nor {new.label}")
    result: dict[str, Any] = {"url": url, "base": old.commit, "commit": new.commit}
    if a is None or b is None:
        return {**result, "status": "added" if a is None else "removed", "changed": []}
    if a["hash"] == b["hash"]:
        return {**result, "status": "unchanged", "changed": []}
    fields: dict[str, Any] = {}
    for key in sorted((a.keys() | b.keys()) - _NOT_CONTENT - set(_MAPPINGS)):
        if a.get(key) != b.get(key):
            fields[key] = [a.get(key), b.get(key)]
    result.update(status="gone" if is_gone(a, b) else "modified", fields=fields)
    changed = list(fields)
    for key in _MAPPINGS:
        noisy = _noisy_header if key == "headers" else _never
        delta = _mapping_diff(a.get(key) or {}, b.get(key) or {}, noisy)
        if delta:
            result[key] = delta
            changed += [key] if set(delta) - {"noise"} else []
    for name, read in FACETS.items():
        delta = set_diff(read(old.reader, url, old.commit), read(new.reader, url, new.commit))
        if delta:
            result[name] = delta
            changed.append(name)
    cells = cell_diff(old, new, url)
    if cells:
        result["analysis"] = cells
        changed.append("analysis")
    result["changed"] = changed
    result["summary"] = summarize(result)  # the same, in words, for people
    return result


def cell_diff(old: Side, new: Side, url: str) -> dict[str, list[Any]]:
    """The analyzer cells of ``url`` both sides have that differ: ``{"analyzer/column": [old, new]}``."""
    a, b = url_cells(old.reader, old.commit, url), url_cells(new.reader, new.commit, url)
    return {key: [a[key], b[key]] for key in sorted(a.keys() & b.keys()) if a[key] != b[key]}


def explain(old: Side, new: Side, urls: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``page_diff`` of each of ``urls`` without the keys every one of them repeats, by URL."""
    out = {}
    for url in urls:
        delta = page_diff(old, new, url)
        out[url] = {k: v for k, v in delta.items() if k not in ("url", "base", "commit")}
    return out


def _mapping_diff(
    a: dict[str, Any], b: dict[str, Any], noisy: Callable[[str, Any, Any], bool]
) -> dict[str, Any]:
    differing = sorted(k for k in a.keys() | b.keys() if (k in a) != (k in b) or a[k] != b[k])
    noise = [k for k in differing if noisy(k, a.get(k), b.get(k))]
    real = [k for k in differing if k not in noise]
    out = {
        "added": {k: b[k] for k in real if k not in a},
        "removed": {k: a[k] for k in real if k not in b},
        "changed": {k: [a[k], b[k]] for k in real if k in a and k in b},
        "noise": noise,
    }
    return {key: value for key, value in out.items() if value}


def _noisy_header(name: str, old: Any, new: Any) -> bool:
    """A header that differs on every response, or whose values differ only in per-render noise (the nonce
    of a Content-Security-Policy)."""
    if name.lower() in NOISY_HEADERS:
        return True
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    return _quiet(old) == _quiet(new)


def _never(name: str, old: Any, new: Any) -> bool:
    return False


def _quiet(value: str) -> str:
    for pattern in _builtin():
        value = pattern.sub(_blank, value)
    return value


@functools.cache
def _builtin() -> tuple[re.Pattern[str], ...]:
    return tuple(patterns())


def set_diff(a: Sequence[Any], b: Sequence[Any]) -> dict[str, list[Any]]:
    """Items of ``b`` not in ``a`` and of ``a`` not in ``b``, as multisets, each in its document order."""

    def key(item: Any) -> str:
        return json.dumps(item, sort_keys=True, default=str)

    left, right = Counter(map(key, a)), Counter(map(key, b))
    out = {}
    for name, items, extra in (("added", b, right - left), ("removed", a, left - right)):
        picked = []
        for item in items:
            k = key(item)
            if extra[k] > 0:
                extra[k] -= 1
                picked.append(item)
        if picked:
            out[name] = picked
    return out


# --- the HTML line diff ---------------------------------------------------------------------------------

# What differs between two renders of an unchanged page. A pattern with groups blanks only its groups.
BUILTIN_NORMALIZE: tuple[str, ...] = (
    r"""\bnonce=["']([^"']*)["']""",  # CSP nonces on script and style elements
    r"'nonce-([A-Za-z0-9+/=_-]+)'",  # and in a Content-Security-Policy meta element
    # CSRF tokens in hidden inputs and meta elements, whichever attribute comes first
    r"""<(?:input|meta)\b[^>]*\b(?:name|id)=["'][^"']*(?:csrf|xsrf|authenticity_token|__requestverificationtoken)"""
    r"""[^"']*["'][^>]*?\b(?:value|content)=["']([^"']*)["']""",
    r"""<(?:input|meta)\b[^>]*?\b(?:value|content)=["']([^"']*)["'][^>]*\b(?:name|id)=["'][^"']*"""
    r"""(?:csrf|xsrf|authenticity_token|__requestverificationtoken)[^"']*["']""",
    # cache-busting query strings: ?v=123, &ver=1.2.3, ?_=1700000000, ?t=…, ?cb=…, ?hash=…
    r"""(?:[?&;]|&amp;)(?:v|ver|version|_|t|ts|cb|cachebust|cache|rev|hash|build)=([\w.-]+)""",
    # timestamps: ISO 8601 date-times with or without seconds, fraction and zone
    r"\b(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)",
)
PLACEHOLDER = "…"
_EMPTY_ELEMENT = re.compile(r"(<([A-Za-z][\w-]*)\b[^<>]*>)\n(</\2>)")


def patterns(extra: Iterable[str] = (), builtin: bool = True) -> list[re.Pattern[str]]:
    """The normalisation patterns compiled (case-insensitive): the built-ins unless ``builtin`` is false,
    then ``extra``; ``UsageError`` naming a pattern that does not compile."""
    out = []
    for pattern in (*(BUILTIN_NORMALIZE if builtin else ()), *extra):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(re.compile(pattern, re.IGNORECASE))
        except (re.error, RecursionError, OverflowError) as exc:
            raise UsageError(
                f"normalisation pattern {pattern!r} is not a valid regular expression: {exc}"
            ) from None
    return out


def normalize_html(text: str, compiled: Iterable[re.Pattern[str]]) -> str:
    """``text`` with every match of ``compiled`` (or each group of a match) replaced by ``PLACEHOLDER``, and a
    line break between tags that touch, so a minified page still diffs line by line."""
    for pattern in compiled:
        text = pattern.sub(_blank, text)
    text = re.sub(r">[ \t]*<(?=[A-Za-z!/])", ">\n<", text)
    return _EMPTY_ELEMENT.sub(r"\1\3", text)  # but an empty element stays whole: <script src=…></script>


def _blank(match: re.Match[str]) -> str:
    if not match.re.groups:
        return PLACEHOLDER
    whole, start, out = match.group(0), match.start(), []
    cursor = 0
    for group in range(1, match.re.groups + 1):
        begin, end = match.span(group)
        if begin < 0 or begin - start < cursor:  # a group that did not take part, or nested in the last one
            continue
        out += [whole[cursor : begin - start], PLACEHOLDER]
        cursor = end - start
    return "".join(out) + whole[cursor:]


def html_diff(old: Side, new: Side, url: str, compiled: Iterable[re.Pattern[str]], context: int = 3) -> str:
    """A unified diff of ``url``'s rendered HTML from ``old`` to ``new`` after normalisation ("" when equal).

    ``UsageError`` when ``url`` is missing from either side or has no stored HTML there.
    """
    compiled = list(compiled)
    texts = []
    for s in (old, new):
        if s.reader.page(url, s.commit) is None:
            raise UsageError(f"{url} is not in {s.label}")
        html = s.reader.html(url, s.commit)
        if html is None:
            raise UsageError(f"{url} has no stored HTML in {s.label}")
        texts.append(normalize_html(html, compiled).splitlines())
    lines = difflib.unified_diff(texts[0], texts[1], old.label, new.label, n=context, lineterm="")
    return "".join(line + "\n" for line in lines)
