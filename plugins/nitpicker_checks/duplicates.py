"""Duplicate and thin content: pages with the same main content, nearly the same, or next to none.

Per page (``signature``, a pure function of the page's main-content text: it runs wherever the text is, no
state of the crawl's process): the word count, a digest of the words and the set of word shingles. Per
commit, once (``group``): exact duplicates by digest; near duplicates by MinHash + LSH (``_Sketcher``,
``_bands``) over one page of each digest, each candidate pair confirmed by the exact Jaccard similarity of the
two shingle sets, so no pair is compared unless LSH proposes it.

numpy is imported on first use: loading the plugins (every command does) does not pay for it.
"""

from __future__ import annotations

import functools
import hashlib
import math
import zlib
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nitpicker_core import CheckContext, Finding, RegisterSetting, UsageError, content_words, main_text, read

from .common import content_pages, family, memo

if TYPE_CHECKING:
    import numpy as np

PLUGIN = "checks"
SHINGLE = 3  # words per shingle: a changed word changes the three shingles it is in
NUM_PERM = 64  # enough for LSH to propose pairs: the similarity reported is the exact one
_MIX = 0x9E3779B97F4A7C15  # odd 64-bit multiplier (the golden ratio's), to mix word hashes
LSH_MARGIN = 0.25  # LSH proposes pairs from this far below the threshold: a pair it misses is a lost finding
DEFAULT_SIMILARITY = 90  # percent
DEFAULT_LOW_WORDS = 200  # the usual audit tools' "low content" line
# Fewer words say too little to be anyone's duplicate ("Home", "Loading…", an empty template): such pages are
# low-content findings, not a duplicate group of every page that shows only its heading.
MIN_WORDS = 10
HELP = "https://developers.google.com/search/docs/essentials/spam-policies#thin-content"
DUPLICATE_HELP = "https://developers.google.com/search/docs/crawling-indexing/consolidate-duplicate-urls"


@dataclass(frozen=True)
class Signature:
    """What the grouping needs of one page: word count, words digest, sorted distinct shingle hashes."""

    words: int
    digest: str
    shingles: np.ndarray = field(compare=False)


def signature(text: str) -> Signature:
    """The signature of a main-content text (case folded, words only: markup and spacing do not count; each
    Han, Hiragana or Katakana character is a word, ``nitpicker_core.main_content.words``)."""
    import numpy as np

    words = content_words(text.casefold())
    digest = hashlib.blake2b(" ".join(words).encode(), digest_size=12).hexdigest()
    if not words:
        return Signature(0, digest, np.empty(0, dtype=np.uint32))
    # each word hashed once (crc32: the same in every process), each shingle a mix of its words' hashes
    ids = {w: zlib.crc32(w.encode()) for w in set(words)}
    hashed = np.fromiter(map(ids.__getitem__, words), dtype=np.uint64, count=len(words))
    if len(words) < SHINGLE:
        hashed = np.concatenate([hashed, np.zeros(SHINGLE - len(words), dtype=np.uint64)])
    mixed = np.zeros(len(hashed) - SHINGLE + 1, dtype=np.uint64)
    mix = np.uint64(_MIX)
    for k in range(SHINGLE):
        mixed = (mixed ^ hashed[k : len(hashed) - SHINGLE + 1 + k]) * mix  # wraps modulo 2**64
    return Signature(len(words), digest, np.unique((mixed >> np.uint64(32)).astype(np.uint32)))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """The Jaccard similarity of two sorted sets of distinct shingle hashes."""
    import numpy as np

    if not a.size and not b.size:
        return 1.0
    shared = np.intersect1d(a, b, assume_unique=True).size
    return shared / (a.size + b.size - shared)


@dataclass(frozen=True)
class Near:
    """A page's near duplicates: the closest one (highest similarity, then first URL), and how many."""

    closest: str
    similarity: float
    count: int


@dataclass
class Groups:
    exact: dict[str, list[str]]  # URL -> the other URLs with the same main content, sorted
    near: dict[str, Near]  # URL -> its near duplicates (exact duplicates aside)
    words: dict[str, int]  # URL -> main-content words
    candidates: int = 0  # pairs LSH proposed (each confirmed by its exact similarity)


def _gauss_legendre(n: int) -> list[tuple[float, float]]:
    """The ``n`` nodes and weights of Gauss-Legendre quadrature on [-1, 1] (Newton's method on P_n)."""
    rule = []
    for i in range(1, n + 1):
        x = math.cos(math.pi * (i - 0.25) / (n + 0.5))  # close to the i-th root: Newton converges at once
        for _ in range(100):
            p, previous = 1.0, 0.0  # P_k(x) and P_{k-1}(x), by the three-term recurrence up to P_n
            for k in range(1, n + 1):
                p, previous = ((2 * k - 1) * x * p - (k - 1) * previous) / k, p
            slope = n * (x * p - previous) / (x * x - 1)
            step = p / slope
            x -= step
            if abs(step) < 1e-15:
                break
        rule.append((x, 2 / ((1 - x * x) * slope * slope)))
    return rule


@functools.lru_cache(maxsize=64)
def _bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """The LSH bands for a threshold: (bands, rows per band), at most ``num_perm`` rows in all.

    Two sketches of similarity s share a band with probability P(s) = 1 - (1 - s**rows)**bands; the pair
    chosen makes the area of proposals below the threshold (false positives) plus the area of misses above
    it (false negatives) the smallest, both weighed alike. P is a polynomial of degree rows x bands <=
    num_perm, so Gauss-Legendre with num_perm // 2 + 1 nodes integrates it exactly (rounding aside). Plain
    Python: numpy's polynomial module alone took longer to import than this takes to run.
    """
    rule = _gauss_legendre(num_perm // 2 + 1)

    def on(low: float, high: float) -> list[tuple[float, float]]:  # the rule moved from [-1, 1]
        half = (high - low) / 2
        return [(low + half * (x + 1), w * half) for x, w in rule]

    below, above = on(0.0, threshold), on(threshold, 1.0)
    best: tuple[float, int, int] | None = None
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            false_positive = sum(w * (1 - (1 - s**rows) ** bands) for s, w in below)
            false_negative = sum(w * (1 - s**rows) ** bands for s, w in above)
            error = false_positive + false_negative
            if best is None or error < best[0]:
                best = (error, bands, rows)
    assert best is not None  # num_perm >= 1
    return best[1], best[2]


class _Sketcher:
    """MinHash sketches of shingle sets: ``num_perm`` random affine permutations of 32-bit values (odd
    multipliers: each is a bijection), after one avalanche mix of the shingle hashes, the minimum of each.

    The permutations are drawn as datasketch 2 draws them for its default seed and 32-bit scheme, whose
    sketches these were until issue 32: the same sketches, so the LSH proposes the same pairs and finds the
    same near duplicates as before (a pair LSH misses, 0.3 % of those at the threshold, is missed alike).
    """

    def __init__(self, num_perm: int) -> None:
        import numpy as np

        draw = np.random.RandomState(1)
        self.multipliers = draw.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        self.offsets = draw.randint(0, 1 << 32, num_perm, dtype=np.uint32)
        self.empty = np.full(num_perm, 0xFFFFFFFF, dtype=np.uint32)

    def sketch(self, shingles: np.ndarray) -> np.ndarray:
        import numpy as np

        if not shingles.size:
            return self.empty
        h = shingles.astype(np.uint32)  # the 32-bit finalizer of MurmurHash3: every bit moves every other
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
        found = self.empty.copy()
        for start in range(0, h.size, 4096):  # a page of 100,000 shingles holds 1.6 MB at a time, not 26
            chunk = h[start : start + 4096, None] * self.multipliers + self.offsets  # wraps modulo 2**32
            np.minimum(found, chunk.min(axis=0), out=found)
        return found


def group(signatures: Mapping[str, Signature], threshold: float, num_perm: int = NUM_PERM) -> Groups:
    """Exact and near duplicates among ``signatures`` (URL -> signature); ``threshold`` a fraction (0.9).

    Pages of fewer than ``MIN_WORDS`` words are nobody's duplicate (they are low-content pages). Near duplicates have a
    similarity of at least ``threshold`` but not the same words.
    """
    by_digest: dict[str, list[str]] = defaultdict(list)
    for url in sorted(signatures):
        if signatures[url].words >= MIN_WORDS:
            by_digest[signatures[url].digest].append(url)
    exact = {
        url: [o for o in urls if o != url] for urls in by_digest.values() if len(urls) > 1 for url in urls
    }
    words = {url: s.words for url, s in signatures.items()}
    if len(by_digest) < 2:  # no pair to propose (a small or canonicalised site): numpy is not even imported
        return Groups(exact, {}, words, 0)
    # near duplicates between digests: one page stands for each, pairs proposed by LSH, confirmed exactly
    bands, rows = _bands(max(0.05, threshold - LSH_MARGIN), num_perm)
    tables: list[dict[bytes, list[str]]] = [{} for _ in range(bands)]
    sketcher = _Sketcher(num_perm)
    partners: dict[str, list[tuple[float, str]]] = defaultdict(list)
    candidates = 0
    for key in by_digest:
        shingles = signatures[by_digest[key][0]].shingles
        sketch = sketcher.sketch(shingles)
        proposed: set[str] = set()
        for band, table in enumerate(tables):
            bucket = table.setdefault(sketch[band * rows : (band + 1) * rows].tobytes(), [])
            proposed.update(bucket)  # earlier digests: each pair once
            bucket.append(key)
        for other in proposed:
            candidates += 1
            similarity = jaccard(shingles, signatures[by_digest[other][0]].shingles)
            if similarity >= threshold:
                partners[key].append((similarity, other))
                partners[other].append((similarity, key))
    near = {}
    for key, found in partners.items():
        count = sum(len(by_digest[other]) for _, other in found)
        similarity, other = min(found, key=lambda item: (-item[0], by_digest[item[1]][0]))
        for url in by_digest[key]:
            near[url] = Near(by_digest[other][0], similarity, count)
    return Groups(exact, near, words, candidates)


def percent(similarity: float) -> int:
    """A similarity as the whole percent shown (rounded down: 89.9 % is below a 90 % threshold)."""
    return int(similarity * 100 + 1e-9)


def column_percent(similarity: float) -> float:
    """A similarity as the pages list's ``near_similarity``: percent rounded down to two decimals
    (193 / 203 → 95.07; rounded down, so a page shown at 90 % is at or above a 90 % threshold)."""
    return int(similarity * 10_000 + 1e-9) / 100


def facts(found: Groups) -> dict[str, dict[str, Any]]:
    """Each compared page's content columns (``read.PAGE_CONTENT_COLUMNS``), from the same grouping the
    findings come from: the numbers a page list shows are the findings' own."""
    out: dict[str, dict[str, Any]] = {}
    for url, words in found.words.items():
        others = found.exact.get(url, [])
        near = found.near.get(url)
        out[url] = {
            "main_words": words,
            "exact_duplicates": len(others),
            "duplicate_group": min(url, others[0]) if others else None,
            "near_duplicates": near.count if near else 0,
            "closest_near_duplicate": near.closest if near else None,
            "near_similarity": column_percent(near.similarity) if near else None,
        }
    return out


# -- settings ------------------------------------------------------------------------------------------------


def register_settings(register: RegisterSetting) -> None:
    register(
        "duplicate_similarity",
        type="int",
        default=DEFAULT_SIMILARITY,
        help="content-near-duplicate: pages whose main contents are at least this similar, in percent "
        "(Jaccard similarity of 3-word shingles; 1 to 100)",
    )
    register(
        "low_content_words",
        type="int",
        default=DEFAULT_LOW_WORDS,
        help="content-low: pages with fewer words than this in their main content (0 turns it off)",
    )


def similarity_setting(settings: Mapping[str, Any]) -> int:
    value = settings.get("duplicate_similarity")
    value = DEFAULT_SIMILARITY if value is None else int(value)
    if not 1 <= value <= 100:
        raise UsageError(
            f"plugins.checks.duplicate_similarity (--checks-duplicate-similarity) must be 1 to 100, got {value}"
        )
    return value


def low_words_setting(settings: Mapping[str, Any]) -> int:
    value = settings.get("low_content_words")
    value = DEFAULT_LOW_WORDS if value is None else int(value)
    if value < 0:
        raise UsageError(
            f"plugins.checks.low_content_words (--checks-low-content-words) must be 0 or more, got {value}"
        )
    return value


# -- the checks ----------------------------------------------------------------------------------------------


def compared(ctx: CheckContext) -> set[str]:
    """The pages compared: internal 2xx HTML pages, neither noindex nor canonicalised to another URL."""

    def load() -> set[str]:
        pages = {row["url"] for row in content_pages(ctx) if not row.get("noindex")}
        for row in read.page_rows(ctx.reader, ctx.commit, ("url", "canonical"), present=("canonical",)):
            if row["url"] in pages and row["canonical"] != row["url"]:
                pages.discard(row["url"])
        return pages

    return memo(ctx, "duplicates:pages", load)


def signatures(ctx: CheckContext) -> dict[str, Signature]:
    """Each compared page's signature, from its stored (rendered) HTML; one per distinct HTML."""

    def load() -> dict[str, Signature]:
        pages = compared(ctx)
        found: dict[str, Signature] = {}
        for url, html in read.page_html(ctx.reader, ctx.commit):
            if url in pages:
                text = main_text(html)
                if text is not None:
                    found[url] = signature(text)
        return found

    return memo(ctx, "duplicates:signatures", load)


def groups(ctx: CheckContext) -> Groups:
    threshold = similarity_setting(ctx.settings_for(PLUGIN)) / 100
    return memo(ctx, f"duplicates:{threshold}", lambda: group(signatures(ctx), threshold))


def exact_duplicates(ctx: CheckContext) -> Iterator[Finding]:
    for url, others in sorted(groups(ctx).exact.items()):
        more = f" (+{len(others) - 1} more)" if len(others) > 1 else ""
        yield Finding(url, others[0] + more)


def near_duplicates(ctx: CheckContext) -> Iterator[Finding]:
    # the detail is the closest page alone: a finding's detail must survive a re-crawl (records.Finding),
    # and the similarity or the count moves with any edit of either page, which would show the same
    # finding as fixed and new
    for url, near in sorted(groups(ctx).near.items()):
        yield Finding(url, near.closest)


def page_facts(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """The content columns stored with the commit beside content-near-duplicate's findings (its settings)."""
    return facts(groups(ctx))


def low_content(ctx: CheckContext) -> Iterator[Finding]:
    limit = low_words_setting(ctx.settings_for(PLUGIN))
    for url, words in sorted(signatures(ctx).items()):
        if words.words < limit:
            yield Finding(url)  # no word count in the detail: it moves with every edit (records.Finding)


_check = family("content", DUPLICATE_HELP)
CHECKS = [
    _check(
        "content-exact-duplicate",
        "Pages with the same main content",
        "medium",
        f"Indexable HTML pages (status 200) whose main content has the very same words as another page's "
        f"({MIN_WORDS} words or more); "
        "the detail is the first other page (and how many more). Search engines show one of them and "
        "may pick the wrong one.",
        "Keep one page and redirect the others to it, or point their canonical at it; if they should "
        "differ, write what each page has of its own.",
        exact_duplicates,
        90,
        type="opportunity",
    ),
    _check(
        "content-near-duplicate",
        "Pages nearly the same as another",
        "low",
        "Indexable HTML pages (status 200) whose main content is at least the similarity setting "
        f"({DEFAULT_SIMILARITY}% by default) like another page's, without being the same; the detail is "
        "the closest page; the pages list's near_duplicates, closest_near_duplicate and near_similarity "
        "columns give the number of near duplicates and the similarity.",
        "Merge the pages, point the near copies' canonical at the main one, or make each page say "
        "something the others do not.",
        near_duplicates,
        91,
        type="opportunity",
        settings=("duplicate_similarity",),
        page_facts=page_facts,
    ),
    _check(
        "content-low",
        "Pages with little content",
        "low",
        f"Indexable HTML pages (status 200) with fewer words in their main content than the setting "
        f"({DEFAULT_LOW_WORDS} by default; in Japanese and Chinese each character counts as a word); "
        "the pages list's main_words column gives the word count.",
        "Add what a visitor came for, merge the page into a fuller one, or keep it out of the index.",
        low_content,
        92,
        help_url=HELP,
        type="opportunity",
        settings=("low_content_words",),
    ),
]
