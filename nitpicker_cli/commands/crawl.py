"""`nitpicker crawl URL…`: render a whole site in Chromium into a .nitpicker archive."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from nitpicker_cli.app import get_app
from nitpicker_cli.options import CHECK_SETTING_PLUGINS, list_flags, setting_flags, setting_options
from nitpicker_cli.refusals import check_same_roots, scheme_hint, unreachable_roots
from nitpicker_cli.summary import for_people, json_option, rendered_words, waited_lines
from nitpicker_core import UsageError, __version__, hookimpl
from nitpicker_core.urls import split_top_level_commas
from nitpicker_core.writable import check_file_destination

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in split_top_level_commas(value) if part]


# RFC 9110's token: the characters a field name may have
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _headers(values: tuple[str, ...]) -> dict[str, str]:
    """``--header NAME:VALUE`` values; errors name the header, never its value (it may be a credential)."""
    headers = {}
    for value in values:
        name, sep, content = value.partition(":")
        name = name.strip()
        if not sep or not name:
            raise UsageError("--header must be NAME:VALUE")
        if not _HEADER_NAME.fullmatch(name):
            raise UsageError(f"--header {name!r}: not an HTTP header name")
        if any(c in content for c in "\r\n\0"):
            raise UsageError(f"--header {name}: the value has a line break or NUL (one header per --header)")
        headers[name] = content.strip()
    return headers


def _read_list(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path.name}: {exc.strerror}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _check_url(url: str) -> str:
    from urllib.parse import urlsplit

    from nitpicker_core.urls import normalize, split_credentials

    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            normalize(url)  # a bad port or IPv6 literal: refused here, or the crawl would go elsewhere
    except ValueError as exc:  # the message names what is wrong, never the credentials
        raise UsageError(f"not a valid URL: {split_credentials(url)[0]!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) URL: {url!r}{scheme_hint(url)}")
    return url


def _check_scope(values: list[str]) -> list[str]:
    """--scope takes URLs or bare host[:port]; each must make a valid URL (a bad port is refused here)."""
    for value in values:
        _check_url(value if "://" in value else f"http://{value}")
    return values


def crawl_options(f: Any) -> Any:
    opts = [
        click.option(
            "-o",
            "--output",
            type=click.Path(path_type=Path),
            help="Archive to write (default: <host>-<timestamp>.nitpicker).",
        ),
        click.option(
            "--interval",
            type=click.IntRange(0),
            metavar="MS",
            default=0,
            show_default=True,
            help="Milliseconds to wait before each request, per worker.",
        ),
        click.option(
            "--max-rps",
            type=click.FloatRange(0, min_open=True),
            metavar="N",
            default=None,
            help="At most N requests started per second to one host (the crawler's preflights and page loads; not the sub-resources a browser loads). [default: no limit]",
        ),
        click.option(
            "--max-retry-after",
            type=click.FloatRange(0),
            metavar="SECONDS",
            default=120.0,
            show_default=True,
            help="The longest Retry-After (of a 429 or 503) waited for before asking again; a longer one is recorded as the answer.",
        ),
        click.option(
            "--parallels",
            type=click.IntRange(1, 64),
            default=2,
            show_default=True,
            help="Pages rendered at the same time (one browser tab each).",
        ),
        click.option(
            "--render",
            type=click.Choice(["always", "never", "auto"]),
            default="always",
            show_default=True,
            help="always: every page rendered in Chromium; never: every page read from the HTML the server sent, no browser started (a static site, several times faster; links and text made by script are not seen); auto: one rendered sample per page template decides whether that template's pages are rendered or read as sent.",
        ),
        click.option(
            "--executor",
            default="local",
            show_default=True,
            metavar="WHERE",
            help='Where pages render: local (this machine\'s Chromium), dask-local[:N] (a Dask cluster of N worker processes here, default 2) or dask://HOST:PORT (a Dask scheduler); Dask needs pip install "nitpicker[dask]".',
        ),
        click.option(
            "--retry",
            type=click.IntRange(1, 10),
            metavar="N",
            default=3,
            show_default=True,
            help="Attempts per URL.",
        ),
        click.option(
            "--single",
            is_flag=True,
            help="Render only the given URL; its links are checked (metadata only), not crawled.",
        ),
        click.option(
            "--no-recursive",
            "no_recursive",
            is_flag=True,
            help="Do not follow internal links; check them (metadata only).",
        ),
        click.option(
            "--no-fetch-external",
            "no_fetch_external",
            is_flag=True,
            help="Record external links without requesting them.",
        ),
        click.option(
            "--scope",
            multiple=True,
            metavar="HOST",
            help="More hosts or URLs counted as internal (comma-separated, repeatable).",
        ),
        click.option(
            "--exclude",
            multiple=True,
            metavar="GLOB",
            help="Path globs to skip, with ** and {a,b} (comma-separated, repeatable).",
        ),
        click.option(
            "--exclude-keyword",
            multiple=True,
            metavar="REGEX",
            help="Skip pages whose HTML matches this regex (repeatable).",
        ),
        click.option(
            "--exclude-url",
            multiple=True,
            metavar="PREFIX",
            help="Skip URLs starting with this prefix (comma-separated, repeatable).",
        ),
        click.option("--disable-queries", is_flag=True, help="Strip query strings from every URL."),
        click.option(
            "--max-excluded-depth",
            type=click.IntRange(0),
            metavar="N",
            default=0,
            help="Also crawl same-host pages outside the scope, this many links deep (default 0: only check them).",
        ),
        click.option(
            "--max-pages",
            type=click.IntRange(1),
            default=None,
            metavar="N",
            help="Crawl at most N internal URLs in this commit, resumed ones included; the rest are recorded as skipped (default: no limit, or crawl.max_pages in the config file).",
        ),
        click.option(
            "--max-depth",
            type=click.IntRange(0),
            default=None,
            metavar="N",
            help="Crawl internal pages at most N links from a root (roots are 0); deeper ones are recorded as skipped (default: no limit, or crawl.max_depth in the config file).",
        ),
        click.option(
            "--user-agent", default=None, metavar="UA", help="User agent (default: Nitpicker/<version>)."
        ),
        click.option("--ignore-robots", is_flag=True, help="Do not honour robots.txt."),
        click.option(
            "--sitemap",
            "sitemaps",
            multiple=True,
            metavar="URL",
            help="Read this sitemap (or sitemap index) too, besides those robots.txt names and /sitemap.xml (repeatable).",
        ),
        click.option(
            "--no-sitemap-discovery",
            is_flag=True,
            help="Read only the --sitemap ones: not robots.txt's Sitemap: lines nor /sitemap.xml.",
        ),
        click.option(
            "--no-sitemap-seed",
            is_flag=True,
            help="Check the sitemaps without crawling their URLs: the crawl starts from the roots alone.",
        ),
        click.option("--no-image", "no_image", is_flag=True, help="Do not capture images per device preset."),
        click.option(
            "--screenshots",
            is_flag=True,
            help="Keep a screenshot of every rendered page (JPEG, 1280 px wide, at most 8000 px high) and a thumbnail in the archive.",
        ),
        click.option(
            "--image-file-size-threshold",
            type=click.IntRange(0),
            metavar="BYTES",
            default=0,
            help="Images larger than this many bytes are flagged.",
        ),
        click.option(
            "--header",
            "headers",
            multiple=True,
            metavar="NAME:VALUE",
            help="NAME:VALUE sent to in-scope URLs only; never stored (repeatable).",
        ),
        click.option(
            "--cookies",
            "cookies_file",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Crawl logged in with these cookies: a Netscape cookies.txt or a JSON list of cookies; only those of the crawl's hosts are used, never stored.",
        ),
        click.option(
            "--storage-state",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Crawl logged in with a Playwright storage state, its cookies and its origins' localStorage (`nitpicker login URL --save FILE` makes one); only the site's are used, never stored.",
        ),
        click.option("--strict", is_flag=True, help="Exit 1 instead of 2 when only external links failed."),
        click.option("-v", "--verbose", "verbose_here", is_flag=True, help="Same as `nitpicker --verbose`."),
        click.option("-s", "--silent", "silent_here", is_flag=True, help="Same as `nitpicker --silent`."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def continue_options(f: Any) -> Any:
    """Options of `crawl` only: URL lists and the ways to continue an existing archive."""
    opts = [
        click.option(
            "--list",
            "list_urls",
            multiple=True,
            metavar="URL",
            help="Crawl only these URLs (comma-separated, repeatable).",
        ),
        click.option(
            "--list-file",
            type=click.Path(path_type=Path),
            help="Crawl only the URLs in this file (one per line).",
        ),
        click.option(
            "--resume",
            type=click.Path(path_type=Path),
            metavar="ARCHIVE",
            help="Finish the interrupted crawl of ARCHIVE (same commit).",
        ),
        click.option(
            "--append",
            type=click.Path(path_type=Path),
            metavar="ARCHIVE",
            help="Add the given URLs as more roots of ARCHIVE's newest crawl (same commit).",
        ),
        click.option(
            "--update",
            type=click.Path(path_type=Path),
            metavar="ARCHIVE",
            help="Crawl ARCHIVE's scope again into a new commit; a page that answers its conditional request with 304 is taken over without rendering.",
        ),
        click.option(
            "--full",
            is_flag=True,
            help="With --update: send no conditional request, render every page again.",
        ),
        click.option(
            "--retry-failed",
            type=click.Path(path_type=Path),
            metavar="ARCHIVE",
            help="Fetch again the URLs of ARCHIVE that failed, except permanent failures.",
        ),
        click.option(
            "--inventory",
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="Seed the URLs listed in FILE into the archive given with -o (logged as an inventory run).",
        ),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def login_setup(kw: dict[str, Any]) -> Any:
    """How the crawl logs in (--cookies, --storage-state, the config file's [login] table, a crawl_login hook),
    or None. Secrets are read here (``env:``/``file:``); a file that does not parse is one line."""
    from nitpicker_core.crawler.login import (
        DEFAULT_LOGOUT,
        MAX_RENEWALS,
        LoginSetup,
        load_cookies,
        read_storage_state,
        resolve_secret,
    )

    app = get_app()
    table = app.config().login
    hook = bool(app.pm.hook.crawl_login.get_hookimpls())
    cookies: list[dict[str, Any]] = []
    origins: list[dict[str, Any]] = []
    sources = []
    if kw.get("cookies_file"):  # a Path, or a str from a resumed pipeline run's journal
        cookies += load_cookies(Path(kw["cookies_file"]))
        sources.append(f"{Path(kw['cookies_file']).name} (--cookies)")
    if kw.get("storage_state"):
        state_cookies, origins = read_storage_state(Path(kw["storage_state"]))
        cookies += state_cookies
        sources.append(f"{Path(kw['storage_state']).name} (--storage-state)")
    url = table.get("url", "")
    if not cookies and not origins and not url and not hook:
        return None
    if url:
        _check_url(url)
    fields = {
        name: resolve_secret(value, f"login.fields.{name}")
        for name, value in (table.get("fields") or {}).items()
    }
    return LoginSetup(
        cookies=cookies,
        origins=origins,
        source=", ".join(sources),
        url=url,
        fields=fields,
        submit=table.get("submit", ""),
        success=table.get("success", ""),
        hook=hook,
        logout=tuple(table.get("logout", DEFAULT_LOGOUT)),
        max_renewals=table.get("max_renewals", MAX_RENEWALS),
    )


def build_options(urls: tuple[str, ...], kw: dict[str, Any]) -> Any:
    from nitpicker_core.crawler.options import CrawlOptions

    def _limits(kw: dict[str, Any]) -> dict[str, Any]:
        # the flag wins; without it, the config file's [crawl] table; without that, no limit
        file = get_app().config().crawl
        return {
            key: kw.get(key) if kw.get(key) is not None else file.get(key)
            for key in ("max_pages", "max_depth")
        }

    listed = _split(kw["list_urls"]) + (_read_list(kw["list_file"]) if kw.get("list_file") else [])
    roots = [_check_url(u) for u in (list(urls) or listed)]
    if not roots:
        raise UsageError("give at least one URL (or --list / --list-file)")
    return CrawlOptions(
        roots=roots,
        interval=kw["interval"],
        parallels=kw["parallels"],
        retry=kw["retry"],
        max_rps=kw.get("max_rps"),
        max_retry_after=kw.get("max_retry_after", 120.0),
        recursive=not kw["no_recursive"] and not kw["single"] and not listed,
        fetch_external=not kw["no_fetch_external"],
        scope=_check_scope(_split(kw["scope"])),
        excludes=_split(kw["exclude"]),
        exclude_keywords=list(kw["exclude_keyword"]),
        exclude_urls=_split(kw["exclude_url"]),
        disable_queries=kw["disable_queries"],
        max_excluded_depth=kw["max_excluded_depth"],
        from_list=bool(listed),
        **_limits(kw),
        user_agent=kw["user_agent"] or f"Nitpicker/{__version__}",
        ignore_robots=kw["ignore_robots"],
        sitemaps=[_check_url(u) for u in kw.get("sitemaps") or ()],
        sitemap_discovery=not kw.get("no_sitemap_discovery"),
        sitemap_seed=not kw.get("no_sitemap_seed"),
        image=not kw["no_image"],
        image_file_size_threshold=kw["image_file_size_threshold"],
        screenshots=kw["screenshots"],
        render=kw.get("render") or "always",
        headers=_headers(kw["headers"]),
        login=login_setup(kw),
        single=kw["single"],
        strict=kw["strict"],
    ), ([_check_url(u) for u in listed] if listed else None)


def _with_suffix(output: Path) -> Path:
    return output if output.suffix == ".nitpicker" else output.with_name(output.name + ".nitpicker")


CONTINUE_MODES = ("resume", "append", "update", "retry_failed")


def _mode(kw: dict[str, Any]) -> tuple[str, Path | None]:
    given = [m for m in (*CONTINUE_MODES, "inventory") if kw.get(m)]
    if len(given) > 1:
        raise UsageError("use only one of --" + ", --".join(m.replace("_", "-") for m in given))
    if not given:
        return "new", kw["output"]
    mode = given[0]
    if mode == "inventory":
        if not kw["output"]:
            raise UsageError("--inventory needs the archive to seed, given with -o/--output")
        return mode, kw["output"]
    return mode.replace("_", "-"), kw[mode]


def _continued_options(
    archive: Path, mode: str, urls: tuple[str, ...], kw: dict[str, Any]
) -> tuple[Any, Any]:
    """The stored options of the archive's crawl, with this run's roots, parallelism and headers."""
    from dataclasses import fields

    from nitpicker_core.archive import open_archive
    from nitpicker_core.crawler.options import CrawlOptions

    with open_archive(archive) as reader:
        stored = reader.info().get("options") or {}
    known = {f.name for f in fields(CrawlOptions)}
    values = {k: v for k, v in stored.items() if k in known and k not in ("headers", "login")}
    given = [_check_url(u) for u in urls]
    if mode == "append":
        if not given:
            raise UsageError("--append needs the URLs to add")
        if stored.get("from_list"):  # its roots are the list: more roots would be crawled as a site
            raise UsageError(
                f"{archive.name} was crawled from a URL list; --append adds roots to a site crawl "
                "(crawl the other URLs with --list into a new archive)"
            )
        values["roots"] = [*values.get("roots", []), *given]
    elif given:
        values["roots"] = given  # e.g. to give basic-auth credentials again: they are never stored
    if not values.get("roots"):
        raise UsageError(f"{archive.name} records no roots to crawl from")
    values.update(parallels=kw["parallels"], interval=kw["interval"], headers=_headers(kw["headers"]))
    _continued_render(archive, mode, values, kw)
    values["login"] = login_setup(kw)  # given again for each run, as the credentials are: never stored
    # politeness given now holds for this run (the stored one when not given)
    values.update({k: kw[k] for k in ("max_rps",) if kw.get(k) is not None})
    # limits given now apply to this run into the archive (say, a wider --max-pages to go on)
    values.update({k: kw[k] for k in ("max_pages", "max_depth") if kw.get(k) is not None})
    if kw.get(
        "screenshots"
    ):  # given now, screenshots are taken from this run on (never turned off by omission)
        values["screenshots"] = True
    options = CrawlOptions(**values)
    list_urls = None
    if mode == "inventory":
        list_urls = [_check_url(u) for u in _read_list(kw["inventory"])]
        if not list_urls:
            raise UsageError(f"{kw['inventory'].name} lists no URL")
    return options, list_urls


def _continued_render(archive: Path, mode: str, values: dict[str, Any], kw: dict[str, Any]) -> None:
    """``--render`` given to a run that continues an archive: an update's new commit is crawled in that mode;
    a run that goes on with the same commit keeps the commit's, and another given is refused."""
    given = click.get_current_context().get_parameter_source("render") is not ParameterSource.DEFAULT
    if not given:
        return
    stored = values.get("render") or "always"  # archives from before --render were rendered
    if mode == "update":
        values["render"] = kw["render"]
    elif kw["render"] != stored:
        raise UsageError(
            f"{archive.name}'s crawl was made with --render {stored}; --{mode} goes on with "
            f"it in that mode (leave --render out, or crawl --update ARCHIVE --render {kw['render']} for a new "
            "commit)"
        )


def _left_counts(stats: Any) -> dict[str, int]:
    limits = getattr(stats, "limits", None) or {}
    return {
        flag: int(limits.get(key) or 0)
        for flag, key in (("--max-pages", "not_crawled_max_pages"), ("--max-depth", "not_crawled_max_depth"))
    }


def _limited(stats: Any) -> str:
    return " (limited)" if any(_left_counts(stats).values()) else ""


def _left_out(stats: Any) -> str:
    """What --max-pages / --max-depth left out, said plainly so a limited crawl is never mistaken for a whole one."""
    limits = getattr(stats, "limits", None) or {}
    parts = [
        f"{n} found URLs not crawled ({flag} {limits.get(flag[2:].replace('-', '_'))})"
        for flag, n in _left_counts(stats).items()
        if n
    ]
    return "; " + "; ".join(parts) if parts else ""


def _explain_scope(app: Any, stats: Any) -> None:
    """A crawl the scope left far narrower than its start page's links says so, and how to widen it."""
    from nitpicker_core.crawler.start_links import scope_note

    note = scope_note(getattr(stats, "start_links", None), stats.rendered + getattr(stats, "parsed", 0))
    if note:
        app.info(note)


def _unextracted(stats: Any) -> str:
    n = int(getattr(stats, "unextracted", 0) or 0)
    return (
        (
            f"; {n} rendered page(s) stored without title and links: they did not answer the extraction in "
            "time (see their page errors)"
        )
        if n
        else ""
    )


def login_lines(stats: Any) -> list[str]:
    """A logged-in crawl in a line or two: the cookies used and dropped, logins again, logout links left out."""
    login = getattr(stats, "login", None) or {}
    if not login:
        return []
    parts = [f"Logged in: {login.get('cookies', 0)} cookie(s) for the crawl's hosts"]
    if login.get("origins"):
        parts[0] += f" and the localStorage of {login['origins']} origin(s)"
    if login.get("dropped_cookies"):
        parts.append(f"{login['dropped_cookies']} cookie(s) of other hosts dropped")
    if login.get("logout_skipped"):
        parts.append(f"{login['logout_skipped']} logout link(s) left out")
    lines = ["; ".join(parts)]
    if login.get("renewals"):
        lines.append(f"Logged in again: {login['renewals']} time(s) (the session expired)")
    if login.get("not_renewed"):
        lines.append(f"The session expired and was not renewed: {login['not_renewed']}")
    return lines


def _dns_failed_before(stats: Any) -> str:
    """URLs a continued crawl did not ask for: their host's DNS lookup failed in an earlier run of the commit."""
    hosts = getattr(stats, "dns_failed_before", None) or {}
    if not hosts:
        return ""
    return (
        f"; {sum(hosts.values())} URL(s) not asked: the DNS lookup of their host failed in an earlier run "
        f"({', '.join(sorted(hosts))})"
    )


def _revalidated(counts: dict[str, Any]) -> str:
    """What --update's conditional requests found, in one line."""
    if counts.get("off"):
        return f"update: no conditional requests ({counts['off']})"
    return (
        f"update: {counts['conditional']} conditional requests: {counts['unchanged']} pages unchanged (304, "
        f"taken over without rendering), {counts['changed']} changed or not validated (rendered)"
    )


def _say(message: str) -> None:
    """Stop messages are shown even with --silent: they say how to get the rest of the crawl."""
    click.echo(f"nitpicker: {message}", err=True)


def crawl_result(output: Path, stats: Any, facts: dict[str, Any]) -> dict[str, Any]:
    """The crawl as JSON: the run's own counts (status, rendered, skipped, errors) and the archive's facts."""
    from nitpicker_cli.summary import next_commands

    left = _left_counts(stats)
    return {
        "archive": str(output),
        "status": stats.status,
        "seconds": stats.seconds,
        "rendered": stats.rendered,
        "parsed": stats.parsed,
        # --render auto: templates found, samples rendered, templates rendered, why it degraded (if it did)
        **({"auto": stats.auto} if getattr(stats, "auto", None) else {}),
        "skipped": stats.skipped,
        # rendered pages stored without title and links: they did not answer the extraction in time
        "unextracted": stats.unextracted,
        **({"revalidation": stats.revalidation} if stats.revalidation else {}),
        # seconds waited before requests to each host: Retry-After, slowdown, --max-rps, Crawl-delay
        **({"waited": stats.waited} if getattr(stats, "waited", None) else {}),
        **({"login": stats.login} if getattr(stats, "login", None) else {}),
        **facts,
        "errors": {
            "internal": stats.internal_errors,
            "external": stats.external_errors,
            "by_kind": facts["errors"],
            **({"dns_failed_before": stats.dns_failed_before} if stats.dns_failed_before else {}),
        },
        "not_crawled": {"max_pages": left["--max-pages"], "max_depth": left["--max-depth"]},
        "next": next_commands(output, analyzed=False),
    }


def crawl_summary(output: Path, stats: Any, facts: dict[str, Any]) -> list[str]:
    """The crawl in a few lines for people."""
    from nitpicker_cli import summary

    crawl = {
        key: getattr(stats, key)
        for key in (
            "status",
            "rendered",
            "parsed",
            "skipped",
            "internal_errors",
            "external_errors",
            "seconds",
            "revalidation",
            "waited",
            "auto",
        )
    }
    notes = [
        note.lstrip("; ")
        for note in (_left_out(stats), _unextracted(stats), _dns_failed_before(stats))
        if note
    ]
    notes += login_lines(stats)
    return [
        *summary.crawl_lines(crawl, facts),
        *notes,
        *summary.findings_lines(facts["findings"], output),
        *summary.changed_lines(facts["changed"]),
        *summary.closing_lines(output, facts["commit"], analyzed=False),
    ]


def _summarize(app: Any, output: Path, stats: Any, human: bool) -> None:
    """The crawl's summary: a few lines for people on a terminal, JSON on stdout otherwise."""
    from nitpicker_cli import summary
    from nitpicker_cli.app import emit_json

    facts = summary.gather(app.pm, output)
    if human:
        summary.print_lines(crawl_summary(output, stats, facts))
    else:
        for line in [
            *summary.blocked_lines(facts.get("totals") or {}),
            *summary.crawler_lines(facts.get("crawlers")),
        ]:
            app.info(line)  # beside the JSON's totals.blocked, as the waits are
        emit_json(crawl_result(output, stats, facts))


def exit_code(stats: Any, strict: bool) -> int:
    if stats.internal_errors:
        return 1
    if stats.external_errors:
        return 1 if strict else 2
    return 0


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    from nitpicker_cli.commands.login import register_login

    register_login(cli)

    @cli.command("crawl")
    @click.argument("urls", nargs=-1)
    @crawl_options
    @continue_options
    @json_option
    @setting_options(pm, CHECK_SETTING_PLUGINS)
    def crawl(urls: tuple[str, ...], **kw: Any) -> None:
        """Render URL and every page it leads to in Chromium, into a .nitpicker archive.

        Continue an archive with --resume (finish an interrupted crawl), --append (more roots, same
        commit), --update (the same scope again, as a new commit), --retry-failed or --inventory FILE.
        Ends with a short summary on a terminal, JSON with --json or when piped.
        """
        from nitpicker_cli.progress import Progress
        from nitpicker_core.crawler.engine import Crawler
        from nitpicker_core.crawler.options import default_output
        from nitpicker_core.crawler.stopping import StopSignals
        from nitpicker_core.executors import executor_client, parse_executor
        from nitpicker_core.indexing import check_settings

        app = get_app()
        app.adopt_verbosity(kw.pop("verbose_here"), kw.pop("silent_here"))
        flags = list_flags(setting_flags(kw, app.pm))
        executor = parse_executor(kw.pop("executor"))  # a bad value is one line, before anything starts
        with StopSignals() as stop:  # from here on a signal stops the crawl cleanly, whatever phase it is in
            app.config(flags)
            check_settings(app.pm)  # the checks' settings the commit is indexed with
            mode, output = _mode(kw)
            if kw["full"] and mode != "update":
                raise UsageError("--full goes with --update (render every page of the update again)")
            inventory = None
            if mode == "new":
                options, list_urls = build_options(urls, kw)
                output = output or default_output(options.roots[0])
                check_same_roots(_with_suffix(output), options.roots)
            else:
                assert output is not None  # every continuing mode names its archive (_mode)
                options, list_urls = _continued_options(output, mode, urls, kw)
                if mode == "inventory":
                    inventory = kw["inventory"].read_bytes()
            output = _with_suffix(output)
            # before the browser starts: an archive that cannot be written is one line, and nothing is made
            check_file_destination(output, output.name)
            with executor_client(executor, app.info) as client:
                progress = Progress(options.parallels, silent=app.silent)
                crawler = Crawler(
                    app.pm,
                    options,
                    output,
                    mode=mode,
                    list_urls=list_urls,
                    inventory=inventory,
                    progress=progress.update,
                    stop=stop,
                    stop_message=_say,
                    revalidate=not kw["full"],
                    executor=client,
                    executor_flag=str(executor) if executor.distributed else None,
                )
                progress.watch(crawler.counts)
                with progress, progress.errors_counted(app.pm):
                    stats = asyncio.run(crawler.run())
                if crawler.cluster_lost:  # once the live display is stopped, so that nothing draws over it
                    _say(crawler.cluster_lost)
        human = for_people(kw["as_json"])
        if not human:
            app.info(
                f"{stats.status}{_limited(stats)}: {stats.pages} URLs "
                f"({rendered_words(stats.rendered, stats.revalidation, stats.parsed, stats.auto)}, "
                f"{stats.skipped} skipped, {stats.internal_errors} internal / {stats.external_errors} "
                f"external errors) → {output}{_left_out(stats)}{_unextracted(stats)}"
            )
            if stats.dns_failed_before:
                app.info(_dns_failed_before(stats).lstrip("; "))
        _explain_scope(app, stats)
        if not human:
            for line in waited_lines(stats.waited):
                app.info(line)
        if stats.revalidation:
            app.info(_revalidated(stats.revalidation))
        if not human:
            for line in login_lines(stats):
                app.info(line)
        if stats.internal_errors and mode in ("new", "update", "append"):
            for line in unreachable_roots(output, options.roots):  # why, in the words of the error kind
                click.echo(f"nitpicker: error: {line}", err=True)
        if stats.status != "interrupted":
            _summarize(app, output, stats, human)
        if stats.status == "interrupted":
            # a stopped crawl is not a failed one: what it found so far is in the archive, the rest pending
            _say(f"interrupted; resume with: {crawler.resume_command}")
            sys.exit(130)
        sys.exit(exit_code(stats, options.strict))
