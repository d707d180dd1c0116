"""Every hook nitpicker calls: the contract between the core and its plugins, built-ins included.

Hooks are called with keyword arguments only; an implementation may accept any subset of them, so a
hook grows by adding arguments, never by renaming. Named contributions (settings, analyzers, sheets,
destinations, queries, blueprints) go through a ``register`` callback: the host validates them,
rejects duplicates, records which plugin registered what and orders them by their ``order``.

Every call goes through pluggy, one plugin at a time where a failure must stay that plugin's
(``configure``, ``register_*``), so tracing (``NITPICKER_TRACE_PLUGINS=1``) and wrappers see it. A
function marked ``@hookimpl`` whose name is no hook here makes its plugin unavailable (``unknown hook
register_analysers (did you mean register_analyzers?)``) unless marked ``@hookimpl(optionalhook=True)``,
for hooks another plugin may define.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click
    from flask import Request
    from playwright.async_api import BrowserContext, Page

    from nitpicker_core.analyze.engine import AnalyzeRun
    from nitpicker_core.checks import Check
    from nitpicker_core.config import Config
    from nitpicker_core.indexing import Indexer
    from nitpicker_core.plugins import NitpickerPluginManager
    from nitpicker_core.records import CrawlContext, CrawlErrorRecord, Resource, ScrapeResult
    from nitpicker_core.registry import Register, RegisterBlueprint, RegisterSetting
    from nitpicker_core.sinks import ArchiveSink
    from nitpicker_core.types import (
        Analyzer,
        Destination,
        MenuLink,
        PageReport,
        Query,
        ReportSection,
        Sheet,
    )

PROJECT = "nitpicker"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# -------------------------------------------------------------------------------------------------
# Lifecycle and settings
# -------------------------------------------------------------------------------------------------


@hookspec
def register_settings(register: RegisterSetting) -> None:
    """Declare this plugin's settings once; the core derives config-file keys and CLI flags from them.

    :param register: call ``register(key, type="str", default=None, help="")`` once per setting; the
        key becomes ``plugins.<plugin>.<key>`` in the config file and ``--<plugin>-<key>`` on the CLI.
        ``flag="name"`` names the flag instead (``--extract`` for ``plugins.extract.rules``); a list
        setting's flag splits each occurrence at commas unless ``split=False`` (selectors, regexes).

    Runs in: the main process, when the plugin manager is built. Called: once per process.
    """


@hookspec(historic=True)
def configure(config: Config) -> None:
    """Inspect the resolved configuration; raise ``NotConfigured(reason)`` to switch this plugin off.

    :param config: the merged configuration (file, then CLI flags); ``config.settings_for(plugin)``
        gives this plugin's settings with defaults filled in.

    Runs in: every process (analyze workers call it in their initializer). Called: once per run.
    historic: plugins registered later still receive the call. Each implementation is called on its
    own, so one plugin declining does not stop the others from being configured.
    """


@hookspec
def unconfigure(config: Config) -> None:
    """Release what ``configure`` acquired, before the process exits.

    :param config: the same configuration ``configure`` received.

    Runs in: every process that called ``configure``. Called: once, at exit.
    """


# -------------------------------------------------------------------------------------------------
# Crawl: scrape events, in the order the crawler fires them
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def crawl_open_archive(crawl: CrawlContext, indexer: Indexer) -> ArchiveSink | None:
    """Return the archive sink this crawl's commit goes into, or None to leave it to another plugin.

    :param crawl: the crawl context: ``output``, ``roots``, ``options``, ``kind`` and ``mode`` (``new``,
        ``update``, ``resume``, ``append``, ``inventory``, ``retry-failed``) say which commit to open or
        continue. Raise ``NitpickerError`` to refuse (say, nothing to resume). ``crawl.is_external(url)``
        tells a URL outside the scope the roots and ``--scope`` draw: the built-in writer marks each link
        target with it until the crawler's record of the target comes.
    :param indexer: a ``nitpicker_core.indexing.Indexer`` over the crawl's own plugins: a sink over a
        ``.nitpicker`` ``ArchiveWriter`` calls ``indexer.commit(writer, commit)`` when the commit completes,
        before writing the file, to store the checks' findings with it. Other sinks ignore it.

    The crawler keeps the returned ``nitpicker_core.sinks.ArchiveSink`` and calls only its methods:
    ``put_*`` on its writer thread, the rest on its event loop. With no sink the crawl is refused before
    anything is fetched. The built-in archive writer is a ``trylast`` implementation, so a plugin that
    returns its own sink replaces it.

    With ``--render never`` and ``auto`` the hook, and every call of the sink after it, run in the crawler's
    archive writer process: a child of the crawler that loads the crawl's plugins by entry-point name with its
    settings (``crawl`` there is a copy whose ``state`` starts empty) and takes the calls in the crawler's
    order, so that storing runs on another core than the crawl. A plugin registered in the crawler's process
    only, with a hook other than the ``crawl_*`` ones (checks, settings), or ``NITPICKER_WRITER_PROCESS=0``,
    keeps them in the crawler's process, as does a child that cannot start (``=1`` uses the process with
    ``--render always`` too).

    Runs in: the archive writer process (else the crawler's main process). Called: once per crawl, first,
    before ``crawl_started``.
    firstresult: the first sink returned is the one used.
    """


@hookspec
def crawl_started(crawl: CrawlContext) -> None:
    """A crawl is starting; roots, options, the output path and ``crawl.commit`` are on ``crawl``.

    :param crawl: the crawl context. ``crawl.state`` is free space for plugins, keyed by plugin name;
        the core writes nothing there.

    Runs in: the crawler (main process). Called: once per crawl, after the archive sink is open and
    before any URL is fetched.
    """


@hookspec(firstresult=True)
def crawl_should_skip(url: str, crawl: CrawlContext) -> str | None:
    """Return a skip reason for ``url``, or None to let others decide.

    The crawler has already applied its own policy (robots.txt, ``--exclude``, ``--exclude-url``) and
    asks this hook only about URLs that policy lets through.

    :param url: the normalised absolute URL about to be fetched.
    :param crawl: the crawl context.

    Runs in: the crawler, on a worker thread (an implementation may block, e.g. on a fetch). Called:
    once per URL taken from the queue.
    firstresult: the first non-None reason wins; the URL is recorded as skipped with it.
    """


@hookspec
def crawl_login(context: BrowserContext, page: Page) -> bool | None:
    """Log the crawl in, for a login the ``[login]`` table's fields and submit selector cannot do.

    :param context: the Playwright ``BrowserContext`` of the login; its cookies and its origins'
        ``localStorage`` after every implementation ran are the crawl's login state (those of the
        crawl's hosts only).
    :param page: a ``Page`` of that context: on the ``[login]`` URL after its form was submitted when the
        table names one, else blank.

    Runs in: the crawler, on its event loop, in a Chromium of its own (also with ``--render never`` and
    ``--executor dask…``: the cookies and localStorage travel to the workers with each page). An implementation may
    return an awaitable, which the crawler awaits; returning ``False`` says the login failed (the crawl
    ends with one line, exit 1). Called: once before the crawl when a plugin implements it or the config
    file has a ``[login]`` table, and again each time the session expired (at most ``max_renewals``).
    Credentials should come from the environment or a file, never from the plugin's code or settings.
    """


@hookspec
def crawl_before_navigate(page: Page, url: str, crawl: CrawlContext) -> None:
    """Adjust the Playwright page (headers, routing, viewport) before it loads ``url``.

    :param page: the Playwright ``Page`` that is about to navigate.
    :param url: the URL it will load.
    :param crawl: the crawl context.

    Runs in: the crawler, on its event loop; an implementation may return an awaitable, which the
    crawler awaits. With ``--executor dask…`` on a Dask worker instead (see ``crawl_scrape``). Called:
    once per rendered URL.
    """


@hookspec(firstresult=True)
def crawl_scrape(url: str, page: Page, crawl: CrawlContext, render: str) -> ScrapeResult | None:
    """Scrape ``url`` and return a ScrapeResult (or an awaitable of one).

    :param url: the URL to render.
    :param page: the Playwright ``Page`` to render it in.
    :param crawl: the crawl context.
    :param render: ``"full"`` (everything: links, images, resources, the sent HTML) or ``"light"`` (a
        metadata-only URL, e.g. an external link: status, headers and title are all the crawler keeps).

    Runs in: the crawler, on its event loop; with ``--executor dask…`` on a Dask worker's event loop,
    in a plugin manager rebuilt there from entry-point names (a plugin registered some other way does
    not run there; ``crawl`` is a copy, its ``state`` the worker's own; the ScrapeResult must pickle).
    Called: once per URL that needs the browser.
    firstresult: the built-in Playwright scrape is a ``trylast`` implementation that returns an
    awaitable; wrap it with ``@hookimpl(wrapper=True)`` to time, retry or take screenshots instead of
    copying it. The wrapper runs synchronously: ``yield`` gives it the awaitable (nothing has rendered
    yet), so work around the scrape goes in a coroutine the wrapper returns, which the crawler awaits::

        @hookimpl(wrapper=True)
        def crawl_scrape(url):
            scraping = yield  # an awaitable from the built-in, or a ScrapeResult from a plain implementation

            async def timed():
                start = time.perf_counter()
                result = await scraping if inspect.isawaitable(scraping) else scraping
                result.extra["scrape_seconds"] = time.perf_counter() - start
                return result

            return timed()
    """


@hookspec(firstresult=True)
def crawl_parse(result: ScrapeResult, body: bytes, crawl: CrawlContext) -> ScrapeResult | None:
    """``--render never`` (or a page ``auto`` leaves unrendered): read a page from the HTML the server sent.

    :param result: the page as fetched: ``url``, ``status``, ``headers``, ``redirect_chain`` (the final
        URL last) and ``content_type``; the implementation fills in the rest (``html``, ``source``,
        ``metadata``, ``anchors``, ``headings``, ``images``, ``resources``, ``jsonld``…) and returns it.
    :param body: the response body, as many bytes as the server sent (up to the source limit).
    :param crawl: the crawl context.

    Runs in: one of the crawl's worker processes, which load the plugins by entry-point name (``crawl`` is a
    copy there: what the hook puts in ``crawl.state`` stays in that process); on a worker thread of the
    crawler for the first pages, and for every page when an implementation is not loadable by name. No
    browser exists: parse, do not fetch. Called: once per in-scope HTML page the crawl does not render; with
    ``--render auto``, once per page while its template's verdict is awaited (the read of a page then rendered is
    dropped), and a reader that sets ``result.template`` (``template_key_of``) spares auto a second parse.
    firstresult: the built-in lxml reader (in the ``scrape`` plugin) is a ``trylast`` implementation.
    """


@hookspec(firstresult=True)
def crawl_page_filter(url: str, result: ScrapeResult, crawl: CrawlContext) -> str | None:
    """Return a skip reason for a page already rendered (say, its HTML matches an excluded keyword).

    :param url: the page's final URL (after redirects).
    :param result: what the scrape returned: ``html``, ``metadata``, ``anchors``…
    :param crawl: the crawl context.

    A page given a reason is recorded as skipped with it, and its links are not followed. The built-in
    ``--exclude-keyword`` check is an implementation of this hook (in the ``crawl-rules`` plugin).

    Runs in: the crawler, on its event loop (keep it quick: no I/O). Called: once per rendered
    in-scope page.
    firstresult: the first non-None reason wins.
    """


@hookspec
def crawl_page_scraped(result: ScrapeResult, crawl: CrawlContext) -> None:
    """A URL (page or not, internal or external) was fetched and stored in the archive sink; observe it.

    :param result: everything learned about the URL.
    :param crawl: the crawl context.

    Runs in: the crawler's process, on the one thread that announces stored events, in their order.
    Called: once per fetched URL.
    """


@hookspec
def crawl_page_unchanged(url: str, crawl: CrawlContext) -> None:
    """``crawl --update``: the page answered 304 Not Modified and the commit took its state from the base.

    :param url: the page that did not change (it was not rendered; the archive sink's ``put_unchanged``
        stored it before this hook runs).
    :param crawl: the crawl context.

    Runs in: the crawler's process, on the one thread that announces stored events, in their order.
    Called: once per page a conditional request found unchanged.
    """


@hookspec
def crawl_page_skipped(url: str, reason: str, crawl: CrawlContext, is_external: bool) -> None:
    """A URL was skipped, with the reason ``crawl_should_skip`` (or a crawl limit) gave.

    :param url: the skipped URL.
    :param reason: the skip reason (``blocked by robots.txt``, ``excluded``, a limit, a page filter's…).
    :param crawl: the crawl context.
    :param is_external: whether the URL is on another host (a skipped link to another site is external
        like any other; one of the crawl's own hosts outside the scope is internal).

    Runs in: the crawler's process, on the one thread that announces stored events, in their order.
    Called: once per skipped URL.
    """


@hookspec
def crawl_resource_received(resource: Resource, referrer_url: str, crawl: CrawlContext) -> None:
    """A sub-resource response (CSS, JS, image, font, XHR) was seen while ``referrer_url`` rendered.

    :param resource: the response as a Resource record.
    :param referrer_url: the page that requested it.
    :param crawl: the crawl context.

    Runs in: the crawler's process, on the one thread that announces stored events, in their order.
    Called: once per response per page.
    """


@hookspec
def crawl_error(url: str, error: CrawlErrorRecord, crawl: CrawlContext) -> None:
    """Fetching or scraping ``url`` failed hard; ``error.kind`` is the classified error kind.

    :param url: the URL that failed.
    :param error: kind, message and phase of the failure.
    :param crawl: the crawl context.

    Runs in: the crawler's process, on the one thread that announces stored events, in their order.
    Called: once per failed URL (after retries).
    """


@hookspec
def crawl_finished(crawl: CrawlContext, stats: dict[str, Any]) -> None:
    """The crawl ended, completed or interrupted, and every archive write was drained.

    :param crawl: the crawl context.
    :param stats: counts and ``status`` (``complete`` or ``interrupted``).

    Runs in: the crawler. Called: once per crawl, after the archive sink closed the commit and wrote it
    (even when the crawl was interrupted; not when it was abandoned before any work).
    """


# -------------------------------------------------------------------------------------------------
# Analyze
# -------------------------------------------------------------------------------------------------


@hookspec
def register_analyzers(register: Register[Analyzer]) -> None:
    """Register Analyzer objects (name, label, columns, concurrency, each_page / each_url).

    :param register: call ``register(analyzer)`` with an ``nitpicker_core.Analyzer`` instance.

    Runs in: the main process and in every analyze worker (workers rebuild analyzers by name).
    Called: once per process.
    """


@hookspec
def analyze_started(run: AnalyzeRun) -> None:
    """An analyze run started; ``run.analyzers`` are the selected names, ``run.commit`` the commit.

    :param run: the AnalyzeRun.

    Runs in: the main process. Called: once per analyze run.
    """


@hookspec
def analyze_page_reported(url: str, analyzer: str, report: PageReport, run: AnalyzeRun) -> None:
    """One analyzer's report for one URL arrived; observe progress or stream results elsewhere.

    :param url: the analyzed URL.
    :param analyzer: the analyzer's name.
    :param report: its cells and violations.
    :param run: the AnalyzeRun.

    Runs in: the main process. Called: once per analyzer per URL.
    """


@hookspec
def analyze_finished(run: AnalyzeRun, summary: dict[str, Any]) -> None:
    """The analyze run finished; ``summary`` holds counts and per-analyzer errors.

    :param run: the AnalyzeRun.
    :param summary: ``{"pages": n, "violations": n, "errors": {analyzer: n}}``.

    Runs in: the main process. Called: once per analyze run.
    """


# -------------------------------------------------------------------------------------------------
# Reports
# -------------------------------------------------------------------------------------------------


@hookspec
def register_sheets(register: Register[Sheet]) -> None:
    """Register report sheets (name, columns, a row generator over one archive commit, order).

    :param register: call ``register(sheet)`` with an ``nitpicker_core.Sheet``.

    Runs in: the main process. Called: once per report run.
    """


@hookspec
def register_report_destinations(register: Register[Destination]) -> None:
    """Register report destinations (Google Sheets, XLSX, CSV, …) that receive rendered sheets.

    :param register: call ``register(destination)`` with an ``nitpicker_core.Destination``.

    Runs in: the main process. Called: once per report run.
    """


@hookspec
def register_report_sections(register: Register[ReportSection]) -> None:
    """Register sections of the HTML and PDF reports (cover, summary, one per issue, charts, appendix, …).

    :param register: call ``register(section)`` with an ``nitpicker_core.ReportSection``; its
        ``render(report, lang)`` returns an HTML fragment or ``None`` to leave the section out.

    Runs in: the main process. Called: once per HTML or PDF report.
    """


# -------------------------------------------------------------------------------------------------
# Query, viewer and CLI
# -------------------------------------------------------------------------------------------------


@hookspec
def register_queries(register: Register[Query]) -> None:
    """Register named, parameterised archive queries; the CLI, MCP tools and viewer API use them.

    :param register: call ``register(query)`` with an ``nitpicker_core.Query``.

    Runs in: whichever process reads archives (CLI, MCP server, viewer). Called: once per process.
    """


@hookspec
def register_checks(register: Register[Check], analyzers: list[Analyzer]) -> None:
    """Register checks: prioritised questions about a commit whose findings the ``issues`` query lists.

    :param register: call ``register(check)`` with a ``nitpicker_core.Check`` (id kebab-case, or
        ``<analyzer>/<rule>`` for an analyzer rule; priority one of ``nitpicker_core.PRIORITIES``).
    :param analyzers: the registered analyzers, in registry order (their ``rules()`` become checks).

    Runs in: whichever process reads archives (CLI, MCP server, viewer, pipeline verdict).
    Called: once per issues query.
    """


@hookspec
def register_viewer_blueprints(register: RegisterBlueprint) -> None:
    """Register Flask blueprints for the viewer; the core pages are registered the same way.

    :param register: call ``register(blueprint, url_prefix=None)``.

    Runs in: the viewer. Called: once, when the app is built.
    """


@hookspec
def viewer_menu_links(request: Request) -> list[MenuLink] | None:
    """Return links for the viewer's navigation menu.

    :param request: the current Flask request.

    Runs in: the viewer. Called: once per rendered HTML page.
    """


@hookspec
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    """Add click commands or groups to the ``nitpicker`` CLI; every built-in subcommand does this.

    :param cli: the root click group.
    :param pm: the plugin manager, for commands that derive flags from plugin settings.

    Runs in: the CLI process. Called: once, before arguments are parsed.
    """
