"""Records the crawler produces and the archive stores: plain dataclasses, picklable, no live objects."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from itertools import starmap
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from nitpicker_core.urls import Scope

# The flattened metadata columns of a page, in the order they appear in tables and reports.
# URL-valued ones are made absolute by the crawler against <base href> and the page URL.
METADATA_FIELDS: tuple[str, ...] = (
    "title",
    "description",
    "keywords",
    "lang",
    "dir",
    "charset",
    "base_href",
    "viewport",
    "theme_color",
    "robots",
    "noindex",
    "nofollow",
    "noarchive",
    "noimageindex",
    "googlebot",
    "canonical",
    "amphtml",
    "manifest",
    "icon",
    "apple_touch_icon",
    "og_type",
    "og_title",
    "og_site_name",
    "og_description",
    "og_url",
    "og_image",
    "og_locale",
    "twitter_card",
    "twitter_site",
    "twitter_creator",
    "twitter_title",
    "twitter_description",
    "twitter_image",
    "author",
    "generator",
    "publisher",
    "google_site_verification",
    "msvalidate",
    "yandex_verification",
)
BOOLEAN_METADATA: frozenset[str] = frozenset({"noindex", "nofollow", "noarchive", "noimageindex"})


@dataclass
class Anchor:
    """One ``<a>``/``<area>`` on a page; duplicates are kept, in document order."""

    href: str
    text: str = ""
    fragment: str = ""
    # The href attribute exactly as written (relative, with its fragment); None when not known.
    raw_href: str | None = None
    # 1-based position of the start tag in the HTML the server sent; None for anchors made by script.
    line: int | None = None
    col: int | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # a page has hundreds, pickled twice on their way to the archive (page reader → crawler → writer
        # process): as the tuple of their fields, read back through __init__, they load in half the time of
        # the default's instance dict (0.50 → 0.25 ms a docs page)
        return (type(self), (self.href, self.text, self.fragment, self.raw_href, self.line, self.col))


# An anchor's fields in the order of Anchor's __init__, read in one C call (a page's anchors: ScrapeResult)
_ANCHOR_ROW = attrgetter("href", "text", "fragment", "raw_href", "line", "col")


@dataclass
class Heading:
    """One ``<h1>``–``<h6>`` of the rendered page, in document order."""

    level: int
    text: str = ""


@dataclass
class Image:
    """One ``<img>`` as seen with one device preset."""

    src: str
    current_src: str = ""
    alt: str | None = None
    width: float | None = None
    height: float | None = None
    natural_width: int | None = None
    natural_height: int | None = None
    is_lazy: bool = False
    viewport_width: int = 0
    markup: str = ""


@dataclass
class JsonLd:
    """One JSON-LD or speculation-rules script of a page."""

    raw: str
    kind: str = "jsonld"  # or "speculationrules"
    parsed: Any = None
    types: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class Tag:
    """A technology found on a page (GTM container, GA4 property, generator, framework, …)."""

    provider: str
    category: str = ""
    external_id: str = ""
    version: str = ""
    confidence: int = 100


@dataclass
class PageError:
    """A partial failure of one scrape step (a device preset, the image capture, …)."""

    step: str
    message: str


@dataclass
class Resource:
    """A sub-resource response seen on the network while a page rendered."""

    url: str
    status: int | None = None
    status_text: str = ""
    content_type: str | None = None
    content_length: int | None = None
    compression: str = ""
    cdn: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    is_external: bool = False


@dataclass
class Screenshot:
    """The rendered page as an image (``crawl --screenshots``): the top of the page at full size and a thumbnail.

    ``image`` and ``thumbnail`` are encoded image bytes of ``media_type`` (plain bytes: a result crosses
    process boundaries); ``width`` × ``height`` and ``thumb_width`` × ``thumb_height`` are their pixels.
    """

    image: bytes
    width: int
    height: int
    thumbnail: bytes
    thumb_width: int
    thumb_height: int
    media_type: str = "image/jpeg"


@dataclass
class ScrapeResult:
    """Everything the crawler learned about one URL (page or not, internal or external).

    ``redirect_chain`` follows the contract of DESIGN §3: empty without a redirect, otherwise the hops
    after ``url`` with the final destination last. ``html`` is the rendered DOM (None when not rendered);
    ``source`` is the HTML the server sent for the final document (None when not kept). ``headings`` and
    ``anchors`` are None when the page could not be read (a degraded scrape keeps the previous ones).
    """

    url: str
    status: int | None = None
    status_text: str = ""
    content_type: str | None = None
    content_length: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    redirect_chain: list[str] = field(default_factory=list)
    is_external: bool = False
    is_target: bool = True
    scraped: bool = True
    is_skipped: bool = False
    skip_reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    # A plugin's own per-page data, stored as JSON. The keys the core writes here (error_kind, blocked, ...:
    # archive.models.PROMOTED) are stored as page_state columns and read through nitpicker_core.read.
    extra: dict[str, Any] = field(default_factory=dict)
    html: str | None = None
    source: str | None = None
    anchors: list[Anchor] | None = None
    headings: list[Heading] | None = None
    images: list[Image] | None = None
    resources: list[str] = field(default_factory=list)
    jsonld: list[JsonLd] = field(default_factory=list)
    tags: list[Tag] = field(default_factory=list)
    errors: list[PageError] = field(default_factory=list)
    # Responses seen on the network while rendering; the crawler hands each to crawl_resource_received.
    received: list[Resource] = field(default_factory=list)
    # The rendered page as an image, when the crawl takes screenshots (None otherwise).
    screenshot: Screenshot | None = None
    # Words of the page's visible text (a browser's word segmentation in the page's language), None when
    # not rendered. Derived from the page, so it is stored with the page's state (not part of its hash).
    word_count: int | None = None
    # What the canonical and nofollow checks read out of the HTML (``nitpicker_core.html_facts.derive``),
    # found where the page is scraped; None leaves the checks to read the stored HTML. Outside the hash.
    html_facts: str | None = None
    # How this crawl's request went, stored with the commit (not the page's state: it varies crawl to crawl):
    # milliseconds from the request to the first byte of the response (redirects included), from the
    # request to the load event for a rendered page, and the protocol ("http/1.1", "h2", "h3").
    response_ms: int | None = None
    load_ms: int | None = None
    http_version: str | None = None
    # ``--render auto``'s decision for the page in this crawl (JSON text: nitpicker_core.crawler.auto), stored
    # with the commit (commit_page.render_decision): another crawl reaching the same state decides anew.
    render_decision: str | None = None
    # The page's template signature (``nitpicker_core.template_key_of``) when the reader of its HTML as sent
    # computed it from the tree it parsed (a ``crawl_parse`` of a ``--render auto`` crawl): auto then parses
    # no page a second time to group it. Not stored (the decision names the template).
    template: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        # the anchors as one tuple of their rows, made without a Python call per anchor (their __reduce__ is
        # one): a docs page's result pickles in 0.24 ms instead of 0.38, on each of its two trips to the
        # archive (page reader → crawler → writer process)
        state = self.__dict__.copy()
        if self.anchors:
            state["anchors"] = tuple(map(_ANCHOR_ROW, self.anchors))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        anchors = state.get("anchors")
        if isinstance(anchors, tuple):
            state["anchors"] = list(starmap(Anchor, anchors))
        self.__dict__.update(state)


@dataclass
class CrawlErrorRecord:
    """A hard failure on one URL, with the classified error kind."""

    url: str
    kind: str
    message: str
    phase: str = ""


@dataclass
class CrawlContext:
    """The state of one crawl that every scrape hook receives as ``crawl``.

    The crawler fills every field: ``output``, ``roots`` and ``options`` before ``crawl_open_archive``,
    and ``commit`` (the commit the archive sink opened) before ``crawl_started``. The sink itself stays
    with the crawler: plugins observe pages through the ``crawl_*`` hooks, never by writing to it.
    ``environment`` holds facts about the run the archive writer records with the commit. ``state`` is
    free space for plugins, keyed by plugin name; the core never reads or writes it.
    ``mode`` says how this crawl relates to the archive's history: ``new`` (a new commit), ``update``
    (a new commit re-crawling the same scope), ``resume`` (finish the interrupted commit), ``append``,
    ``inventory`` and ``retry-failed`` (continue the newest commit).
    """

    output: Path
    roots: list[str]
    options: dict[str, Any] = field(default_factory=dict)
    kind: str = "crawl"
    mode: str = "new"
    commit: int | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def resume(self) -> bool:
        return self.mode == "resume"

    def is_external(self, url: str) -> bool:
        """Whether ``url`` lies outside the scope the crawl's roots and ``--scope`` values draw (``options["scope"]``).

        What the archive writer marks a link target with until the crawler's own record of it comes: a target the
        crawl does not fetch (``--no-fetch-external``) is then stored once, not once as a provisional internal
        URL and again as what it is. URLs a ``--list`` crawl adds to its scope read as outside here.
        """
        return not self._scope.is_internal(url)

    @functools.cached_property
    def _scope(self) -> Scope:
        return Scope(list(self.roots), list(self.options.get("scope") or ()))


class Finding(NamedTuple):
    """One occurrence of a check's defect: the page and what on it (normalised, so it survives a re-crawl).

    ``detail`` is the link target, the element, the value; never a generated id, nonce or line/column
    position, which would make an unchanged finding look new after a re-crawl.

    A named tuple: a commit of 100,000 pages makes about a million of them, and a tuple is made and hashed at
    C speed (a third less time than a frozen dataclass, measured).
    """

    url: str
    detail: str = ""
