"""What each well-known crawler may fetch by a site's robots.txt: search engines and AI crawlers (issue 32).

The crawlers are ``data/crawlers.json`` (each with its vendor's documentation as ``source``). A robots.txt
the crawl read is judged as RFC 9309 says a crawler would: 200 → its rules; 4xx → no rules, everything
allowed; 5xx → everything disallowed; no answer at all → unknown (``None``). Matching is protego's, the
crawler's own: the longest user-agent line naming the token, else ``*``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

__all__ = [
    "KINDS",
    "Crawler",
    "RobotsFile",
    "access",
    "blocked_summary",
    "written_on",
    "crawlers",
    "robots_origin",
]

#: what a crawler is for, as the data file says
KINDS = ("search", "ai-training", "ai-search", "ai-assistant", "control")
_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


@dataclass(frozen=True)
class Crawler:
    token: str  # the user-agent token robots.txt names it by
    company: str
    kind: str  # one of KINDS
    ai: bool  # its fetches feed AI (training, AI search or an assistant)
    renders_js: bool | None  # None: its vendor does not say
    source: str  # the vendor's documentation


@dataclass(frozen=True)
class RobotsFile:
    """One origin's robots.txt as the crawl read it: the HTTP status, or the failure when none came."""

    origin: str  # scheme://host[:port]
    status: int | None
    failure: str | None = None  # an error kind (timeout, dns, …) when there was no answer
    text: str = ""  # the body of a 200 answer (at most 500 KiB)


@cache
def _data() -> dict[str, Any]:
    return dict(json.loads(resources.files("nitpicker_core").joinpath("data/crawlers.json").read_text()))


def crawlers() -> tuple[Crawler, ...]:
    """The well-known crawlers, in the data file's order."""
    return tuple(Crawler(**row) for row in _data()["crawlers"])


def written_on() -> str:
    """The date the data file was written (from the vendors' documentation as known then; not re-checked since)."""
    return str(_data()["written"])


def robots_origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}"


@dataclass
class _Rules:
    """A robots.txt as a crawler reads it: a parser (None: everything allowed) or unknown."""

    parser: Protego | None
    known: bool = True

    @classmethod
    def of(cls, file: RobotsFile) -> _Rules:
        if file.status is None:
            return cls(None, known=False)
        if 500 <= file.status <= 599:
            return cls(Protego.parse(_DISALLOW_ALL))
        if file.status != 200:
            return cls(None)
        try:
            return cls(Protego.parse(file.text))
        except Exception:  # noqa: BLE001 - a robots.txt protego cannot read allows everything (as the crawl did)
            return cls(None)

    def group(self, token: str) -> tuple[Any, str | None]:
        """A key shared by the tokens the same group of rules applies to, and that group's user-agent line
        (``*``, the token's own, or None when no group applies)."""
        if self.parser is None:
            return None, None
        find = getattr(self.parser, "_get_matching_rule_set", None)  # protego's own choice of group
        if find is None:
            return token, None
        ruleset = find(token)
        return (id(ruleset), getattr(ruleset, "user_agent", None)) if ruleset is not None else (None, None)

    def allowed(self, url: str, token: str) -> bool | None:
        if not self.known:
            return None
        return True if self.parser is None else bool(self.parser.can_fetch(url, token))


def access(
    files: Iterable[RobotsFile],
    roots: Iterable[str],
    pages: Iterable[str] | None = None,
    tokens: Iterable[str] | None = None,
    list_disallowed: bool = False,
) -> list[dict[str, Any]]:
    """Per crawler (``tokens``: only those, case-insensitive), whether robots.txt lets it fetch each start
    URL's origin ("/": ``site_wide``) and, given ``pages``, how many of them it may fetch.

    ``site_wide`` is True when every start origin whose robots.txt was read allows "/", False when none
    does, "partly" in between, None when none was read. ``everything_blocked``: "/" disallowed everywhere
    and no page allowed (a ``Disallow: /``). ``group``: the user-agent line that applied at the first start
    origin (``*``, the crawler's own token, or None: no group, everything allowed). With
    ``list_disallowed`` each row lists the disallowed page URLs.
    """
    rules = {file.origin: _Rules.of(file) for file in files}
    origins = [o for o in dict.fromkeys(robots_origin(r) for r in roots) if o in rules]
    wanted = {t.lower() for t in tokens} if tokens is not None else None
    chosen = [c for c in crawlers() if wanted is None or c.token.lower() in wanted]
    page_list = list(dict.fromkeys(pages)) if pages is not None else None
    by_origin: dict[str, list[str]] = {}
    for url in page_list or ():
        by_origin.setdefault(robots_origin(url), []).append(url)
    verdicts: dict[tuple[str, Any], list[str]] = {}  # (origin, group key) → the disallowed pages
    rows = []
    for crawler in chosen:
        home = [rules[o].allowed(o + "/", crawler.token) for o in origins]
        read = [h for h in home if h is not None]
        site: bool | str | None = (
            None if not read else True if all(read) else False if not any(read) else "partly"
        )
        group = rules[origins[0]].group(crawler.token)[1] if origins else None
        row: dict[str, Any] = {
            "token": crawler.token,
            "company": crawler.company,
            "kind": crawler.kind,
            "ai": crawler.ai,
            "renders_js": crawler.renders_js,
            "source": crawler.source,
            "group": group,
            "site_wide": site,
        }
        if page_list is not None:
            disallowed: list[str] = []
            unknown = 0
            for origin, urls in by_origin.items():
                rule = rules.get(origin)
                if rule is None or not rule.known:
                    unknown += len(urls)
                    continue
                key = (origin, rule.group(crawler.token)[0])
                if key not in verdicts:
                    verdicts[key] = [u for u in urls if not rule.allowed(u, crawler.token)]
                disallowed.extend(verdicts[key])
            row["pages_allowed"] = len(page_list) - len(disallowed) - unknown
            row["pages_disallowed"] = len(disallowed)
            row["pages_unknown"] = unknown
            row["everything_blocked"] = site is False and row["pages_allowed"] == 0
            if list_disallowed:
                row["disallowed"] = sorted(disallowed)
        else:
            row["everything_blocked"] = site is False
        rows.append(row)
    return rows


def blocked_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The site-wide verdicts in a few numbers: AI crawlers blocked, of those judged, and their tokens."""
    judged = [r for r in rows if r["site_wide"] is not None]
    ai = [r for r in judged if r["ai"]]
    return {
        "crawlers": len(judged),
        "blocked": [r["token"] for r in judged if r["site_wide"] is False],
        "ai_crawlers": len(ai),
        "ai_blocked": [r["token"] for r in ai if r["site_wide"] is False],
        "ai_partly": [r["token"] for r in ai if r["site_wide"] == "partly"],
    }
