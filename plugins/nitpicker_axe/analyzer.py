"""The axe analyzer: one Chromium per worker, axe-core run inside each page as the browser renders it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections import Counter
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any

import nitpicker_core
from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    PageInput,
    PageReport,
    Rule,
    UsageError,
    Violation,
    load_translations,
)

from .axe_core import axe_source, axe_version, load_locale
from .catalogue import RULES

IMPACTS = ("critical", "serious", "moderate", "minor")
#: axe's impact on nitpicker's one priority scale
PRIORITY = {"critical": "critical", "serious": "high", "moderate": "medium", "minor": "low"}
# rules that find the same defect as another source (the crawl's images without alt, markup's rules): the
# issues list shows such a defect once, with its sources
DEFECTS = {
    "image-alt": "image-alt",
    "input-image-alt": "image-alt",
    "html-has-lang": "html-lang",
    "link-name": "link-name",
    "button-name": "button-name",
    "heading-order": "heading-order",
    "duplicate-id": "duplicate-id",
    "duplicate-id-aria": "duplicate-id",
    "duplicate-id-active": "duplicate-id",
    "page-has-heading-one": "h1-missing",
    "document-title": "title-missing",
}
# rules outside WCAG (axe's best practices) and experimental ones point at something to look at: warnings
WARNING_TAGS = frozenset({"best-practice", "experimental"})
# rule id -> {language: {title, description}}: messages/ja.json, refreshed by catalogue_gen from axe's locale
TRANSLATIONS = load_translations(Path(__file__).with_name("messages"))
SOURCES = ("archive", "live")
PLUGIN_VERSION = "1.0"
# The archived HTML is the DOM after the page's scripts ran: running them again on it would add their
# output twice. CSP blocks every page script; Playwright's evaluate (CDP) is not subject to CSP.
NO_SCRIPTS = "script-src 'none'"
LOAD_WAIT = 10.0  # seconds to wait for stylesheets and images after the document itself has loaded

RUN_AXE = """async ({locale, options}) => {
    if (locale) axe.configure({locale});
    const result = await axe.run(document, options);
    return result.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
        nodes: v.nodes.map(n => ({target: n.target, html: n.html, impact: n.impact})),
    }));
}"""


def _browser_host_class() -> type:
    """The crawler's Chromium owner (finder, NITPICKER_BROWSER_ARGS, crash relaunch, reaping)."""
    return nitpicker_core.BrowserHost


def _selector(target: Any) -> str:
    """axe's target: one selector per frame level, each a list itself inside shadow roots."""
    parts = target if isinstance(target, list) else [target]
    return " >>> ".join(" >>> ".join(p) if isinstance(p, list) else str(p) for p in parts)


class _Loop:
    """An asyncio loop on its own thread, so each_page works whether or not the caller runs a loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="axe-browser", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()  # the coroutine's own cleanup runs; the next page never overlaps this one
            raise TimeoutError(f"axe: no result within {timeout:g} s") from None

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        if not self.thread.is_alive():
            self.loop.close()


class AxeAnalyzer(Analyzer):
    name = "axe"
    label = "axe: accessibility (axe-core in Chromium)"
    columns = tuple(Column(impact, impact.capitalize()) for impact in IMPACTS) + (Column("total", "Total"),)
    concurrency = 2  # each worker holds a Chromium (about 0.5 GB)
    timeout = 90.0  # the engine's bound per page; loading and axe each get the ``timeout`` setting
    order = 10
    # The rendered DOM: accessibility is what assistive technology meets after scripts ran, and this
    # snapshot is replayed with every script blocked (NO_SCRIPTS), so the server's HTML would lose what
    # they built. No `reads` setting for that reason.
    reads = "rendered"

    def __init__(self) -> None:
        # recorded with the results: a new axe-core changes findings without the site changing
        self.version = f"{PLUGIN_VERSION}+axe-core.{axe_version()}"
        self._loop: _Loop | None = None
        self._host: Any = None
        self._page: Any = None
        self._html, self._served = "", False

    def check(self, settings: Mapping[str, Any]) -> None:
        # Bad values fail the run once, up front, instead of once per page inside the workers.
        if (settings.get("source") or "archive") not in SOURCES:
            raise UsageError(f"axe: source must be one of {', '.join(SOURCES)}, not {settings['source']!r}")
        load_locale(settings.get("lang") or "", settings.get("locale_dir") or "")

    def rules(self) -> list[Rule]:
        """axe-core's rules from catalogue.py, each at its usual impact (axe's impact is per violation)."""
        return [
            Rule(
                rule_id,
                meta["help"],
                PRIORITY[meta["impact"]],
                meta["description"],
                meta["help_url"],
                DEFECTS.get(rule_id, ""),
                type="warning" if WARNING_TAGS & set(meta["tags"]) else "issue",
                i18n=TRANSLATIONS.get(rule_id, {}),
            )
            for rule_id, meta in RULES.items()
        ]

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.source = settings.get("source") or "archive"
        self.locale = load_locale(settings.get("lang") or "", settings.get("locale_dir") or "")
        self.load_timeout = float(settings.get("timeout") or 30)
        tags = list(settings.get("tags") or [])
        self.options: dict[str, Any] = {"resultTypes": ["violations"]}
        if tags:
            self.options["runOnly"] = {"type": "tag", "values": tags}
        self._loop = _Loop()
        self._host = _browser_host_class()()
        try:
            self._loop.run(self._host.start(), self.load_timeout * 2)
        except BaseException:
            self.teardown()
            raise

    def teardown(self) -> None:
        if self._loop is None:
            return
        self._page = None
        if self._host is not None:
            try:
                self._loop.run(self._host.close(), 30)
            except Exception:  # close() reaps the browser by its marker; nothing more to do here
                pass
            self._host = None
        self._loop.stop()
        self._loop = None

    def each_page(self, page: PageInput) -> PageReport:
        if self._loop is None:
            raise RuntimeError("axe: setup() was not called in this worker")
        found = self._loop.run(self._audit(page.url, page.html), self.load_timeout * 2 + 10)
        return self._report(page.url, found)

    async def _audit(self, url: str, html: str) -> list[dict[str, Any]]:
        # imported here: Playwright costs every CLI start ~0.1 s, and only an audit needs it
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        page = await self._ready_page()
        self._html, self._served = html, False
        try:
            await page.goto(url, wait_until="domcontentloaded")
            try:
                await page.wait_for_load_state("load", timeout=min(LOAD_WAIT, self.load_timeout) * 1000)
            except PlaywrightTimeout:
                pass  # a stylesheet or image of a site that is down must not cost the page its audit
            await page.evaluate(axe_source())
            found = await page.evaluate(RUN_AXE, {"locale": self.locale, "options": self.options})
            # a blank page in between: the next URL is always a full navigation, never a same-document one
            await page.goto("about:blank")
            return found
        except BaseException:
            self._page = None  # whatever state it is in, the next page gets a fresh one
            await self._host.close_page(page)
            raise

    async def _ready_page(self) -> Any:
        """One page per worker, reused (a fresh context per page costs about a third more time)."""
        if self._page is None or self._page.is_closed():
            self._page = await self._host.new_page()
            self._page.set_default_timeout(self.load_timeout * 1000)
            if self.source == "archive":
                await self._page.route("**/*", self._serve_archived)
        return self._page

    async def _serve_archived(self, route: Any) -> None:
        """The first top-level navigation gets the archived HTML, later ones are blocked (a meta refresh
        must not leave the snapshot); stylesheets, images and fonts still come from the site."""
        request = route.request
        if request.is_navigation_request() and request.frame == self._page.main_frame:
            if self._served:
                await route.abort()
                return
            self._served = True
            await route.fulfill(
                status=200,
                body=self._html,
                headers={"content-type": "text/html; charset=utf-8", "content-security-policy": NO_SCRIPTS},
            )
            return
        await route.continue_()

    def _report(self, url: str, found: list[dict[str, Any]]) -> PageReport:
        violations: list[Violation] = []
        for rule in found:
            for node in rule["nodes"]:
                violations.append(
                    Violation(
                        rule=rule["id"],
                        message=rule["help"],
                        severity=node.get("impact") or rule["impact"] or "minor",
                        location=_selector(node["target"]),
                        url=url,
                        snippet=node.get("html") or "",
                        help_url=rule.get("helpUrl") or "",
                    )
                )
        counts = Counter(v.severity for v in violations)
        cells: dict[str, Any] = {}
        for impact in IMPACTS:
            rules = Counter(v.rule for v in violations if v.severity == impact)
            note = ", ".join(f"{rule} ×{n}" if n > 1 else rule for rule, n in sorted(rules.items()))
            cells[impact] = Cell(counts[impact], note) if note else counts[impact]
        cells["total"] = len(violations)
        return PageReport(cells, violations)
