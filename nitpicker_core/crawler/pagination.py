"""Predictive pagination: from /page/1 then /page/2, guess /page/3… before the links are seen."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

__all__ = ["PaginationPredictor", "Prediction", "detect_step", "predict"]


@dataclass(frozen=True)
class Prediction:
    """A guessed URL; ``predicted`` is always True so the queue can keep it from predicting again."""

    url: str
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
    (scheme, host), segments, query = _tokens(current)
    urls = []
    for n in range(1, count + 1):
        value = str(step.value + step.step * n).zfill(step.width)
        segs, params = list(segments), list(query)
        if step.where == "path":
            segs[step.index] = value
        else:
            params[step.index] = (params[step.index][0], "=", value)
        query_text = "&".join("".join(param) for param in params)
        urls.append(urlunsplit((scheme, host, "/".join(segs), query_text, "")))
    return urls


class PaginationPredictor:
    """Watches the URLs the crawler queues, in order, and predicts the next pages of a sequence.

    A predicted URL fed back with ``predicted=True`` never triggers a prediction and does not become
    the "previous" URL, so guesses never cascade.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self._previous: str | None = None
        self._issued: set[str] = set()
        self._lock = threading.Lock()

    def observe(self, url: str, *, predicted: bool = False) -> list[Prediction]:
        """Feed the next queued URL; returns new predictions (never one already issued)."""
        if predicted:
            return []
        with self._lock:
            previous, self._previous = self._previous, url
            if previous is None:
                return []
            fresh = [u for u in predict(previous, url, self.count) if u not in self._issued]
            self._issued.update(fresh)
        return [Prediction(u) for u in fresh]
