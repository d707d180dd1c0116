"""The lighthouse analyzer: category scores as columns, failed audits as violations, per live page URL."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nitpicker_core import Analyzer, Cell, Column, PageInput, PageReport, UsageError, Violation

from .runner import PINNED, find_chromium, find_lighthouse, run_lighthouse

CATEGORIES = {"performance": "Performance", "accessibility": "Accessibility",
              "best-practices": "Best Practices", "seo": "SEO"}
PASS = 0.9  # Lighthouse's own pass threshold; below 0.5 it rates an audit as failing
UNSCORED = {"notApplicable", "informative", "manual", "error"}
MAX_ITEMS = 20  # node-level audits list every element; a page with 500 images needs no 500 rows
LINK = re.compile(r"\[[^\]]*\]\((https?://[^)\s]+)\)")


def _help_url(description: str) -> str:
    links = LINK.findall(description or "")
    return links[-1] if links else ""


def _nodes(audit: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = (audit.get("details") or {}).get("items") or []
    return [item["node"] for item in items if isinstance(item, Mapping) and isinstance(item.get("node"), Mapping)]


def failed_audits(report: Mapping[str, Any], url: str) -> list[Violation]:
    """A violation per failing element of node audits (image-alt…), else one per failed audit."""
    violations: list[Violation] = []
    audits = report.get("audits") or {}
    seen: set[str] = set()
    for category in (report.get("categories") or {}).values():
        for ref in category.get("auditRefs") or []:
            audit = audits.get(ref.get("id"))
            if not audit or audit["id"] in seen:
                continue
            seen.add(audit["id"])
            score = audit.get("score")
            if score is None or audit.get("scoreDisplayMode") in UNSCORED or score >= PASS:
                continue
            severity = "error" if score < 0.5 else "warning"
            base = {"rule": audit["id"], "severity": severity, "url": url,
                    "help_url": _help_url(audit.get("description", ""))}
            nodes = _nodes(audit)
            if nodes:
                for node in nodes[:MAX_ITEMS]:
                    violations.append(Violation(message=audit.get("title", ""), location=node.get("selector", ""),
                                                snippet=node.get("snippet", ""), **base))
            else:
                message = audit.get("title", "")
                if audit.get("displayValue"):
                    message += f" ({audit['displayValue']})"
                violations.append(Violation(message=message, **base))
    return violations


PRESETS = ("", "desktop", "perf", "experimental")

class LighthouseAnalyzer(Analyzer):
    name = "lighthouse"
    label = "Lighthouse: performance, accessibility, best practices, SEO (live URL)"
    version = f"1.0+lighthouse.{PINNED}"
    columns = tuple(Column(key, label) for key, label in CATEGORIES.items())
    concurrency = 1  # parallel runs skew each other's performance timings
    default = False  # 10–25 s a page: runs only when named (--plugin lighthouse) or with --all
    timeout = 180.0  # the engine's bound; the CLI's own (setting ``timeout``) is shorter
    order = 60

    def check(self, settings: Mapping[str, Any]) -> None:
        # here, not in configure: a bad value stops a run that uses lighthouse, not every command
        unknown = [c for c in settings.get("categories") or [] if c not in CATEGORIES]
        if unknown:
            raise UsageError(f"lighthouse: unknown categories {', '.join(unknown)} (known: {', '.join(CATEGORIES)})")
        if (settings.get("preset") or "") not in PRESETS:
            raise UsageError(f"lighthouse: preset must be one of {', '.join(PRESETS[1:])}, not {settings['preset']!r}")

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.binary = find_lighthouse(settings.get("binary") or "")
        self.chromium = find_chromium()
        self.categories = [c for c in settings.get("categories") or CATEGORIES if c]
        self.run_timeout = float(settings.get("timeout") or 150)
        self.extra = [f"--only-categories={','.join(self.categories)}"]
        if settings.get("preset"):
            self.extra.append(f"--preset={settings['preset']}")
        if settings.get("locale"):
            self.extra.append(f"--locale={settings['locale']}")

    def each_page(self, page: PageInput) -> PageReport:
        # Lighthouse measures loading, so it needs the live URL, not the archived HTML
        report = run_lighthouse(self.binary, self.chromium, page.url, self.extra, self.run_timeout)
        violations = failed_audits(report, page.url)
        cells: dict[str, Any] = {}
        for key, category in (report.get("categories") or {}).items():
            ids = {ref.get("id") for ref in category.get("auditRefs") or []}
            failed = len({v.rule for v in violations if v.rule in ids})
            score = category.get("score")
            value = None if score is None else round(float(score), 2)
            cells[key] = Cell(value, f"{failed} failed audits") if failed else value
        return PageReport(cells, violations)
