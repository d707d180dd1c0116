"""The one definition of each count a front door shows: URLs, pages, status classes, failures, % of URLs.

The ``summary`` query answers these under ``totals`` (derived from its stored digest by :func:`totals`),
and the ``issues`` query gives each check's share of the same denominator; the terminal summary, the viewer
and the sheets read them from there and count nothing themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")

# What each number means, in the words every front door uses for it (docs/guide/query.md, "What the numbers mean").
DEFINITIONS: dict[str, str] = {
    "urls": "every URL of the commit, internal and external: answered, redirected, failed, skipped or not checked",
    "internal_urls": "URLs on the crawled site: in the crawl's scope, whatever became of them, and the host's "
    "URLs outside the scope that pages link to (checked, never crawled)",
    "external_urls": "URLs outside the scope that pages link to (checked, never crawled)",
    "pages": "internal URLs that answered with an HTML document (text/html), whatever their status",
    "status_class": "2xx, 3xx, 4xx, 5xx: URLs, internal and external, that answered with a status of that class "
    "(4xx: 400 to 499), whatever their content type",
    "failed": "URLs that got no HTTP answer (DNS, refused, timeout, …)",
    "blocked": "URLs whose server refused the crawler (401, 403, 429, 999 or a bot challenge page): answered, "
    "so counted in their status class too, but no broken page",
    "errors": "URLs that answered 4xx or 5xx or failed, counted per side (internal, external)",
    "skipped": "URLs a rule kept from being requested (robots.txt, --exclude, limits)",
    "not_checked": "URLs never requested (e.g. --no-fetch-external)",
    "findings": "what a check found: one per URL and detail (a merged defect: one per URL)",
    "share": "a check's URLs as a percentage of the internal URLs (% of URLs)",
}
# The denominator of every "% of URLs": the internal URLs (a check's URLs are always internal ones).
SHARE_OF = "internal_urls"


def totals(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The named counts of a ``summary`` answer, by the names above; ``internal`` and ``external`` split
    the URL outcomes (status classes, failed, skipped, not_checked) by side."""
    counts, status = summary["counts"], summary["status"]
    sides: dict[str, dict[str, int]] = {}
    for side in ("internal", "external"):
        spread = status.get(side) or {}
        sides[side] = {
            **dict.fromkeys(STATUS_CLASSES, 0),
            **{key: spread.get(key, 0) for key in ("failed", "skipped", "not_checked", "blocked")},
        }
    classes = dict.fromkeys(STATUS_CLASSES, 0)
    for row in status["by_code"]:
        key = f"{str(row['status'])[:1]}xx"
        if key in classes:
            classes[key] += row["count"]
            for side in sides:
                sides[side][key] += row.get(side, 0)
    internal, external = counts["internal"]["urls"], counts["external"]["urls"]
    return {
        "urls": internal + external,
        "internal_urls": internal,
        "external_urls": external,
        "pages": counts["internal"]["pages"],
        **classes,
        "failed": status.get("failed", 0),
        "skipped": status.get("skipped", 0),
        "not_checked": status.get("not_checked", 0),
        "blocked": status.get("blocked", 0),  # a summary stored before blocked was counted has none
        "blocked_by_status": status.get("blocked_by_status", []),
        **sides,
    }


def share(urls: int | None, denominator: int) -> float | None:
    """``urls`` as a percentage of ``denominator`` with one decimal; None when either is unknown or zero."""
    if urls is None or not denominator:
        return None
    return round(100.0 * urls / denominator, 1)
