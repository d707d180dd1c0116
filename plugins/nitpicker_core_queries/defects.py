"""Shared defects: which findings of a defect's sources are one defect (a page, an image, an id), and their lifecycle.

Checks sharing a ``defect`` key find the same defect from different sources (the crawl, axe, markup,
Lighthouse), each with a detail of its own: the crawl names an image by its resolved URL, axe by the element's
HTML, markup by its start tag. A defect key here says what names one occurrence on a page, so a merged row
lists (and counts) each image, id or page once, with the sources that found it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import unescape
from typing import Any

from nitpicker_core import Check, Finding, join_url

STATES = ("new", "persisting", "fixed")
_TAG = re.compile(r"<\s*([a-zA-Z][\w:-]*)([^>]*)>?")
_ATTRIBUTE = re.compile(r"""([^\s"'=<>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?""")


def _attributes(snippet: str) -> tuple[str, dict[str, str]]:
    """The first tag of an element's HTML (or start tag): its name and attributes, values unescaped."""
    match = _TAG.search(snippet)
    if match is None:
        return "", {}
    found: dict[str, str] = {}
    for name, double, single, bare in _ATTRIBUTE.findall(match.group(2)):
        found.setdefault(name.lower(), unescape(double or single or bare))
    return match.group(1).lower(), found


def start_tag(url: str, detail: str) -> str:
    """The element's start tag rebuilt with its attributes in name order (axe's HTML and markup's tag agree)."""
    name, attributes = _attributes(detail)
    if not name:
        return detail
    return f"<{name}" + "".join(f' {k}="{v}"' for k, v in sorted(attributes.items())) + ">"


def image(url: str, detail: str) -> str:
    """An image by its source resolved on the page: the crawl's detail already is one; an element's src is read."""
    if not detail.lstrip().startswith("<"):
        return detail
    src = _attributes(detail)[1].get("src", "").strip()
    return join_url(url, src) if src else start_tag(url, detail)


def attribute(name: str) -> Callable[[str, str], str]:
    """An element by the value of one attribute (a duplicated id); the whole tag when it has none."""

    def key(url: str, detail: str) -> str:
        value = _attributes(detail)[1].get(name)
        return value if value is not None else detail

    return key


@dataclass(frozen=True)
class DefectKey:
    """What names one occurrence of a shared defect on a page; ``of`` None: the page itself (one per page).

    ``plain``: a crawl source's findings are the defects already (one per image it names, or one per page),
    so where it is the only source analysed its stored findings are read as they are.
    """

    of: Callable[[str, str], str] | None = None
    plain: bool = False

    def __call__(self, url: str, detail: str) -> str:
        return "" if self.of is None else self.of(url, detail)


#: defect key → how its occurrences are named; a defect not listed here (a plugin's own) is one per page
KEYS = {
    "image-alt": DefectKey(image, plain=True),
    "duplicate-id": DefectKey(attribute("id")),
    "link-name": DefectKey(start_tag),
    "button-name": DefectKey(start_tag),
    # one per page; the crawl's check of each finds a page once
    **dict.fromkeys(
        (
            "html-lang",
            "h1-missing",
            "h1-multiple",
            "title-missing",
            "description-missing",
            "viewport-missing",
        ),
        DefectKey(plain=True),
    ),
}
PER_PAGE = DefectKey()


def key_of(group: list[Check]) -> DefectKey:
    return KEYS.get(group[0].defect, PER_PAGE) if group else PER_PAGE


Found = dict[tuple[str, str], dict[str, list[str]]]  # (url, key) → {source id: its details}


def collect(key: DefectKey, findings: Iterable[tuple[str, Finding]]) -> Found:
    """(source id, finding) pairs gathered by defect: (url, key) → {source: details}."""
    found: Found = {}
    for source, f in findings:
        found.setdefault((f.url, key(f.url, f.detail)), {}).setdefault(source, []).append(f.detail)
    return found


@dataclass
class Lifecycle:
    """A merged row's defects now, and (when compared) new, persisting and fixed ones against the base.

    ``states`` is None when no source was analysed on both commits. Sources analysed now but not on the base
    take part all the same: a defect only they find is new (the row's note says the analyzer did not run
    there). A new defect is ``regressed`` when one of its findings was there in the commit before the base.
    """

    analysed: bool
    now: Found
    states: dict[str, Found] | None
    regressed: set[tuple[str, str]]

    def counts(self) -> dict[str, Any]:
        if not self.analysed:
            return {
                "state": "not_analysed",
                "error": None,
                "findings": None,
                "urls": None,
                **dict.fromkeys(STATES),
                "regressed": None,
            }
        states = self.states
        return {
            "state": "ok",
            "error": None,
            "findings": len(self.now),
            "urls": len({u for u, _ in self.now}),
            **{name: None if states is None else len(states[name]) for name in STATES},
            "regressed": None if states is None else len(self.regressed),
        }

    def items(self, row_id: str, group: list[Check], state: str | None) -> list[dict[str, Any]]:
        """One row per defect: its URL, state, first detail (sources in the group's order) and its sources."""
        from nitpicker_core import fingerprint

        states = self.states if self.states is not None else {"new": {}, "persisting": self.now, "fixed": {}}
        order = [c.id for c in group]
        items = []
        for name in STATES:
            if state and name != state:
                continue
            for (url, key), by_source in states[name].items():
                sources = [s for s in order if s in by_source]
                items.append(
                    {
                        "url": url,
                        "state": name,
                        "detail": sorted(by_source[sources[0]])[0],
                        "check": row_id,
                        "sources": sources,
                        "regressed": (url, key) in self.regressed,
                        "fingerprint": fingerprint(row_id, Finding(url, key)),
                    }
                )
        return items


def lifecycle(life: Any, group: list[Check], found: Callable[[Check, int], set[Finding] | None]) -> Lifecycle:
    """The group's defects on the commit against the base; ``found(check, commit)`` is None when not analysed."""
    key = key_of(group)
    now_sources = [(c, f) for c in group if (f := found(c, life.commit)) is not None]
    now = collect(key, ((c.id, f) for c, fs in now_sources for f in fs))
    if not now_sources:
        return Lifecycle(False, {}, None, set())
    if life.base is None:
        return Lifecycle(True, now, {"new": now, "persisting": {}, "fixed": {}}, set())
    if life.base == life.commit:
        return Lifecycle(True, now, {"new": {}, "persisting": now, "fixed": {}}, set())
    before_sources = [(c, f) for c, _ in now_sources if (f := found(c, life.base)) is not None]
    if not before_sources:
        return Lifecycle(True, now, None, set())
    before = collect(key, ((c.id, f) for c, fs in before_sources for f in fs))
    states = {
        "new": {k: v for k, v in now.items() if k not in before},
        "persisting": {k: v for k, v in now.items() if k in before},
        "fixed": {k: v for k, v in before.items() if k not in now},
    }
    regressed: set[tuple[str, str]] = set()
    if life.prior is not None and states["new"]:
        prior: set[tuple[str, str, str]] = set()
        for check, _ in now_sources:
            for finding in found(check, life.prior) or ():
                prior.add((check.id, finding.url, finding.detail))
        regressed = {
            k
            for k, by_source in states["new"].items()
            if any((s, k[0], d) in prior for s, details in by_source.items() for d in details)
        }
    return Lifecycle(True, now, states, regressed)
