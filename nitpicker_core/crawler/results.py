"""How a crawl's outcomes become records: rendered pages and the links they lead to, light checks, failures."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import TYPE_CHECKING, Any

from nitpicker_core.content_types import HTML_TYPES as PAGE_TYPES
from nitpicker_core.crawler.errors import PERMANENT_KINDS, classify, is_blocked_status
from nitpicker_core.crawler.fetch import FetchResult
from nitpicker_core.crawler.queue import QueueItem, normalized
from nitpicker_core.crawler.start_links import StartLinks
from nitpicker_core.crawler.stopping import PageAbandoned
from nitpicker_core.records import Anchor, CrawlErrorRecord, PageError, Resource, ScrapeResult
from nitpicker_core.urls import normalize

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager
    from nitpicker_core.records import CrawlContext

HTML_TYPES = (None, *sorted(PAGE_TYPES, key=len))  # None: the server said nothing, and a browser sniffs
BODYLESS_STATUSES = frozenset({204, 205, 304})
# Chromium's words for "the server answered, and I will not show it" (a 204, a download, a challenge
# without credentials…), as opposed to network failures, which classify() gives a kind of their own
_DECLINED_RE = re.compile(r"net::ERR_[A-Z0-9_]+|Download is starting")


# ``extra`` keys saying how a rendered URL reached its page: the redirect's facts, not the destination's
REACHED_BY = ("redirect_status", "client_redirect")


def unrenderable(pre: FetchResult, has_credentials: bool) -> str | None:
    """Why Chromium would not show the answer the preflight got (None when it would).

    Such a URL is recorded from the preflight without the browser: the status is a fact the server sent,
    and a browser that aborts, downloads or gives up on the challenge would only turn it into a net error.
    A challenge *with* credentials still goes to the browser, which speaks Digest and NTLM where the
    preflight speaks Basic only.
    """
    if pre.status in BODYLESS_STATUSES:
        return f"a {pre.status} answer has no body to render"
    if pre.headers.get("content-disposition", "").strip().lower().startswith("attachment"):
        return "sent as an attachment, which a browser downloads"
    if pre.status == 401 and "www-authenticate" in pre.headers and not has_credentials:
        return "an authentication challenge, and no credentials for this URL"
    return None


def not_a_page(result: ScrapeResult) -> ScrapeResult:
    """The record of a body that is no text sent as HTML (``binary_body``): the answer, and why nothing of it is
    read. What a browser or parser made of the bytes (a DOM of noise, links, findings by the thousand) is not
    kept; only how the page was reached stays."""
    return ScrapeResult(
        url=result.url,
        status=result.status,
        status_text=result.status_text,
        content_type=result.content_type,
        content_length=result.content_length,
        headers=dict(result.headers),
        redirect_chain=list(result.redirect_chain),
        is_external=result.is_external,
        metadata={"title": ""},
        extra={
            **{k: result.extra[k] for k in REACHED_BY if k in result.extra},
            "unrendered": f"a binary body served as {result.content_type}: not read as a page",
        },
        anchors=[],
        headings=[],
        images=[],
        response_ms=result.response_ms,
        load_ms=result.load_ms,
        http_version=result.http_version,
    )


def mark_blocked(result: ScrapeResult) -> None:
    """``extra.blocked`` on an answer meaning "a bot wall or auth stopped us" (401, 403, 429, challenges)."""
    if is_blocked_status(result.status, result.headers, (result.html or "")[:65536]):
        result.extra["blocked"] = True


def declined_by_browser(pre: FetchResult, message: str) -> bool:
    """True when navigation failed on an answer the preflight did get, rather than on the network."""
    return (
        pre.ok
        and pre.status is not None
        and classify(message) == "unknown"
        and bool(_DECLINED_RE.search(message))
    )


class ResultsMixin:
    """The part of the Crawler that records what each URL turned out to be (see engine.Crawler)."""

    # set by Crawler.__init__ / run()
    pm: NitpickerPluginManager
    options: Any
    queue: Any
    scope: Any
    sink: Any
    stats: Any
    fetcher: Any
    predictor: Any
    crawl: CrawlContext
    _claimed: dict[str, str]
    _captured: dict[str, Resource]
    _linked: set[str]
    # guessed pages read in full that no page links to yet: stored (and their links followed) once one does
    _held: dict[str, tuple[QueueItem, ScrapeResult, FetchResult, bool]]
    _outside_depth: dict[str, int]
    _where: dict[str, tuple[bool, bool]]
    _stopping: bool
    _seeds: set[str]
    _start_links_seen: StartLinks | None = None

    @property
    def _start_links(self) -> StartLinks:
        if self._start_links_seen is None:
            self._start_links_seen = StartLinks()
        return self._start_links_seen

    def _store_rendered(
        self, item: QueueItem, result: ScrapeResult, pre: FetchResult, *, rendered: bool = True
    ) -> bool:
        """Store a page read in full (rendered, or with ``rendered=False`` parsed from the HTML as sent).

        A guess no page links to is held back instead: a pagination guess is no page of the site until the site
        links to it (a calendar answering any month number answers the guesser's 2024/13 too), so it is
        stored, and its links followed, only when a page links to it — never, if none does.
        """
        url = item.url
        if self._is_guess(item):
            self._held[url] = (item, result, pre, rendered)
            return rendered
        final = normalized(result.redirect_chain[-1]) if result.redirect_chain else url
        for resource in result.received:
            self.sink.emit("crawl_resource_received", resource=resource, referrer_url=final)
            if resource.status and 200 <= resource.status < 300 and resource.content_type not in HTML_TYPES:
                # the site's stylesheets and scripts come back on every page: normalized once each
                self._captured.setdefault(normalized(resource.url), resource)
        if final != url:
            # the source keeps only the edge; the destination is rendered once, by whoever reached it first
            status = (
                pre.redirect_status if pre.ok and pre.redirect_chain else result.extra.get("redirect_status")
            )
            self._record(
                ScrapeResult(
                    url=url,
                    status=status,
                    redirect_chain=list(result.redirect_chain),
                    is_external=item.external,
                    is_target=False,
                    # a move by script or meta refresh is this URL's, as the chain is
                    extra={k: True for k in ("client_redirect",) if result.extra.get(k)},
                    anchors=[],
                    images=[],
                )
            )
            self._record_hops(result.redirect_chain)
            if final in self._claimed:
                return False
            self.queue.add_done(final, rendered=rendered)
        self._claimed[final] = url
        # plugins judge the rendered page (the built-in --exclude-keyword is one): skipped, links not followed
        reason = self.pm.hook.crawl_page_filter(url=final, result=result, crawl=self.crawl)
        if reason:
            self._skipped(final, reason, self._placed(final))
            return True
        self._flag_large_images(result)
        destination = ScrapeResult(
            **{
                **result.__dict__,
                "url": final,
                "redirect_chain": [],
                "is_external": not self.scope.is_internal(final),
                "is_target": True,
                "anchors": self._stored_anchors(result.anchors),
                # how the page was reached belongs to the redirect (recorded above), never to the page: the
                # destination's state is the same whichever way, and whether, a redirect led to it first
                "extra": {k: v for k, v in result.extra.items() if final == url or k not in REACHED_BY},
            }
        )
        mark_blocked(destination)
        self._record(destination)
        if rendered:
            self.stats.rendered += 1
        else:
            self.stats.parsed += 1
        self._follow(final, destination)
        return True

    def _flag_large_images(self, result: ScrapeResult) -> None:
        """--image-file-size-threshold: images whose response is larger are listed in the page's extra."""
        limit = self.options.image_file_size_threshold
        if not limit:
            return
        sizes = {normalize(r.url): r.content_length for r in result.received if r.content_length}
        large = {}
        for image in result.images or []:
            try:
                size = sizes.get(normalize(image.current_src or image.src))
            except ValueError:
                continue
            if size and size > limit:
                large[image.current_src or image.src] = size
        if large:
            result.extra["large_images"] = [{"src": src, "bytes": n} for src, n in sorted(large.items())]

    def _stored_anchors(self, anchors: list[Anchor] | None) -> list[Anchor] | None:
        """Anchors as stored: the same URL rules as the queue (no credentials, PHPSESSID, --disable-queries)."""
        if anchors is None:
            return None
        kept = []
        hrefs: dict[str, str] = {}  # a page names each URL many times (its navigation, its index)
        for anchor in anchors:
            href = hrefs.get(anchor.href)
            if href is None:
                try:
                    href = normalized(anchor.href, self.options.disable_queries)
                except ValueError:  # no request can go there (a bad port): the link is kept as written
                    href = anchor.href.strip()
                hrefs[anchor.href] = href
            # raw_href, line, col travel with it; most hrefs are normalized already (no copy then)
            kept.append(anchor if href == anchor.href else dataclasses.replace(anchor, href=href))
        return kept

    def _follow(self, page_url: str, result: ScrapeResult) -> None:
        """Queue what a rendered page links to: in-scope pages fully, everything else as a metadata check."""
        found = []
        parent_depth = self._outside_depth.get(page_url, 0)
        depth = self.queue.depth(page_url)  # links from a root (--max-depth)
        if depth is None:  # a redirect's destination, recorded on the way, sits at its source's depth
            depth = self.queue.depth(self._claimed.get(page_url, page_url)) or 0
        below = depth + 1
        # each link once: a second anchor to the same href makes the same item, which the queue and the
        # sets below take as they took the first (a docs page has 300 anchors, to 40 URLs)
        for href in dict.fromkeys(anchor.href for anchor in result.anchors or ()):
            try:
                target = normalized(href, self.options.disable_queries)
            except ValueError:  # queued as written, to be recorded as an invalid link and never fetched
                target = href.strip()
                if target.lower().startswith(("http://", "https://")):
                    found.append(QueueItem(target, external=True, metadata_only=True, referrer=page_url))
                continue
            if not target.startswith(("http://", "https://")):
                continue
            item = self._placed(target, referrer=page_url, depth=below)
            if item.outside_scope and parent_depth < self.options.max_excluded_depth:
                # --max-excluded-depth: same-host pages outside the scope are crawled this many links deep
                self._outside_depth.setdefault(target, parent_depth + 1)
                item = dataclasses.replace(item, outside_scope=False, metadata_only=False)
            if item.in_scope and not self.options.recursive:
                item = dataclasses.replace(item, metadata_only=True)
            found.append(item)
        self._linked.update(item.url for item in found)
        if self.options.recursive and (page_url in self._seeds or self._claimed.get(page_url) in self._seeds):
            # what the start page leads to on its host: the summary explains a scope that left most of it out
            # (--single, --no-recursive and --list crawl no links at all, whatever the scope)
            self.stats.start_links = self._start_links.observe(
                page_url, [(item.url, item.in_scope) for item in found], self.scope
            )
        fresh = self.queue.add(found)
        for item in found:  # guesses this page links to are pages of the site now
            held = self._held.pop(item.url, None)
            if held is not None:
                self._store_rendered(*held[:3], rendered=held[3])
        if self.queue.guessed(page_url):
            return  # a page reached only by a guess: its links are followed, but never guessed from
        links = [item.url for item in fresh if item.in_scope]
        predictions = [
            QueueItem(
                normalize(guess.url),
                predicted=True,
                referrer=page_url,
                depth=below + guess.steps,  # as if each page linked the next
                metadata_only=not self.options.recursive,
            )
            for guess in self.predictor.observe_page(page_url, links)
        ]
        if predictions:
            self.queue.add(predictions)

    # -- the no-browser paths ----------------------------------------------------------------------------
    async def _light(self, item: QueueItem, pre: FetchResult, html_like: bool) -> ScrapeResult:
        """A metadata-only record: status, type, headers, redirects, and the title of HTML (from 16 KiB)."""
        title = ""
        if pre.ok and html_like and pre.method != "GET":
            inside = item.in_scope
            got = await asyncio.to_thread(
                self.fetcher.fetch,
                item.url,
                method="GET",
                auth=self.scope.credentials_for(item.url) if inside else None,
                headers=self.options.headers if inside else None,
            )
            title = got.title if got.ok else ""
        elif pre.ok:
            title = pre.title
        result = self._from_fetch(item, pre)
        result.metadata = {"title": title} if html_like else {}
        result.is_target = not item.external and not html_like
        if pre.ok and normalize(pre.final_url) != item.url:
            return self._redirect_only(item, pre, normalize(pre.final_url), keep=result)
        return result

    async def _answered(
        self, item: QueueItem, pre: FetchResult, html_like: bool, browser_said: str = ""
    ) -> ScrapeResult:
        """The preflight's answer as the record of a URL the browser did not render: status, type, headers.

        ``browser_said`` is the browser's refusal when it was tried and failed; it becomes a page error, so
        the record says both what the server sent and what a visitor's browser made of it.
        """
        title = pre.title
        if html_like and pre.method != "GET" and pre.status not in BODYLESS_STATUSES:
            inside = item.in_scope
            got = await asyncio.to_thread(
                self.fetcher.fetch,
                item.url,
                method="GET",
                auth=self.scope.credentials_for(item.url) if inside else None,
                headers=self.options.headers if inside else None,
            )
            title = got.title if got.ok else ""
        result = self._from_fetch(item, pre)
        result.metadata = {"title": title} if html_like else {}
        reason = unrenderable(pre, bool(self.scope.credentials_for(item.url)) and item.in_scope)
        if reason:
            result.extra["unrendered"] = reason
        if browser_said:
            result.errors.append(
                PageError(step="navigate", message=f"the browser did not show it: {browser_said}")
            )
        if normalize(pre.final_url) != item.url:
            return self._redirect_only(item, pre, normalize(pre.final_url), keep=result)
        return result

    def _refuse_invalid(self, item: QueueItem) -> bool:
        """Record a URL no request can go to (a port out of range…) as an ``invalid-url`` error; never fetch it."""
        try:
            normalized(item.url)  # the queue's URLs were normalized on the way in: most are remembered
        except ValueError as exc:
            self._error(item, "invalid-url", str(exc), "link")
            return True
        return False

    def _from_fetch(self, item: QueueItem, pre: FetchResult) -> ScrapeResult:
        if pre.status is not None and item.external and pre.status >= 400:
            self.stats.external_errors += 1
        return ScrapeResult(
            url=item.url,
            status=pre.status,
            status_text=pre.status_text,
            content_type=pre.content_type,
            content_length=pre.content_length,
            headers=dict(pre.headers),
            redirect_chain=list(pre.redirect_chain),
            is_external=item.external,
            is_target=not item.external,
            extra={"blocked": True} if is_blocked_status(pre.status, pre.headers) else {},
            response_ms=pre.response_ms,
            http_version=pre.http_version,
        )

    def _redirect_only(
        self, item: QueueItem, pre: FetchResult, final: str, keep: ScrapeResult | None = None
    ) -> ScrapeResult:
        """The source of a redirect keeps only the edge; the destination gets its own record, once.

        An in-scope destination is queued to be rendered rather than filled from this lighter result, so
        a metadata-only check (say, an external link that redirects back in) never stands in for a page.
        """
        if final not in self.queue:
            internal = self.scope.is_internal(final)
            if internal and self.options.recursive and not self.options.single:
                self.queue.add([QueueItem(final, referrer=item.url)])
            elif keep is not None:
                dest = ScrapeResult(
                    **{
                        **keep.__dict__,
                        "url": final,
                        "redirect_chain": [],
                        "is_external": not internal,
                        "is_target": internal and not keep.metadata.get("title"),
                    }
                )
                self.queue.add_done(final)
                self._record(dest)
        self._record_hops(pre.redirect_chain)
        return ScrapeResult(
            url=item.url,
            status=pre.redirect_status,
            redirect_chain=list(pre.redirect_chain),
            is_external=item.external,
            is_target=False,
            anchors=[],
            images=[],
        )

    def _record_hops(self, chain: list[str]) -> None:
        """Intermediate hops of a chain point at the final destination too (flattened), each recorded once."""
        for i, hop in enumerate(chain[:-1]):
            hop = normalize(hop)
            if hop not in self.queue:
                self.queue.add_done(hop)
                self._record(
                    ScrapeResult(
                        url=hop,
                        redirect_chain=list(chain[i + 1 :]),
                        is_target=False,
                        is_external=not self.scope.is_internal(hop),
                        anchors=[],
                        images=[],
                    )
                )

    def _from_resource(self, item: QueueItem, res: Resource) -> ScrapeResult:
        return ScrapeResult(
            url=item.url,
            status=res.status,
            status_text=res.status_text,
            content_type=res.content_type,
            content_length=res.content_length,
            headers=dict(res.headers),
            is_external=item.external,
            is_target=not item.external,
        )

    def _failed(self, item: QueueItem, pre: FetchResult) -> bool:
        if self._is_guess(item):
            self.queue.discard(item.url)
            return False
        self._error(item, pre.error_kind or "unknown", pre.error_message, "preflight")
        return False

    def _is_guess(self, item: QueueItem) -> bool:
        """A predicted URL that no page links to: if it fails, it is forgotten without trace."""
        return item.predicted and item.url not in self._linked

    def _error(
        self, item: QueueItem, kind: str, message: str, phase: str, decided: str | None = None
    ) -> None:
        """Record ``item``'s hard failure; ``decided``: --render auto's decision, stored with it."""
        if self._stopping:  # cut short by the stop (aborted fetch, closed page): pending, not failed
            raise PageAbandoned(item.url)
        if self._is_guess(item):
            self.queue.discard(item.url)
            return
        if item.external:
            self.stats.external_errors += 1
        else:
            self.stats.internal_errors += 1
        self.stats.errors_by_kind[kind] = self.stats.errors_by_kind.get(kind, 0) + 1
        record = CrawlErrorRecord(url=item.url, kind=kind, message=message, phase=phase)
        self.sink.emit("crawl_error", url=item.url, error=record)
        self._record(
            ScrapeResult(
                url=item.url,
                is_external=item.external,
                is_target=not item.external,
                extra={"error_kind": kind, "permanent": kind in PERMANENT_KINDS},
                render_decision=decided,
            )
        )

    def _placed(self, url: str, *, metadata_only: bool | None = None, **fields: Any) -> QueueItem:
        """A queue item for ``url`` where the scope puts it: in scope (crawled), on the crawl's own host but
        outside the scope (internal, checked only) or on another host (external, checked only)."""
        where = self._where.get(url)
        if where is None:  # a site's navigation links come back on every page
            if len(self._where) >= 100_000:  # bounded: a million-page crawl would keep every URL twice
                self._where.clear()
            internal = self.scope.is_internal(url)
            where = self._where[url] = (internal, not internal and self.scope.same_host(url))
        internal, outside = where
        return QueueItem(
            url,
            external=not internal and not outside,
            outside_scope=outside,
            metadata_only=not internal if metadata_only is None else metadata_only,
            **fields,
        )

    def _owned(self, result: ScrapeResult) -> ScrapeResult:
        """A record of the crawl's own host is internal, whatever the scope says; outside the scope it is only
        checked, so it is no target and says so (``extra.outside_scope``): never a page of the crawl.

        Pages ``--max-excluded-depth`` let the crawl render are crawled pages, without the mark.
        """
        url = result.url
        where = self._where.get(url)  # where _placed put it, most often: the scope asked once a URL
        internal, outside = where if where is not None else (self.scope.is_internal(url), None)
        if internal or not (outside if outside is not None else self.scope.same_host(url)):
            return result
        result.is_external = False
        if url not in self._outside_depth:
            result.is_target = False
            result.extra["outside_scope"] = True
        return result

    def _skipped(self, url: str, reason: str, item: QueueItem) -> None:
        """Record ``url`` as skipped (robots.txt, an exclusion, a page filter), outside the scope or not."""
        self.sink.emit(
            "crawl_page_skipped",
            url=url,
            reason=reason,
            is_external=item.external,
            **({"outside_scope": True} if item.outside_scope else {}),
        )
        self.stats.skipped += 1

    def _record(self, result: ScrapeResult) -> None:
        self.stats.pages += 1
        self.sink.emit("crawl_page_scraped", result=self._owned(result))

    def _credentials(self, url: str) -> dict[str, str] | None:
        creds = self.scope.credentials_for(url)
        return {"username": creds[0], "password": creds[1]} if creds else None
