"""One self-contained HTML document from the registered report sections: inline CSS, no external request."""

from __future__ import annotations

import datetime as dt
import logging
import re
from html import escape, unescape
from typing import TYPE_CHECKING

from nitpicker_core import __version__

from .branding import logo_uri
from .messages import text

if TYPE_CHECKING:
    from nitpicker_core import ReportContext

log = logging.getLogger(__name__)

CSS = """
:root { --accent: #1f4e79; --text: #1a1a1a; --muted: #4a4a4a; --rule: #c8c8c8; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", "Hiragino Sans", "Noto Sans CJK JP", "Noto Sans JP",
  sans-serif; color: var(--text); background: #fff; line-height: 1.5; }
body { margin: 0 auto; max-width: 60rem; padding: 1.5rem; }
header.report-header { border-bottom: 4px solid var(--accent); margin-bottom: 1.5rem; }
h1 { font-size: 2rem; margin: 0 0 .5rem; color: #1a1a1a; }
img.logo { max-height: 4rem; max-width: 16rem; display: block; margin-bottom: .5rem; }
h2 { font-size: 1.5rem; border-bottom: 2px solid var(--accent); padding-bottom: .2rem; margin-top: 2.5rem; }
h3 { font-size: 1.2rem; margin-top: 1.5rem; }
h4 { font-size: 1rem; margin: 1rem 0 .25rem; }
a { color: #0b4f8a; overflow-wrap: anywhere; }
code { font-size: .9em; background: #f2f2f2; padding: 0 .2em; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .92rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid var(--rule); padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #eef2f7; }
th[scope=row] { background: #f7f7f7; width: 14rem; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0 .45em; border-radius: .25em; color: #fff; font-size: .8rem;
  font-weight: 600; vertical-align: middle; }
.p-critical { background: #8b0000; } .p-high { background: #b23c00; } .p-medium { background: #7a5b00; }
.p-low { background: #245f8f; } .p-info { background: #4a4a4a; }
.note { border-left: 4px solid #b23c00; background: #fff4ec; padding: .5rem .75rem; }
.meta { color: var(--muted); }
nav.toc > ol { columns: 2; column-gap: 2rem; }
nav.toc ol ol { padding-left: 1.2rem; font-size: .9em; }
nav.toc .toc-entry { display: flex; gap: .5em; break-inside: avoid; }
nav.toc .toc-entry a { flex: 1; }
nav.toc .toc-page { min-width: 2.5em; text-align: right; font-variant-numeric: tabular-nums; }
svg.chart { max-width: 40rem; display: block; }
.shots { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: 1rem; }
figure.shot { margin: 0; font-size: .85rem; }
figure.shot img { width: 100%; height: auto; border: 1px solid var(--rule); display: block; }
article.issue { border-top: 1px solid var(--rule); padding-top: .5rem; }
footer.report-footer { margin-top: 3rem; border-top: 1px solid var(--rule); color: var(--muted); font-size: .85rem; }
@media print {
  body { max-width: none; padding: 0; }
  a { color: var(--text); text-decoration: none; }
  thead { display: table-header-group; }
  tr, img, svg, .badge, figure { break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; }
  section.report-section { break-before: page; }
  section#cover { break-before: auto; }
  nav.toc { break-after: page; }
}
"""


def render_document(
    report: ReportContext,
    lang: str,
    title: str | None = None,
    logo: str | None = None,
    accent: str | None = None,
    footer: str | None = None,
    paged: bool = False,
) -> str:
    """The whole report: header, table of contents, each section that renders (in order), footer.

    The contents list each section and, under it, each ``<h3 id>`` of its body. ``paged`` (the PDF): each
    entry of the contents gets an empty ``<span class="toc-page" data-section="ID">`` of a fixed width, which
    ``fill_toc_pages`` fills with the page its target starts on once a first print has said where that is.

    Branding: ``title`` replaces the default title, ``logo`` (an image file) is embedded as a data URI,
    ``accent`` (``#rrggbb``) colours the header's and headings' rules, ``footer`` is a line at the foot.
    """
    title = title or text(lang, "report_title")
    parts: list[tuple[str, str, str]] = []  # (name, title, body)
    for section in report.sections():
        body = section.render(report, lang)
        if body is None:
            continue
        parts.append((section.name, section.title_in(lang), body))

    def entry(target: str, heading: str) -> str:
        page = f'<span class="toc-page" data-section="{escape(target)}"></span>' if paged else ""
        return f'<span class="toc-entry"><a href="#{escape(target)}">{escape(heading)}</a>{page}</span>'

    toc = "".join(
        f"<li>{entry(name, heading)}"
        + (
            "<ol>" + "".join(f"<li>{entry(*sub)}</li>" for sub in subheadings(body)) + "</ol>"
            if subheadings(body)
            else ""
        )
        + "</li>"
        for name, heading, body in parts
    )
    sections = "".join(
        f'<section class="report-section" id="{escape(name)}" aria-labelledby="{escape(name)}-h">'
        f'<h2 id="{escape(name)}-h">{escape(heading)}</h2>{body}</section>'
        for name, heading, body in parts
    )
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    generated = escape(text(lang, "generated", version=__version__, date=today))
    own = f'<p class="brand-footer">{escape(footer)}</p>' if footer else ""
    image = f'<img class="logo" src="{logo_uri(logo)}" alt="{escape(title)}">' if logo else ""
    style = CSS + (f":root {{ --accent: {accent}; }}" if accent else "")
    return (
        f'<!doctype html><html lang="{escape(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{style}</style></head><body>"
        f'<header class="report-header">{image}<h1>{escape(title)}</h1></header>'
        f'<nav class="toc" aria-labelledby="toc-h"><h2 id="toc-h">{escape(text(lang, "contents"))}</h2>'
        f"<ol>{toc}</ol></nav>"
        f"<main>{sections}</main>"
        f'<footer class="report-footer">{own}<p>{generated}</p></footer></body></html>'
    )


_H3 = re.compile(r'<h3 id="([^"]+)"[^>]*>(.*?)</h3>', re.S)
_BADGE = re.compile(r'<span class="badge[^"]*">.*?</span>', re.S)
_TAG = re.compile(r"<[^>]+>")


def subheadings(body: str) -> list[tuple[str, str]]:
    """The (id, text) of each ``<h3 id>`` of a section's body: the second level of the contents (a priority
    badge is left out of the text)."""
    return [
        (unescape(i), " ".join(unescape(_TAG.sub("", _BADGE.sub("", inner))).split()))
        for i, inner in _H3.findall(body)
    ]


def fill_toc_pages(document: str, pages: dict[str, int]) -> str:
    """``document`` (rendered with ``paged``) with each section's page number in its table-of-contents entry."""
    for name, page in pages.items():
        empty = f'<span class="toc-page" data-section="{escape(name)}"></span>'
        document = document.replace(empty, empty[: -len("</span>")] + f"{page}</span>", 1)
    return document
