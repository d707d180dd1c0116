"""The built-in Playwright scrape: render one URL and return everything learned as a ScrapeResult."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from nitpicker_core import (
    HTML_TYPES,
    IMAGE_PRESETS,
    SCRAPE_TIMEOUTS,
    CrawlContext,
    PageError,
    ScrapeResult,
    derive_html_facts,
    hookimpl,
)

from . import images, parse, source, tags
from .extract import EXTRACT_JS, anchors_from, headings_from, jsonld_from, metadata_from, parse_refresh
from .network import (
    chain_edges,
    clean_headers,
    content_length,
    guess_cdn,
    normalize_content_type,
    request_urls,
    strip_fragment,
    to_resource,
)
from .settle import InFlight, PageListener, dismiss_dialog, settle

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["crawl_parse", "crawl_scrape", "scrape"]

T = TypeVar("T")
D = TypeVar("D")  # what a wait that came to nothing gives instead (often None)
MAX_CLIENT_REDIRECTS = 5
MAX_REFRESH_DELAY = 5.0  # a longer meta refresh is a "reload later" page, not a redirect
MAX_CONSOLE_ERRORS = 50
EXTRACT_PATIENCE = 6  # the last extract attempt may take this many times the DOM bound
# The DOM serialized as page.content() does it, but in the page's own world: content() and title() run in an
# isolated world Playwright injects on first use after every navigation, 100-400 ms a page (measured)
_DOM_JS = """const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
  const html = doctype + (document.documentElement ? document.documentElement.outerHTML : "");"""
# One round trip for all the page tells: the extract, the framework probe, the DOM and the favicons it names.
# The images of the DOM as read are marked (images.READ_MARK), so the images recorded are that DOM's: one a
# timer adds while the page is being read is in neither its HTML nor its images
READ_JS = f"""() => {{
  const extract = ({EXTRACT_JS.strip()});
  const probe = ({tags.PROBE_JS});
  {_DOM_JS}
  try {{
    Object.defineProperty(window, {images.READ_MARK}, {{value: new WeakSet(document.images), configurable: true}});
  }} catch {{}}  // a page that locked its window: its images are all of them then
  const icons = [...document.querySelectorAll('link[rel~="icon" i][href]')].map((el) => el.href);
  return {{...extract(), probe: probe(), html, icons}};
}}"""
LIGHT_JS = f"""() => {{
  {_DOM_JS}
  return {{html, title: document.title}};
}}"""
_HTTP = re.compile(r"https?:", re.IGNORECASE)
#: ``ScrapeResult.extra`` key of the seconds each scrape phase took; the crawler takes it out before storing
PHASES_KEY = "phase_seconds"


async def _bounded(awaitable: Awaitable[T], seconds: float, default: D) -> T | D:
    """The awaitable's result, or ``default`` when it overruns or fails (a wait must never fail the page)."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except Exception:  # noqa: BLE001 - timeouts and closed targets alike mean "go on without it"
        return default


class _Recorder(PageListener):
    """Listens to one page: sub-resource requests and responses, main-frame documents, console errors, dialogs.

    What the page asks for after it was read (``mark_read``) is its own only when it is one of that DOM's
    images (``kept``): a lazy image the scroll loads, the file a device preset picks. A request a timer makes
    later, and the favicon Chromium fetches on its own, come or not depending on how long the images took.
    """

    def __init__(self, page: Page) -> None:
        super().__init__(
            page,
            {
                "request": self._on_request,
                "response": self._on_response,
                "console": self._on_console,
                "pageerror": self._on_pageerror,
                "dialog": self._on_dialog,
            },
        )
        self.resources: dict[str, Any] = {}
        self.documents: list[Any] = []
        self.errors: list[PageError] = []
        self._about: list[str] = []  # the URL each error is about ("" for none), one for one with ``errors``
        self._asked: set[str] = set()  # sub-resource URLs asked for before the page was read
        self._read = False
        self.late: set[str] = set()  # … and those first asked for after it
        self._kinds: dict[str, set[str]] = {}  # URL → the resource types it was asked as
        self._hops: dict[str, str] = {}  # a redirect's next URL → the URL that redirected there

    def _on_request(self, request: Any) -> None:
        url = request.url
        if url.startswith("data:") or (
            request.is_navigation_request() and request.frame is self.page.main_frame
        ):
            return
        key = strip_fragment(url)
        self._kinds.setdefault(key, set()).add(request.resource_type)
        if request.redirected_from is not None:  # a hop of a redirect: asked for because its first URL was
            self._hops.setdefault(key, strip_fragment(request.redirected_from.url))
        if not self._read:
            self._asked.add(key)
        elif key not in self._asked:
            self.late.add(key)

    def _on_response(self, response: Any) -> None:
        url = response.url
        if url.startswith("data:"):
            return
        request = response.request
        if request.is_navigation_request() and response.frame is self.page.main_frame:
            self.documents.append(response)  # the page itself, its redirect hops and client redirects
            return
        key = strip_fragment(url)
        if key not in self.resources:
            self.resources[key] = to_resource(response)

    def mark_read(self) -> None:
        """The page was read: what it asks for from now on is late."""
        self._read = True

    def kept(self, shown: set[str], icons: set[str]) -> tuple[dict[str, Any], list[PageError]]:
        """The responses and errors of the page as read: late requests only for ``shown`` (the URLs its images
        showed at any preset), and none of Chromium's own fetches of the favicons ``icons``."""
        dropped = {url for url in self.late if self._origin(url) not in shown}
        dropped |= {url for url in icons if self._kinds.get(url, {"other"}) <= {"other"}}
        resources = {url: res for url, res in self.resources.items() if url not in dropped}
        errors = [
            error for error, about in zip(self.errors, self._about, strict=True) if about not in dropped
        ]
        return resources, errors

    def note(self, error: PageError, about: str = "") -> None:
        """An error of the page; ``about``: the URL it is about, when it is one of its requests'."""
        self.errors.append(error)
        self._about.append(about)

    def _origin(self, url: str) -> str:
        """The URL a request was first made for, before the redirects that led to ``url``."""
        seen = {url}
        while url in self._hops and self._hops[url] not in seen:
            url = self._hops[url]
            seen.add(url)
        return url

    def _error(self, message: str, about: str = "") -> None:
        if len(self.errors) < MAX_CONSOLE_ERRORS:
            self.note(PageError(step="console", message=message), about)

    def _on_console(self, message: Any) -> None:
        if message.type != "error":
            return
        about = strip_fragment(str((message.location or {}).get("url") or ""))
        # Chromium's own favicon probe is invisible to the page yet logs its 404: not the page's error
        if urlsplit(about).path == "/favicon.ico":
            return
        self._error(message.text, about)

    def _on_pageerror(self, error: Any) -> None:
        name = getattr(error, "name", "") or ""
        message = getattr(error, "message", "") or str(error)
        self._error(f"{name}: {message}" if name else message)

    def _on_dialog(self, dialog: Any) -> None:
        dismiss_dialog(dialog)


async def _fill_response(result: ScrapeResult, response: Any) -> None:
    """Status, headers and type of the final document response."""
    result.status = response.status
    result.status_text = response.status_text or ""
    headers = clean_headers(await _bounded(response.all_headers(), 5.0, response.headers))
    result.headers = headers
    result.content_type = normalize_content_type(headers.get("content-type"))
    result.content_length = content_length(headers)


async def _first_status(response: Any) -> int | None:
    """Status the original URL answered with (the first hop of an HTTP redirect chain)."""
    request = response.request
    while request.redirected_from is not None:
        request = request.redirected_from
    first = await _bounded(request.response(), 5.0, None)
    return first.status if first is not None else None


async def _follow_client_redirects(
    page: Page,
    url: str,
    recorder: _Recorder,
    in_flight: InFlight,
    response: Any,
    timeouts: dict[str, float],
    chain: list[str],
) -> tuple[Any, dict[str, Any]]:
    """Settle the page, following JS / meta-refresh redirects as edges; returns final response and extract."""
    dom, idle = timeouts["dom"], timeouts["idle"]
    extracted: dict[str, Any] = {}
    for _ in range(MAX_CLIENT_REDIRECTS + 1):
        await settle(page, in_flight, idle)
        reached = strip_fragment(response.url)
        if strip_fragment(page.url) != reached:
            # The page navigated by itself (script or an immediate meta refresh): record where it went
            await _bounded(page.wait_for_load_state("domcontentloaded", timeout=dom * 1000), dom + 1, None)
            landed = recorder.documents[-1] if recorder.documents else None
            if landed is None or landed is response:
                break
            chain += chain_edges(chain[-1] if chain else url, request_urls(landed))
            response = landed
            continue
        extracted = await _bounded(page.evaluate(READ_JS), dom, {})
        moved = not extracted and bool(recorder.documents) and recorder.documents[-1] is not response
        if moved or strip_fragment(page.url) != reached:
            # it navigated while being read (an immediate refresh; the read fails when the new document
            # commits, maybe before the page's URL says so): follow it
            continue
        refresh = parse_refresh(extracted.get("refresh"), page.url)
        if refresh is None or refresh[0] > MAX_REFRESH_DELAY or strip_fragment(refresh[1]) == reached:
            break
        # A short meta refresh the browser has not acted on yet: go there ourselves
        try:
            landed = await page.goto(
                refresh[1], wait_until="domcontentloaded", timeout=timeouts["navigation"] * 1000
            )
        except Exception as exc:  # noqa: BLE001 - the edge exists even when its target is broken
            chain += chain_edges(chain[-1] if chain else url, [strip_fragment(refresh[1])])
            recorder.note(PageError(step="refresh", message=str(exc).splitlines()[0] if str(exc) else ""))
            break
        if landed is None:
            break
        chain += chain_edges(chain[-1] if chain else url, request_urls(landed))
        response, extracted = landed, {}
    return response, extracted


class _Laps:
    """Seconds per scrape phase, one ``perf_counter`` per phase boundary (cheap enough for every page)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._mark = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - self._mark
        self._mark = now


async def scrape(url: str, page: Page, options: dict[str, Any], *, full: bool = True) -> ScrapeResult:
    """Render ``url`` in ``page``; ``full=False`` stops after the title (the light scrape of external pages).

    Navigation failures (DNS, refused, timeout before the DOM) raise Playwright's error for the crawler to
    classify; everything after the DOM is bounded and degrades into ``result.errors`` instead.
    """
    timeouts = {**SCRAPE_TIMEOUTS, **(options.get("timeouts") or {})}
    result = ScrapeResult(url=url)
    laps = _Laps()
    result.extra[PHASES_KEY] = laps.seconds
    with _Recorder(page) as recorder, InFlight(page) as in_flight:
        response = await page.goto(url, wait_until="domcontentloaded", timeout=timeouts["navigation"] * 1000)
        if response is None:  # same-document navigation: nothing new was loaded
            return result
        result.redirect_chain = chain_edges(url, request_urls(response))
        await _fill_response(result, response)
        if result.redirect_chain:
            result.extra["redirect_status"] = await _first_status(response)
        laps.lap("navigation")
        if result.content_type not in HTML_TYPES:
            return result  # not a page: status, type and length are all there is
        if not full:
            light: dict[str, Any] = await _bounded(page.evaluate(LIGHT_JS), timeouts["dom"], {})
            result.html, result.metadata = light.get("html"), {"title": light.get("title") or ""}
            laps.lap("extraction")
            return result
        # The body the server sent is complete by DOMContentLoaded: fetching it overlaps the settle
        over = result.content_length is not None and result.content_length > source.MAX_SOURCE_BYTES
        early_body = None if over else asyncio.ensure_future(response.body())
        try:
            final, extracted = await _follow_client_redirects(
                page, url, recorder, in_flight, response, timeouts, result.redirect_chain
            )
        except BaseException:
            _discard(early_body)
            raise
        if final is not response:
            _discard(early_body)
        laps.lap("settle")
        if final is not response:
            # The source answered (usually 200) and then moved on by itself
            result.extra.setdefault("redirect_status", result.status)
            await _fill_response(result, final)
            result.extra["client_redirect"] = True
        if not extracted:
            # A huge page (an index of tens of thousands of links) on a loaded machine can need far more than
            # the short settle bound; an empty extract would store the page with no title and no links, so
            # the last try gets a long bound of its own
            extracted = await _bounded(
                page.evaluate(READ_JS), max(timeouts["dom"] * EXTRACT_PATIENCE, 30.0), {}
            )
        if not extracted:
            result.errors.append(PageError(step="extract", message="the page did not answer in time"))
        recorder.mark_read()
        result.html = extracted.get("html") or await _bounded(page.content(), timeouts["dom"], None)
        _apply_extract(result, extracted)
        body = early_body if final is response and early_body is not None else final.body()
        await _keep_source(result, body, extracted.get("encoding"), timeouts["dom"])
        # what the canonical, nofollow, JavaScript-dependence and missing-title checks read out of the HTML,
        # found here once: checking a commit then reads no page's HTML again
        result.html_facts = derive_html_facts(
            result.url, result.html, result.source, metadata=result.metadata
        )
        result.tags = tags.detect(
            result.html or "", extracted.get("probe") or {}, result.headers, guess_cdn(result.headers)
        )
        laps.lap("extraction")
        if options.get("image", True):

            async def answered(stall: float) -> list[str]:
                # the lazy images the scroll started and the files a preset picked have answered: their
                # responses are recorded and their sizes known, however long a loaded machine took; one still
                # coming in after the stall (a file that never ends) is not waited for again
                await in_flight.none_of(images.IMAGE_KINDS, stall, time.monotonic() + timeouts["preset"])
                coming = {strip_fragment(request.url) for request in in_flight.pending}
                return [url for url in recorder.resources if url not in coming]

            found, errors = await images.capture(
                page,
                list(options.get("image_presets") or IMAGE_PRESETS),
                preset_timeout=timeouts["preset"],
                answered=answered,
            )
            result.images = found
            result.errors += errors
            laps.lap("images")
        shown = {strip_fragment(image.current_src) for image in result.images or () if image.current_src}
        icons = [strip_fragment(str(icon)) for icon in extracted.get("icons") or () if _HTTP.match(str(icon))]
        kept, errors = recorder.kept(shown, set(icons))
        result.received = list(kept.values())
        # the favicons the page names are its resources whether or not Chromium fetched them by now: the
        # crawler asks them itself (once per crawl), as it does a page read without a browser
        result.resources = list(dict.fromkeys([*kept, *icons]))
        result.errors = errors + result.errors
    return result


async def _keep_source(
    result: ScrapeResult, fetch: Awaitable[bytes], encoding: str | None, seconds: float
) -> None:
    """Keep the body of the final document response (the HTML the server sent) and place anchors in it."""
    limit = source.MAX_SOURCE_BYTES
    body: bytes | None
    if result.content_length is not None and result.content_length > limit:
        body = None
        reason = f"the server sent {result.content_length} bytes, over the {limit}-byte limit"
        _discard(fetch)
    else:
        body = await _bounded(fetch, seconds, None)
        reason = "the browser did not hand over the body" if body is None else ""
        if body is not None and len(body) > limit:
            reason = f"the server sent {len(body)} bytes, over the {limit}-byte limit"
            body = None
    if body is None:
        result.extra["source_omitted"] = reason  # said, never silent: analyzers fall back to the rendered DOM
        return
    result.source = source.decode(body, encoding)
    if result.anchors:
        source.place_anchors(result.source, result.anchors)


def _discard(awaitable: Awaitable[Any] | None) -> None:
    """Let go of a body fetch nobody will read: cancelled, its outcome retrieved (no "never retrieved" noise)."""
    if isinstance(awaitable, asyncio.Future):
        awaitable.cancel()
        awaitable.add_done_callback(lambda t: t.cancelled() or t.exception())
    elif asyncio.iscoroutine(awaitable):
        awaitable.close()


def _ms(value: Any) -> int | None:
    return round(value) if isinstance(value, int | float) and value >= 0 else None


def _apply_extract(result: ScrapeResult, extracted: dict[str, Any]) -> None:
    if not extracted:
        return
    result.metadata = metadata_from(extracted.get("metadata") or {})
    result.extra.update(extracted.get("extra") or {})
    if extracted.get("refresh"):
        result.extra["refresh"] = extracted["refresh"]
    if isinstance(extracted.get("words"), int):
        result.word_count = extracted["words"]
    timing = extracted.get("timing") or {}
    result.response_ms = _ms(timing.get("response_ms"))
    result.load_ms = _ms(timing.get("load_ms"))
    result.http_version = str(timing["protocol"]) if timing.get("protocol") else None
    result.anchors = anchors_from(extracted.get("anchors") or [])
    result.headings = headings_from(extracted.get("headings") or [])
    result.jsonld = jsonld_from(extracted.get("scripts") or [])


@hookimpl(trylast=True)
def crawl_scrape(url: str, page: Page, crawl: CrawlContext, render: str) -> Awaitable[ScrapeResult]:
    """The default scrape; ``render="light"`` (a metadata-only URL) stops after the title."""
    return scrape(url, page, crawl.options, full=render != "light")


@hookimpl(trylast=True)
def crawl_parse(result: ScrapeResult, body: bytes, crawl: CrawlContext) -> ScrapeResult:
    """The default reader of a page left unrendered: the lxml parse of the HTML as sent (parse.py)."""
    parsed, doc = parse.parse_document(
        result, body, crawl.options, template=crawl.options.get("render") == "auto"
    )
    # the canonical, nofollow and missing-title facts the checks read, as a rendered page's (no page's HTML
    # read again); one version only, so nothing JavaScript changed to compare, and the document parsed above
    # read again
    parsed.html_facts = derive_html_facts(
        parsed.url, parsed.html, parsed.source, rendered=False, doc=doc, metadata=parsed.metadata
    )
    return parsed
