"""The report's screenshots section: thumbnails of the pages with the most severe findings.

Only when the crawl took screenshots (``crawl --screenshots``): the pages come from `issue-urls` of the
checks with findings, most severe first; each page's thumbnail (`page-detail`'s ``screenshot``, read with
the `screenshot` query) is embedded as a data URI with its URL and its findings' count as the caption.
Without screenshots the section renders nothing and is left out. Reads are bounded, so a large archive
costs a few query calls, not one per page.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from nitpicker_core import PRIORITIES, ReportSection, UsageError

from .messages import text
from .sections import badge, found, issue_params, titles

if TYPE_CHECKING:
    from nitpicker_core import ReportContext

SHOTS = 6  # thumbnails shown
PER_CHECK = 500  # findings of one check read to rank the pages
BUDGET = 5000  # findings read in all
TRIES = 40  # pages looked at for a screenshot before giving up


def took_screenshots(report: ReportContext) -> bool:
    """Whether the crawl was run with ``--screenshots`` (the archive's crawl options say so)."""
    info = report.query("info")
    options = info.get("options") or info.get("crawl_options") or {}
    return bool(options.get("screenshots"))


def ranked_pages(report: ReportContext, lang: str) -> list[tuple[str, str, int]]:
    """(url, worst priority, findings read on it): pages by their worst finding's priority, then by count."""
    worst: dict[str, int] = {}
    counts: dict[str, int] = {}
    read = 0
    for row in found(report, lang):
        if read >= BUDGET:
            break
        params: dict[str, Any] = {"check": row["id"], "limit": min(PER_CHECK, BUDGET - read), "lines": False}
        params.update({k: v for k, v in issue_params(report, lang).items() if k == "base"})
        try:
            items = report.run("issue-urls", **params)["items"]
        except UsageError:
            continue
        level = PRIORITIES.index(row["priority"]) if row["priority"] in PRIORITIES else len(PRIORITIES)
        for item in items:
            url = str(item.get("url") or "")
            if not url:
                continue
            worst[url] = min(worst.get(url, level), level)
            counts[url] = counts.get(url, 0) + 1
        read += len(items)
    order = sorted(worst, key=lambda u: (worst[u], -counts[u], u))
    return [(u, PRIORITIES[worst[u]] if worst[u] < len(PRIORITIES) else "info", counts[u]) for u in order]


def thumbnail(report: ReportContext, url: str) -> dict[str, Any] | None:
    """The thumbnail of ``url`` on the report's commit (``media_type``, ``width``, ``height``, base64 ``data``)."""
    try:
        detail = report.run("page-detail", url=url, inbound_limit=1, resource_limit=1)
    except UsageError:
        return None
    shot = detail.get("screenshot")
    if not shot:
        return None
    small = shot.get("thumbnail") or shot
    image: dict[str, Any] = report.run("screenshot", sha256=small["sha256"])
    return image


def render_screenshots(report: ReportContext, lang: str) -> str | None:
    if not took_screenshots(report):
        return None
    figures = []
    for url, priority, count in ranked_pages(report, lang)[:TRIES]:
        image = thumbnail(report, url)
        if image is None:
            continue
        source = f"data:{image['media_type']};base64,{image['data']}"
        alt = text(lang, "shot_alt", url=url)
        caption = text(lang, "shot_findings", count=count)
        figures.append(
            f'<figure class="shot"><img src="{escape(source)}" width="{int(image["width"])}" '
            f'height="{int(image["height"])}" alt="{escape(alt)}">'
            f'<figcaption><a href="{escape(url)}">{escape(url)}</a><br>{badge(lang, priority)} '
            f"{escape(caption)}</figcaption></figure>"
        )
        if len(figures) == SHOTS:
            break
    if not figures:
        return None
    intro = f"<p>{escape(text(lang, 'shots_intro'))}</p>"
    return intro + f'<div class="shots">{"".join(figures)}</div>'


SECTION = ReportSection(
    "screenshots",
    text("en", "screenshots"),
    render_screenshots,
    order=60,
    titles=titles("screenshots"),
)
