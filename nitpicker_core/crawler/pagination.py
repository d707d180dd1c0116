"""Predictive pagination: from /page/1 then /page/2, guess /page/3… before the links are seen."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

__all__ = ["MAX_STEP", "PaginationPredictor", "Prediction", "detect_step", "plausible", "predict"]

MAX_STEP = 1000  # the largest step a pagination sequence is believed to take (offsets of 1000 per page)


@dataclass(frozen=True)
class Prediction:
    """A guessed URL, ``steps`` past ``after`` (a URL a page really links to); ``predicted`` is always True."""

    url: str
    after: str = ""
    steps: int = 1
    predicted: bool = True


@dataclass(frozen=True)
class _Step:
    where: str  # "path" or "query"
    index: int
    value: int
    step: int
    width: int  # zero-padded width, 0 when the token is not padded


def _tokens(url: str) -> tuple[tuple[str, str], list[str], list[tuple[str, str, str]]]:
    parts = urlsplit(url)
    query = [p.partition("=") for p in parts.query.split("&") if p]
    return (parts.scheme, parts.netloc), parts.path.split("/"), query


def _number_step(a: str, b: str) -> tuple[int, int] | None:
    if not (a.isdigit() and b.isdigit() and a.isascii() and b.isascii()):
        return None
    step = int(b) - int(a)
    return (int(b), step) if step > 0 else None


def detect_step(previous: str, current: str) -> _Step | None:
    """How ``current`` follows ``previous`` when they differ in exactly one integer token, else None."""
    origin_a, seg_a, query_a = _tokens(previous)
    origin_b, seg_b, query_b = _tokens(current)
    if origin_a != origin_b or len(seg_a) != len(seg_b) or len(query_a) != len(query_b):
        return None
    differences: list[tuple[str, int, str, str]] = [
        ("path", i, a, b) for i, (a, b) in enumerate(zip(seg_a, seg_b, strict=True)) if a != b
    ]
    for i, ((key_a, _, val_a), (key_b, _, val_b)) in enumerate(zip(query_a, query_b, strict=True)):
        if key_a != key_b:
            return None  # a different parameter set is a different page, not the next one
        if val_a != val_b:
            differences.append(("query", i, val_a, val_b))
    if len(differences) != 1:
        return None
    where, index, a, b = differences[0]
    found = _number_step(a, b)
    if found is None:
        return None
    padded = len(b) if b.startswith("0") and len(a) == len(b) else 0
    return _Step(where, index, found[0], found[1], padded)


def predict(previous: str, current: str, count: int) -> list[str]:
    """The ``count`` URLs after ``current`` in the sequence ``previous`` → ``current`` (empty if none)."""
    step = detect_step(previous, current)
    if step is None or count <= 0:
        return []
    return [_with_value(current, step, step.value + step.step * n) for n in range(1, count + 1)]


def _with_value(url: str, step: _Step, value: int) -> str:
    (scheme, host), segments, query = _tokens(url)
    text = str(value).zfill(step.width)
    if step.where == "path":
        segments[step.index] = text
    else:
        query[step.index] = (query[step.index][0], "=", text)
    return urlunsplit((scheme, host, "/".join(segments), "&".join("".join(param) for param in query), ""))


def plausible(previous_value: int, step: _Step) -> bool:
    """A step a site's pagination takes: at most MAX_STEP, and the numbers are multiples of it.

    Page numbers step by 1 and offsets by the page size (0 → 50 → 100), so 1→2, 10→20 and 0→50 are
    plausible; 3→50 (a "last page" link after "3") and 2024→2030 (a year six ahead) are not.
    """
    return step.step <= MAX_STEP and previous_value % step.step == 0


class PaginationPredictor:
    """Predicts the next pages of a sequence from what one page links to, never from guesses.

    The pairs are a page and the first new URL it links to (page 2 linking "next" to page 3) and two new
    URLs a page links to one after the other (a list page linking pages 1, 2): URLs found on different pages
    never pair, since parallel workers interleave them at random. The caller feeds only pages that some
    page links to (a page reached only by a guess is not fed), so a guess is at most ``count`` steps past
    a URL the site links to, and guesses never cascade.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._issued: set[str] = set()
        self._lock = threading.Lock()

    def observe_page(self, page_url: str, links: Sequence[str]) -> list[Prediction]:
        """Feed a page reached by links and the new in-scope URLs it links to, in order; returns new guesses."""
        chain = [page_url, *links]
        fresh: list[Prediction] = []
        with self._lock:
            for previous, current in zip(chain, chain[1:], strict=False):
                step = detect_step(previous, current)
                if step is None or not plausible(step.value - step.step, step):
                    continue
                for n in range(1, self.count + 1):
                    # current is a URL a page links to, so a guess is never more than count steps past one
                    value = step.value + step.step * n
                    url = _with_value(current, step, value)
                    if url not in self._issued:
                        self._issued.add(url)
                        fresh.append(Prediction(url, after=current, steps=n))
        return fresh
