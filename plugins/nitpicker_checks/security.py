"""Security and image checks: missing response headers (one check per header), mixed content, images."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from nitpicker_core import Check, CheckContext, Finding, join_url, read

from .common import content_pages, headers, memo, unique

HEADERS_HELP = "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/"
# A scheme then "//" at the very start (as urlsplit reads a scheme): such a src resolves to itself, whatever
# page it is on (join_url keeps a reference with a scheme and an authority as it is).
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _frames_denied(row: dict[str, Any]) -> bool:
    # CSP frame-ancestors supersedes X-Frame-Options in every current browser.
    return "frame-ancestors" in headers(row).get("content-security-policy", "").lower()


# The response headers the header checks ask for, with whether browsers heed them over plain HTTP and what
# else stands for them (HSTS is ignored on http:, CSP frame-ancestors supersedes X-Frame-Options).
_HEADER_RULES: dict[str, tuple[bool, Callable[[dict[str, Any]], bool] | None]] = {}


def _without(ctx: CheckContext) -> dict[str, list[str]]:
    """For each header of ``_HEADER_RULES``, the content pages answered without it: one pass for all of them."""

    def load() -> dict[str, list[str]]:
        found: dict[str, list[str]] = {name: [] for name in _HEADER_RULES}
        rules = list(_HEADER_RULES.items())
        for row in content_pages(ctx):
            url, sent = row["url"], headers(row)
            https = url.startswith("https://")
            for name, (https_only, satisfied) in rules:
                if https_only and not https:
                    continue  # browsers ignore HSTS sent over plain HTTP
                if not sent.get(name, "").strip() and not (satisfied and satisfied(row)):
                    found[name].append(url)
        return found

    return memo(ctx, "pages_without_headers", load)


def _missing(
    name: str, *, https_only: bool = False, satisfied: Callable[[dict[str, Any]], bool] | None = None
) -> Callable[[CheckContext], Iterator[Finding]]:
    label = "-".join(part.capitalize() for part in name.split("-"))
    _HEADER_RULES[name] = (https_only, satisfied)

    def find(ctx: CheckContext) -> Iterator[Finding]:
        for url in _without(ctx).get(name, ()):
            yield Finding(url, label)

    return find


def mixed_content(ctx: CheckContext) -> Iterator[Finding]:
    pages = {row["url"] for row in content_pages(ctx) if row["url"].startswith("https://")}
    if not pages:
        return  # no page of the commit is served over HTTPS: nothing to read
    for loaded in read.page_resource_rows(ctx.reader, ctx.commit, prefix="http://"):
        if loaded.url in pages and loaded.resource.startswith("http://"):
            yield Finding(loaded.url, loaded.resource)


def _image_rows(ctx: CheckContext) -> list[read.ImageRow]:
    # Every image of the commit read once for the three image checks, in one pass: paging through the
    # images list skipped over every earlier page again for each page of 10,000.
    return memo(ctx, "images", lambda: list(read.image_rows(ctx.reader, ctx.commit)))


def _images(flag: str) -> Callable[[CheckContext], Iterator[Finding]]:
    def find(ctx: CheckContext) -> Iterator[Finding]:
        joined: dict[str | tuple[str, str], str] = memo(ctx, "image_srcs", dict)
        for row in _image_rows(ctx):
            if not (row.alt is None if flag == "missing_alt" else getattr(row, flag)):
                continue
            # the src as written, resolved: the same image at every device preset, whatever srcset picked
            if not row.src:
                yield Finding(row.page, row.current_src)
                continue
            # the same image at each device preset, or on every page by its absolute URL: resolved once
            key = row.src if _ABSOLUTE.match(row.src) else (row.page, row.src)
            if key not in joined:
                joined[key] = join_url(row.page, row.src)
            yield Finding(row.page, joined[key])

    return find


def _header_check(name: str, priority: str, order: int, why: str, value: str, **options: Any) -> Check:
    label = "-".join(part.capitalize() for part in name.split("-"))
    finder = _missing(name, **options)  # registers the header for the one pass of all header checks
    return Check(
        f"missing-{name}",
        f"Pages without {label}",
        "security",
        priority,
        f"HTML pages (2xx) answered without the {label} header: {why}",
        f"Send {label}: {value} from the server or CDN for every page.",
        HEADERS_HELP + label,
        lambda ctx: unique(finder(ctx)),
        order=order,
        type="warning",
    )


CHECKS = [
    _header_check(
        "content-security-policy",
        "medium",
        80,
        "nothing limits where scripts may come from, so an injected script runs.",
        "a policy listing the script, style and frame sources the site uses",
    ),
    _header_check(
        "x-frame-options",
        "medium",
        81,
        "other sites may frame the page (clickjacking). CSP frame-ancestors counts as well.",
        "DENY or SAMEORIGIN (or CSP frame-ancestors)",
        satisfied=_frames_denied,
    ),
    _header_check(
        "x-content-type-options",
        "low",
        82,
        "browsers may sniff a response into a different content type.",
        "nosniff",
    ),
    _header_check(
        "strict-transport-security",
        "medium",
        83,
        "a first visit over plain HTTP can be intercepted (HTTPS pages only).",
        "max-age=31536000; includeSubDomains",
        https_only=True,
    ),
    _header_check(
        "referrer-policy",
        "low",
        84,
        "full URLs, query strings included, leak to other sites in the Referer header.",
        "strict-origin-when-cross-origin (or stricter)",
    ),
    _header_check(
        "permissions-policy",
        "low",
        84,
        "nothing stops an embedded frame or an injected script from asking for the camera, the "
        "microphone or the location.",
        "camera=(), microphone=(), geolocation=() (the features the site does not use)",
    ),
    Check(
        "mixed-content",
        "HTTPS pages loading HTTP resources",
        "security",
        "high",
        "HTTPS pages that loaded sub-resources over plain HTTP (the detail is the resource): browsers block "
        "them or mark the page not secure.",
        "Load every resource over HTTPS.",
        "https://developer.mozilla.org/en-US/docs/Web/Security/Mixed_content",
        lambda ctx: unique(mixed_content(ctx)),
        order=85,
        type="issue",
    ),
    Check(
        "image-alt-missing",
        "Images without alt text",
        "accessibility",
        "high",
        "Images without an alt attribute (the detail is the image): screen readers read the file name. "
        'alt="" marks a decorative image and is not reported.',
        'Add alt text saying what the image shows, or alt="" if it is decoration.',
        "https://www.w3.org/WAI/tutorials/images/",
        lambda ctx: unique(_images("missing_alt")(ctx)),
        defect="image-alt",
        order=71,
        type="issue",
    ),
    Check(
        "image-size-missing",
        "Images without width and height",
        "performance",
        "low",
        "Images without width/height attributes: the page jumps when they load (layout shift).",
        "Give each <img> width and height attributes (CSS may still scale it).",
        "https://web.dev/articles/optimize-cls",
        lambda ctx: unique(_images("missing_size")(ctx)),
        order=86,
        type="opportunity",
    ),
    Check(
        "image-oversized",
        "Oversized images",
        "performance",
        "medium",
        "Images whose file is over twice the size they are shown at, or over the crawl's file size threshold: "
        "bytes downloaded for nothing.",
        "Serve images at the size they are shown (srcset/sizes for several screens), compressed.",
        "https://web.dev/articles/serve-responsive-images",
        lambda ctx: unique(_images("oversized")(ctx)),
        order=87,
        type="opportunity",
    ),
]
