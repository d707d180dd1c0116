"""A third-party nitpicker plugin: counts words per page, queries the counts, adds `nitpicker word-stats`."""

from __future__ import annotations

import re
from typing import Any

import click

from nitpicker_core import Analyzer, Column, PageInput, PageReport, Query, Violation, hookimpl

WORD = re.compile(r"\w+", re.UNICODE)


class WordCount(Analyzer):
    name = "word-count"
    label = "Word count"
    version = "0.3.0"
    columns = (Column("words", "Words"),)
    concurrency = 2

    def setup(self, settings: Any) -> None:
        self.min_words = int(settings.get("min_words", 10))

    def each_page(self, page: PageInput) -> PageReport:
        body = page.document.find("body")
        # itertext, not text_content: block elements must not glue their words together
        text = " ".join(body.itertext()) if body is not None else ""
        words = len(WORD.findall(text))
        violations = []
        if words < self.min_words:
            violations.append(Violation("thin-content", f"only {words} words (minimum {self.min_words})",
                                        severity="warning"))
        return PageReport(cells={"words": words}, violations=violations)


def _word_counts(archive: Any, commit: int, min_words: int) -> dict[str, Any]:
    rows = archive.execute(
        "SELECT u.url, c.value FROM analysis_cell c JOIN url u ON u.id = c.url_id "
        "WHERE c.commit_id = ? AND c.analyzer = 'word-count' AND c.column = 'words' ORDER BY u.url",
        (commit,))
    items = [{"url": r[0], "words": int(r[1])} for r in rows if int(r[1]) >= min_words]
    return {"total": len(items), "items": items}


@hookimpl
def register_settings(register: Any) -> None:
    register("min_words", type="int", default=10, help="pages with fewer words get a thin-content warning")


@hookimpl
def register_analyzers(register: Any) -> None:
    register(WordCount())


@hookimpl
def register_queries(register: Any) -> None:
    register(Query("word-counts", "Word count of every analyzed page (from the word-count analyzer).",
                   _word_counts, {"min_words": {"type": "integer", "default": 0, "minimum": 0,
                                                "description": "only pages with at least this many words"}}))


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("word-stats")
    @click.argument("archive")
    def word_stats(archive: str) -> None:
        """Print the total and average word count of an analyzed ARCHIVE."""
        from nitpicker_core.archive import open_archive

        with open_archive(archive) as reader:
            counts = _word_counts(reader, reader.resolve(None), 0)["items"]
        total = sum(item["words"] for item in counts)
        average = total / len(counts) if counts else 0
        click.echo(f"{len(counts)} pages, {total} words, {average:.1f} words per page")


WORD_COUNTS_PAGE = """{% extends "base.html" %}{% block content %}
<table class="data"><caption>{{ data.total }} pages</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Words</th></tr></thead>
<tbody>{% for row in data["items"] %}<tr><td class="url">{{ row.url }}</td><td>{{ row.words }}</td></tr>{% endfor %}</tbody>
</table>{% endblock %}"""


@hookimpl
def register_viewer_blueprints(register: Any) -> None:
    from flask import Blueprint

    from nitpicker_viewer.app import query, render_source

    blueprint = Blueprint("word_counts", __name__)

    @blueprint.get("/word-counts")
    def word_counts() -> str:
        return render_source(WORD_COUNTS_PAGE, title="Word counts", data=query("word-counts"))

    register(blueprint)


@hookimpl
def viewer_menu_links(request: Any) -> list[Any]:
    from nitpicker_core import MenuLink

    return [MenuLink("/word-counts", "Word counts", order=500)]
