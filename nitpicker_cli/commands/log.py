"""`nitpicker log ARCHIVE`: the commits (crawl generations) of an archive, newest first, with their tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import hookimpl
from nitpicker_core.archive import open_archive, tools_line

if TYPE_CHECKING:
    from nitpicker_core.archive import ArchiveReader


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("log")
    @click.argument("archive", type=click.Path(path_type=str))
    @click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print JSON: every commit with its stats, options, environment and analyzer runs.",
    )
    def log(archive: str, as_json: bool) -> None:
        """List the commits of ARCHIVE: id, parent, kind, status, start time, page count and the tools
        that made it (nitpicker, Chromium, analyzer rule sets); HEAD marked. --json has the whole
        environment manifest: Python, Playwright, OS, every plugin's distribution, the crawl options and
        each analyzer run's version and settings hash."""
        get_app().config()
        with open_archive(archive) as reader:
            commits = reader.commits()
            head = reader.head()
            for c in commits:
                c["counts"] = _counts(reader, c)
        if as_json:
            emit_json(commits, pretty=True)
            return
        for c in commits:
            mark = "HEAD " if c["id"] == head else "     "
            parent = c["parent_id"] if c["parent_id"] is not None else "-"
            made_by = tools_line(c)
            counts = c["counts"]
            shown = (
                f"pages {counts['pages']}  urls {counts['urls']}"
                if counts["pages"] is not None
                else (f"urls {counts['urls'] if counts['urls'] is not None else '?'}")
            )
            click.echo(
                f"{mark}{c['id']:>4}  parent {parent!s:>4}  {c['kind']:<8} {c['status']:<11} "
                f"{c['started_at']}  {shown}" + (f"  ({made_by})" if made_by else "")
            )


def _counts(reader: ArchiveReader, commit: dict[str, Any]) -> dict[str, int | None]:
    """Pages and URLs by the definitions every front door uses (``nitpicker_core.counts``): a complete
    commit's from its stored summary; an unfinished one's URLs as its crawl counted them so far."""
    recorded = (commit.get("stats") or {}).get("pages")
    if commit["status"] != "complete":
        return {"pages": None, "urls": recorded}
    from nitpicker_core import query_registry, run_query

    registry = query_registry(get_app().pm)
    if "summary" not in registry:
        return {"pages": None, "urls": recorded}
    totals = run_query(registry, reader, "summary", {}, commit["id"])["totals"]
    return {"pages": totals["pages"], "urls": totals["urls"]}
