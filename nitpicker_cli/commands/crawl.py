"""`nitpicker crawl URL…`: render a whole site in Chromium into a .nitpicker archive."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from nitpicker_cli.app import get_app
from nitpicker_core import UsageError, __version__, hookimpl
from nitpicker_core.urls import split_top_level_commas


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in split_top_level_commas(value) if part]


def _headers(values: tuple[str, ...]) -> dict[str, str]:
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header must be NAME:VALUE, got {value!r}")
        headers[name.strip()] = content.strip()
    return headers


def _read_list(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path.name}: {exc.strerror}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _check_url(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) URL: {url!r}")
    return url


def crawl_options(f: Any) -> Any:
    opts = [
        click.option("-o", "--output", type=click.Path(path_type=Path), help="Archive to write (default: <host>-<timestamp>.nitpicker)."),
        click.option("--interval", type=click.IntRange(0), default=0, show_default=True, help="Milliseconds to wait before each request, per worker."),
        click.option("--parallels", type=click.IntRange(1, 64), default=4, show_default=True, help="Pages rendered at the same time."),
        click.option("--retry", type=click.IntRange(1, 10), default=3, show_default=True, help="Attempts per URL."),
        click.option("--single", is_flag=True, help="Render only the given URL; its links are checked (metadata only), not crawled."),
        click.option("--no-recursive", "no_recursive", is_flag=True, help="Do not follow internal links; check them (metadata only)."),
        click.option("--no-fetch-external", "no_fetch_external", is_flag=True, help="Record external links without requesting them."),
        click.option("--scope", multiple=True, help="More hosts or URLs counted as internal (comma-separated, repeatable)."),
        click.option("--exclude", multiple=True, help="Path globs to skip, with ** and {a,b} (comma-separated, repeatable)."),
        click.option("--exclude-keyword", multiple=True, help="Skip pages whose HTML matches this regex (repeatable)."),
        click.option("--exclude-url", multiple=True, help="Skip URLs starting with this prefix (comma-separated, repeatable)."),
        click.option("--disable-queries", is_flag=True, help="Strip query strings from every URL."),
        click.option("--max-excluded-depth", type=click.IntRange(0), default=0, help="Reserved: depth of excluded paths to still check."),
        click.option("--list", "list_urls", multiple=True, help="Crawl only these URLs (comma-separated, repeatable)."),
        click.option("--list-file", type=click.Path(path_type=Path), help="Crawl only the URLs in this file (one per line)."),
        click.option("--resume", "resume", type=click.Path(path_type=Path), help="Finish an interrupted crawl of this archive (same commit)."),
        click.option("--user-agent", default=None, help="User agent (default: Nitpicker/<version>)."),
        click.option("--ignore-robots", is_flag=True, help="Do not honour robots.txt."),
        click.option("--no-image", "no_image", is_flag=True, help="Do not capture images per device preset."),
        click.option("--image-file-size-threshold", type=click.IntRange(0), default=0, help="Images larger than this many bytes are flagged."),
        click.option("--header", "headers", multiple=True, help="NAME:VALUE sent to in-scope URLs only; never stored (repeatable)."),
        click.option("--strict", is_flag=True, help="Exit 1 instead of 2 when only external links failed."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def build_options(urls: tuple[str, ...], kw: dict[str, Any]) -> Any:
    from nitpicker_core.crawler.options import CrawlOptions

    listed = _split(kw["list_urls"]) + (_read_list(kw["list_file"]) if kw.get("list_file") else [])
    roots = [_check_url(u) for u in (list(urls) or listed)]
    if not roots:
        raise UsageError("give at least one URL (or --list / --list-file)")
    return CrawlOptions(
        roots=roots, interval=kw["interval"], parallels=kw["parallels"], retry=kw["retry"],
        recursive=not kw["no_recursive"] and not kw["single"] and not listed, fetch_external=not kw["no_fetch_external"],
        scope=_split(kw["scope"]), excludes=_split(kw["exclude"]), exclude_keywords=list(kw["exclude_keyword"]),
        exclude_urls=_split(kw["exclude_url"]), disable_queries=kw["disable_queries"],
        max_excluded_depth=kw["max_excluded_depth"], from_list=bool(listed),
        user_agent=kw["user_agent"] or f"Nitpicker/{__version__}", ignore_robots=kw["ignore_robots"],
        image=not kw["no_image"], image_file_size_threshold=kw["image_file_size_threshold"],
        headers=_headers(kw["headers"]), single=kw["single"], strict=kw["strict"],
    ), ([_check_url(u) for u in listed] if listed else None)


def exit_code(stats: Any, strict: bool) -> int:
    if stats.internal_errors:
        return 1
    if stats.external_errors:
        return 1 if strict else 2
    return 0


@hookimpl
def register_commands(cli: click.Group, pm: Any) -> None:
    @cli.command("crawl")
    @click.argument("urls", nargs=-1)
    @crawl_options
    def crawl(urls: tuple[str, ...], **kw: Any) -> None:
        """Render URL and every page it leads to in Chromium, into a .nitpicker archive."""
        from nitpicker_cli.progress import Progress
        from nitpicker_core.crawler.engine import Crawler
        from nitpicker_core.crawler.options import default_output

        app = get_app()
        app.config()
        options, list_urls = build_options(urls, kw)
        output = kw["resume"] or kw["output"] or default_output(options.roots[0])
        if output.suffix != ".nitpicker":
            output = output.with_name(output.name + ".nitpicker")
        progress = Progress(options.parallels, silent=app.silent)
        crawler = Crawler(app.pm, options, output, resume=bool(kw["resume"]), list_urls=list_urls,
                          progress=progress.update)
        with progress:
            stats = asyncio.run(crawler.run())
        app.info(f"{stats.status}: {stats.pages} URLs ({stats.rendered} rendered, {stats.skipped} skipped, "
                 f"{stats.internal_errors} internal / {stats.external_errors} external errors) → {output}")
        code = exit_code(stats, options.strict)
        if stats.status == "interrupted":
            code = 130 if code == 0 else code
        sys.exit(code)

