"""Whether search engines may index a URL, judged from what a crawl stored about it (one rule for every check)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nitpicker_core.robots_directives import says_noindex
from nitpicker_core.urls import normalize

__all__ = ["non_indexable_reason"]


def non_indexable_reason(row: Mapping[str, Any]) -> str | None:
    """Why the URL of ``row`` would not be indexed, or None when nothing stored says so.

    ``row`` holds a commit's columns for the URL: ``url``, ``status``, ``redirect_dest``, ``is_skipped``,
    ``skip_reason``, ``error_kind``, ``noindex`` (meta robots), ``headers`` (names lower-cased) and
    ``canonical`` (resolved). The reasons, first match wins: "blocked by robots.txt", "redirects to
    URL", the 4xx/5xx status, "failed: KIND", "noindex", "noindex (X-Robots-Tag)", "canonicalised to
    URL". A URL skipped for another reason (excluded, a limit) is the crawl's choice, not the site's: None.
    """
    if row.get("is_skipped"):
        reason = str(row.get("skip_reason") or "")
        return reason if reason.startswith("blocked by robots.txt") else None
    if row.get("redirect_dest"):
        return f"redirects to {row['redirect_dest']}"
    status = row.get("status")
    if status is None:
        return f"failed: {row['error_kind']}" if row.get("error_kind") else None
    if not 200 <= status < 300:
        return str(status)
    if row.get("noindex"):
        return "noindex"
    if says_noindex((row.get("headers") or {}).get("x-robots-tag")):
        return "noindex (X-Robots-Tag)"
    canonical = str(row.get("canonical") or "").strip()
    # Another scheme than http(s), or http: on an https: page, is invalid: search engines ignore it
    # (canonical-invalid's finding). https: on an http: page is the move to HTTPS: it canonicalises.
    if canonical.lower().startswith("https://") or (
        canonical.lower().startswith("http://") and not str(row["url"]).lower().startswith("https://")
    ):
        try:
            if canonical != row["url"] and normalize(canonical) != normalize(str(row["url"])):
                return f"canonicalised to {canonical}"
        except ValueError:
            return None  # an invalid canonical is canonical-invalid's finding, and search engines ignore it
    return None
