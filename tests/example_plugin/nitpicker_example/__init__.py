"""A third-party nitpicker plugin: word counts (analyzer, query, sheet, viewer page, command), long URLs, a crawl filter.

docs/plugins.md builds this plugin step by step; its tests (tests/example_plugin/tests) use nitpicker's
pytest fixtures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from html import escape
from typing import TYPE_CHECKING, Any

import click

from nitpicker_core import (
    Analyzer,
    Cell,
    Column,
    CrawlContext,
    MenuLink,
    PageInput,
    PageReport,
    Query,
    Register,
    RegisterBlueprint,
    RegisterSetting,
    ReportSection,
    ScrapeResult,
    Sheet,
    Violation,
    hookimpl,
)

if TYPE_CHECKING:  # annotations only: importing the plugin should not load Flask or the archive reader
    from flask import Request

    from nitpicker_core import ArchiveReader, Config, ReportContext

WORD = re.compile(r"\w+", re.UNICODE)


def count_words(document: Any) -> int:
    """Words in the body of a parsed page (``lxml.html``)."""
    body = document.find("body")
    # itertext, not text_content: block elements must not glue their words together
    return len(WORD.findall(" ".join(body.itertext()))) if body is not None else 0


class WordCount(Analyzer):
    name = "word-count"
    label = "Word count"
    version = "0.3.0"
    columns = (Column("words", "Words"),)
    concurrency = 2

    def setup(self, settings: Mapping[str, Any]) -> None:
        self.min_words = int(settings.get("min_words", 10))

    def each_page(self, page: PageInput) -> PageReport:
        words = count_words(page.document)
        violations = []
        if words < self.min_words:
            violations.append(
                Violation(
                    "thin-content", f"only {words} words (minimum {self.min_words})", severity="warning"
                )
            )
        return PageReport(cells={"words": words}, violations=violations)


class LongUrl(Analyzer):
    """A per-URL check: runs in the main process for every URL of the commit, pages or not."""

    name = "long-url"
    label = "Long URLs"
    version = "1"
    columns = (Column("length", "URL length"),)

    def each_url(self, url: str, is_external: bool, settings: Mapping[str, Any]) -> PageReport:
        limit = int(settings.get("max_url_length", 80))
        if is_external or len(url) <= limit:
            return PageReport(cells={"length": len(url)})
        return PageReport(
            cells={"length": Cell(len(url), f"over {limit}")},
            violations=[Violation("long-url", f"{len(url)} characters (limit {limit})", "warning")],
        )


def word_counts(archive: ArchiveReader, commit: int, min_words: int) -> dict[str, Any]:
    """The query: every page's word count from the analyzer's stored cells, by URL."""
    cells = archive.analysis(commit, analyzer="word-count")
    items = [
        {"url": c["url"], "words": c["value"]}
        for c in cells
        if c["column"] == "words" and c["value"] >= min_words
    ]
    return {"total": len(items), "items": items}


@hookimpl
def register_settings(register: RegisterSetting) -> None:
    register("min_words", type="int", default=10, help="pages with fewer words get a thin-content warning")
    register("max_url_length", type="int", default=80, help="longer URLs get a long-url warning")
    register("skip_below", type="int", default=0, help="crawl: skip rendered pages with fewer words (0: off)")


@hookimpl
def register_analyzers(register: Register[Analyzer]) -> None:
    register(WordCount())
    register(LongUrl())


@hookimpl
def register_queries(register: Register[Query]) -> None:
    register(
        Query(
            "word-counts",
            "Word count of every analyzed page (from the word-count analyzer).",
            word_counts,
            {
                "min_words": {
                    "type": "integer",
                    "default": 0,
                    "minimum": 0,
                    "description": "only pages with at least this many words",
                }
            },
        )
    )


def _sheet_rows(reader: ArchiveReader, commit: int) -> Iterator[list[Any]]:
    for item in word_counts(reader, commit, 0)["items"]:
        yield [item["url"], item["words"]]


@hookimpl
def register_sheets(register: Register[Sheet]) -> None:
    register(
        Sheet(
            "Word Counts",
            ("URL", "Words"),
            _sheet_rows,
            order=500,
            description="Words per page",
            links=("URL",),
            widths={"URL": 400},
        )
    )


def _report_section(report: ReportContext, lang: str) -> str | None:
    items = sorted(report.query("word-counts")["items"], key=lambda item: -item["words"])[:10]
    if not items:
        return None  # no analysis: no section
    words = "単語数" if lang == "ja" else "Words"
    rows = "".join(f"<tr><td>{escape(i['url'])}</td><td>{i['words']}</td></tr>" for i in items)
    return (
        f'<table><thead><tr><th scope="col">URL</th><th scope="col">{words}</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


@hookimpl
def register_report_sections(register: Register[ReportSection]) -> None:
    register(ReportSection("word-counts", "Word counts", _report_section, order=45, titles={"ja": "単語数"}))


_crawl_settings: dict[str, Any] = {}


@hookimpl
def configure(config: Config) -> None:
    # read once per process; a malformed value fails only the commands that read it (config.get raises)
    _crawl_settings["skip_below"] = config.get("word-count", "skip_below")


@hookimpl
def crawl_page_filter(url: str, result: ScrapeResult, crawl: CrawlContext) -> str | None:
    """Skip a rendered page with fewer than ``skip_below`` words: it is stored as skipped, its links not followed."""
    limit = _crawl_settings.get("skip_below", 0)
    if not limit or not result.html:
        return None
    import lxml.html

    words = count_words(lxml.html.document_fromstring(result.html))
    return f"only {words} words (word-count skip_below {limit})" if words < limit else None


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("word-stats")
    @click.argument("archive")
    def word_stats(archive: str) -> None:
        """Print the total and average word count of an analyzed ARCHIVE."""
        from nitpicker_core.archive import open_archive

        with open_archive(archive) as reader:
            counts = word_counts(reader, reader.resolve(None), 0)["items"]
        total = sum(item["words"] for item in counts)
        average = total / len(counts) if counts else 0
        click.echo(f"{len(counts)} pages, {total} words, {average:.1f} words per page")


WORD_COUNTS_PAGE = """{% extends "base.html" %}{% block content %}
<table class="data"><caption>{{ data.total }} pages</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Words</th></tr></thead>
<tbody>{% for row in data["items"] %}<tr><td class="url">{{ row.url }}</td><td>{{ row.words }}</td></tr>{% endfor %}</tbody>
</table>{% endblock %}"""


@hookimpl
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    from flask import Blueprint

    from nitpicker_viewer.app import query, render_source

    blueprint = Blueprint("word_counts", __name__)

    @blueprint.get("/word-counts")
    def word_counts_page() -> str:
        return render_source(WORD_COUNTS_PAGE, title="Word counts", data=query("word-counts"))

    register(blueprint)


@hookimpl
def viewer_menu_links(request: Request) -> list[MenuLink]:
    return [MenuLink("/word-counts", "Word counts", order=500)]
