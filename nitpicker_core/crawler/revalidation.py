"""``crawl --update``: conditional requests from the base commit's validators, and what they found.

A page of the base commit that sent an ETag or Last-Modified is asked again with If-None-Match /
If-Modified-Since. A 304 Not Modified means the server vouches for the document being the same, so the
page is not rendered: the new commit points at its base state (``RevalidatingSink.put_unchanged``) and the
crawl follows the links that state holds. Any other answer renders the page as usual; a server that ignores
validators simply answers 200 every time. ``--update --full`` sends no validator at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Revalidation", "conditional_headers"]


def conditional_headers(validators: Mapping[str, str]) -> dict[str, str]:
    """The request headers that ask "has this changed since?" for one page's stored validators."""
    headers = {}
    if validators.get("etag"):
        headers["If-None-Match"] = validators["etag"]
    if validators.get("last_modified"):
        headers["If-Modified-Since"] = validators["last_modified"]
    return headers


@dataclass
class Revalidation:
    """The validators of an update's base commit, and the run's counts of what asking with them found."""

    validators: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    off: str = ""  # why this run sends no conditional request ("" when it does, or is no update)
    conditional: int = 0  # conditional requests sent
    unchanged: int = 0  # pages a 304 let the commit take over from the base commit
    changed: int = 0  # pages that answered otherwise and were rendered

    def headers_for(self, url: str) -> dict[str, str] | None:
        """Conditional headers for ``url``, or None when it is not asked conditionally."""
        found = self.validators.get(url)
        return conditional_headers(found) if found else None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "conditional": self.conditional,
            "unchanged": self.unchanged,
            "changed": self.changed,
        }
        if self.off:
            out["off"] = self.off
        return out
