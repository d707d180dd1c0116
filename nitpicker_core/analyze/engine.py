"""Runs selected analyzers over one commit: each_page in worker pools, each_url in this process.

Per analyzer and page: a page already done in an earlier run of the same analyzer version and settings on
this commit is skipped; a page whose HTML (by sha256) was analyzed before with the same version and settings
— on any commit — gets the cached result copied; only the rest reaches ``each_page``. The HTML is the one the
analyzer reads (``Analyzer.reads``): the server's when it asks for ``source`` and the archive kept it, else
the rendered DOM, and the page says which (``PageInput.html_kind``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import traceback
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core.analyze import dask_pool, pool
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.analysis import cache_key
from nitpicker_core.archive.hashing import canonical_json
from nitpicker_core.errors import UsageError
from nitpicker_core.indexing import index_analysis
from nitpicker_core.registries import analyzer_registry
from nitpicker_core.registry import Registry
from nitpicker_core.types import Analyzer, PageReport, Violation

if TYPE_CHECKING:
    from nitpicker_core.archive.reader import ArchiveReader
    from nitpicker_core.config import Config
    from nitpicker_core.plugins import NitpickerPluginManager

log = logging.getLogger(__name__)

FLUSH_EVERY = 200  # page results written per transaction
# progress(analyzer, done, total, violations)
ProgressCallback = Callable[[str, int, int, int], None]

_ANALYZABLE = (
    "FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
    "WHERE cp.commit_id = ? AND ps.is_target = 1 AND ps.is_external = 0 AND ps.content_type = 'text/html' "
    "AND ps.html_sha256 IS NOT NULL"
)


_BINDABLE = (
    str,
    int,
    float,
    type(None),
)  # what a violation's fields may hold: SQLite stores them as they are


def report_problem(value: Any) -> str | None:
    """What is wrong with ``value`` as an analyzer's result, or None when it is a PageReport the engine can store.

    Checked in the main process for each_page's and each_url's results alike, so a wrong type is that
    analyzer's error on that page, never an internal error of the whole run.
    """
    if not isinstance(value, PageReport):
        return f"a {type(value).__name__}, not a PageReport"
    if not isinstance(value.cells, dict) or not all(isinstance(key, str) for key in value.cells):
        return "a PageReport whose cells are not a dict of column keys (str) to values"
    try:
        canonical_json(list(value.cells.values()))
    except (TypeError, ValueError) as exc:
        return f"a PageReport whose cells cannot be stored as JSON ({exc})"
    if not isinstance(value.violations, list) or not all(isinstance(v, Violation) for v in value.violations):
        return "a PageReport whose violations are not a list of Violation"
    for v in value.violations:
        for name in ("rule", "message", "severity", "location", "snippet", "help_url"):
            if not isinstance(getattr(v, name), _BINDABLE):
                return f"a Violation whose {name} is a {type(getattr(v, name)).__name__}, not a str"
    if not isinstance(value.skipped, dict) or not all(
        isinstance(k, str) and isinstance(w, str) for k, w in value.skipped.items()
    ):
        return "a PageReport whose skipped is not a dict of str to str"
    return None


@dataclass
class AnalyzerSummary:
    """One analyzer's share of a run (``pages``: given to each_page; ``urls``: each_url-only rows).

    ``skipped``: pages on which the analyzer left a check out (``PageReport.skipped``), cached ones included;
    ``reads``: the HTML it read; ``source_missing``: pages it wanted the server's HTML of but got the
    rendered one, because the archive did not keep it (archives written before it was kept).
    """

    pages: int = 0
    urls: int = 0
    cached: int = 0
    violations: int = 0
    errors: int = 0
    timeouts: int = 0
    mode: str = "none"  # how each_page ran: "pool", "dask", "serial", or "none" (no page needed it)
    skipped: int = 0
    reads: str = "rendered"
    source_missing: int = 0

    @property
    def failed_everywhere(self) -> bool:
        given = self.pages + self.urls
        return given > 0 and self.errors >= given

    def as_dict(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "urls": self.urls,
            "cached": self.cached,
            "violations": self.violations,
            "errors": self.errors,
            "timeouts": self.timeouts,
            "mode": self.mode,
            "skipped": self.skipped,
            "reads": self.reads,
            "source_missing": self.source_missing,
        }


@dataclass
class AnalyzeRun:
    """What the analyze hooks receive as ``run``; ``summaries`` holds the per-analyzer figures."""

    archive: Path
    commit: int
    analyzers: list[str]
    stats: dict[str, Any] = field(default_factory=lambda: {"pages": 0, "violations": 0, "errors": {}})
    summaries: dict[str, AnalyzerSummary] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """``stats`` plus ``analyzers``: {name: {pages, urls, cached, violations, errors, timeouts, mode, skipped,
        reads, source_missing}}."""
        return {**self.stats, "analyzers": {name: s.as_dict() for name, s in self.summaries.items()}}


def default_names(registry: Registry[Analyzer]) -> list[str]:
    """The analyzers a run without names uses: every one except those that say ``default = False``."""
    return [analyzer.name for analyzer in registry if analyzer.default]


def check_settings(pm: NitpickerPluginManager, config: Config, names: list[str] | None = None) -> list[str]:
    """The analyzers a run of ``names`` uses (default: the default ones), each one's settings checked.

    Unknown names, bad settings (``Analyzer.check``) and a bad ``reads`` raise ``UsageError``; nothing is
    written.
    """
    registry = analyzer_registry(pm)
    selected = list(names or default_names(registry))
    for name in selected:
        status = getattr(pm, "infos", {}).get(name)
        if name not in registry and status is not None and status.status.startswith("unavailable"):
            # an opt-in analyzer whose tool is missing: say so with the plugin's install hint, not "unknown"
            raise UsageError(f"analyzer {name!r} is {status.status}")
        analyzer = registry[name]  # an unknown name fails here, naming the known ones
        settings = config.settings_for(registry.plugin_of(name))
        _reading(analyzer, settings)
        check = getattr(analyzer, "check", None)
        if check is not None:
            if _takes(check, "analyzers"):  # one that must not clash with the others (extractor names)
                check(settings, analyzers=list(registry))
            else:
                check(settings)
    return selected


def _takes(func: Any, name: str) -> bool:
    """Whether ``func`` has a parameter ``name`` that can be given by keyword."""
    try:
        parameter = inspect.signature(func).parameters.get(name)
    except (TypeError, ValueError):  # a builtin or a callable inspect cannot read
        return False
    return parameter is not None and parameter.kind in (
        parameter.KEYWORD_ONLY,
        parameter.POSITIONAL_OR_KEYWORD,
    )


def _reading(analyzer: Analyzer, settings: Any) -> str:
    """``analyzer.reading(settings)``; analyzers not derived from ``Analyzer`` read the rendered DOM."""
    reading = getattr(analyzer, "reading", None)
    return reading(settings) if reading is not None else Analyzer.reading(analyzer, settings)


def run_analyze(
    pm: NitpickerPluginManager,
    config: Config,
    archive: Path,
    names: list[str] | None = None,
    commit: Any = None,
    progress: ProgressCallback | None = None,
    timeout: float | None = None,
    use_cache: bool = True,
    executor: Any = None,
) -> dict[str, Any]:
    """Analyze ``commit`` (HEAD by default) of ``archive`` with ``names`` (default: every analyzer).

    Returns ``{"pages", "violations", "errors": {analyzer: count}}``; ``analyze`` returns the whole run.
    """
    return analyze(pm, config, archive, names, commit, progress, timeout, use_cache, executor).stats


def analyze(
    pm: NitpickerPluginManager,
    config: Config,
    archive: Path,
    names: list[str] | None = None,
    commit: Any = None,
    progress: ProgressCallback | None = None,
    timeout: float | None = None,
    use_cache: bool = True,
    executor: Any = None,
) -> AnalyzeRun:
    """Like ``run_analyze`` but returns the AnalyzeRun (with per-analyzer summaries).

    ``use_cache=False`` recomputes every page (earlier results of the commit are replaced; fresh results
    still go into the cache for later runs). ``executor`` (``dask_pool.connect``): None or ``"local"`` for
    this machine's pools, an ``ExecutorSpec`` or its text, or a connected ``distributed.Client``, for
    each_page on Dask workers (``stats["executor"]`` then says which and how workers got the HTML); a
    cluster that goes away raises ``dask_pool.ClusterLost`` (a KeyboardInterrupt: the run is interrupted).
    """
    registry = analyzer_registry(pm)
    selected = check_settings(pm, config, names)  # unknown names, bad settings: before anything is written
    if timeout is not None and timeout <= 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout:g}")
    with open_archive(Path(archive)) as original:  # a commit the archive lacks: before the stub is made
        resolved = original.resolve(commit)
    with dask_pool.connect(executor) as cluster:  # a cluster that cannot start: before the stub is made
        writer = ArchiveWriter.open(Path(archive))
        ok = False
        try:
            with open_archive(writer.stub) as reader:
                run = AnalyzeRun(Path(archive), resolved, list(selected))
                if cluster is not None:
                    run.stats["executor"] = cluster.stats
                pm.hook.analyze_started(run=run)
                for name in selected:
                    job = _AnalyzerJob(
                        pm, config, registry, name, reader, writer, run, progress, timeout, use_cache
                    )
                    job.cluster = cluster
                    job.run()
            pm.hook.analyze_finished(run=run, summary=run.stats)
            writer.write()
            ok = True
            return run
        finally:
            writer.close(remove_stub=ok)


class _AnalyzerJob:
    """One analyzer over one commit."""

    def __init__(
        self,
        pm: NitpickerPluginManager,
        config: Config,
        registry: Registry[Analyzer],
        name: str,
        reader: ArchiveReader,
        writer: Any,
        run: AnalyzeRun,
        progress: ProgressCallback | None,
        timeout: float | None,
        use_cache: bool = True,
    ) -> None:
        self.pm, self.config, self.name, self.reader, self.writer, self.run_ = (
            pm,
            config,
            name,
            reader,
            writer,
            run,
        )
        self.analyzer = registry[name]
        self.plugin = registry.plugin_of(name)
        self.settings = config.settings_for(self.plugin)
        self.timeout = float(timeout or getattr(self.analyzer, "timeout", None) or pool.DEFAULT_TIMEOUT)
        self.reads = _reading(self.analyzer, self.settings)
        self.keys = {
            kind: cache_key(name, str(self.analyzer.version), self.settings, kind)
            for kind in ("source", "rendered")
        }
        self.commit = run.commit
        self.progress = progress
        self.use_cache = use_cache
        self.summary = run.summaries.setdefault(name, AnalyzerSummary())
        self.cluster: dask_pool.Cluster | None = None  # each_page on Dask workers when set
        self.summary.reads = self.reads
        self.done_count = 0
        self.total = 0
        self.violations = 0
        self._results: list[tuple[str, Any, Any]] = []
        self._cache: dict[str, list[tuple[str, PageReport]]] = {}  # html kind -> [(sha, report)]

    # bookkeeping

    def _tick(self) -> None:
        self.done_count += 1
        if self.progress:
            self.progress(self.name, self.done_count, self.total, self.violations)

    def _flush(self) -> None:
        for kind, items in self._cache.items():
            self.writer.put_cached_reports(self.keys[kind], items)
        self.writer.put_analyses(self.commit, self.name, self._results)
        self._cache, self._results = {}, []

    def checked(self, method: str, value: Any) -> tuple[PageReport | None, str | None]:
        """``value`` (what ``method`` returned) as a PageReport, or the error naming the analyzer and its plugin."""
        if value is None:
            return PageReport(), None
        problem = report_problem(value)
        if problem is None:
            return value, None
        return None, f"{method} of analyzer {self.name!r} (plugin {self.plugin!r}) returned {problem}"

    def record(self, url: str, report: PageReport | None, error: str | None, tb: str = "") -> None:
        if error is not None:
            self.summary.errors += 1
            self.writer.put_analyzer_error(self.commit, self.name, url, error, tb or None)
        else:
            assert report is not None
            if report.skipped:  # a check left out is a stored finding (counted in the summary), never silent
                report.violations.extend(
                    Violation("skipped", f"{what} not checked: {why}", "info")
                    for what, why in report.skipped.items()
                )
            for violation in report.violations:
                violation.analyzer, violation.url = self.name, violation.url or url
            self._results.append((url, report.cells, report.violations))
            self.violations += len(report.violations)
            self.pm.hook.analyze_page_reported(url=url, analyzer=self.name, report=report, run=self.run_)
            if len(self._results) >= FLUSH_EVERY:
                self._flush()
        self._tick()

    def url_report(self, url: str, is_external: bool) -> tuple[PageReport | None, str | None, str]:
        """each_url's report of ``url``, or its error and the traceback behind it."""
        try:
            value = self.analyzer.each_url(url, is_external, self.settings)  # type: ignore[misc]
        except Exception as exc:  # one URL failing is this analyzer's error for that URL, nothing more
            return None, f"{type(exc).__name__}: {exc}", traceback.format_exc()
        return *self.checked("each_url", value), ""

    def page_done(
        self,
        url: str,
        read: tuple[str, str] | None,
        report: PageReport | None,
        error: str | None,
        cache: bool,
        tb: str = "",
    ) -> None:
        """A page's each_page outcome: check its type, cache it under the (sha256, kind) of the HTML read, merge
        each_url's findings, record it."""
        if error is None and cache:  # cached reports were checked when they were made
            report, error = self.checked("each_page", report)
        if report is not None and cache and read is not None:
            # cached before each_url's findings are merged in: those depend on the URL, not the HTML
            sha, kind = read
            self._cache.setdefault(kind, []).append(
                (sha, PageReport(dict(report.cells), list(report.violations), dict(report.skipped)))
            )
        if report is not None and self.analyzer.each_url is not None:
            extra, error, tb = self.url_report(url, False)
            if extra is not None:
                report.cells.update(extra.cells)
                report.violations.extend(extra.violations)
            else:
                report = None
        self.record(url, report if error is None else None, error, tb)

    # the run

    def run(self) -> None:
        analyzer, name = self.analyzer, self.name
        kept = self.writer.begin_analysis(
            self.commit, name, analyzer.version, self.settings, keep=self.use_cache
        )
        done = self.writer.done_urls(self.commit, name) if kept else set()
        pages = 0
        if analyzer.each_page is not None:
            pages = self.reader.execute("SELECT COUNT(*) " + _ANALYZABLE, (self.commit,))[0][0]
        self.total = pages
        if analyzer.each_url is not None:
            self.total = self.reader.execute(
                "SELECT COUNT(*) FROM commit_page cp JOIN page_state ps ON ps.id = cp.state_id "
                "WHERE cp.commit_id = ? AND ps.is_skipped = 0",
                (self.commit,),
            )[0][0]
        handled: set[str] = set()
        try:
            if analyzer.each_page is not None:
                self._each_page(done, handled)
            if analyzer.each_url is not None:
                for page in self.reader.pages(self.commit):
                    url = page["url"]
                    if url in handled or page.get("is_skipped"):
                        continue
                    self.summary.urls += 1
                    if url in done:
                        self.summary.cached += 1
                        self._tick()
                        continue
                    self.record(url, *self.url_report(url, bool(page.get("is_external"))))
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM, a lost cluster (dask_pool.ClusterLost)
            # what came back is kept for the next run, which computes only the rest (issue 33: nothing was
            # kept until FLUSH_EVERY pages were done, and every re-run started over)
            self._flush()
            raise
        self._flush()
        self.summary.violations = self.writer.violation_count(self.commit, name)
        self.summary.skipped = self.writer.skipped_count(self.commit, name)  # pages done earlier included
        # what the names say: pages of the commit analyzed (each analyzer reads the same ones, so never a
        # sum over analyzers) and the findings stored for the commit, pages done in an earlier run included
        self.run_.stats["pages"] = max(self.run_.stats["pages"], self.summary.pages)
        self.run_.stats["violations"] += self.summary.violations
        self.run_.stats["errors"][name] = self.summary.errors
        self.writer.finish_analysis(
            self.commit, name, "complete" if self.summary.errors == 0 else "complete-with-errors"
        )
        index_analysis(self.writer, self.commit, name, self.pm)  # its checks, with this command's plugins

    def _html_to_read(self, page: dict[str, Any]) -> tuple[str, str]:
        """(sha256, kind) of the HTML this analyzer reads of ``page``: the server's when it reads ``source``
        and the archive kept it (the column is missing in older archives), else the rendered DOM."""
        if self.reads == "source":
            source = page.get("source_sha256")
            if source:
                return source, "source"
            self.summary.source_missing += 1
        return page["html_sha256"], "rendered"

    def _each_page(self, done: set[str], handled: set[str]) -> None:
        read: dict[str, tuple[str, str]] = {}

        def misses() -> Iterator[pool.Task]:
            """Pages each_page must see; done and cached pages are settled here, on the way."""
            for page in self.reader.pages(self.commit):
                if (
                    page.get("is_external")
                    or not page.get("is_target")
                    or page.get("content_type") != "text/html"
                ):
                    continue
                sha = page.get("html_sha256")
                if sha is None:
                    continue
                url = page["url"]
                handled.add(url)
                self.summary.pages += 1
                sha, kind = self._html_to_read(page)
                if url in done:
                    self.summary.cached += 1
                    self._tick()
                    continue
                cached = self.writer.cached_report(sha, self.keys[kind]) if self.use_cache else None
                if cached is not None:
                    self.summary.cached += 1
                    self.page_done(url, (sha, kind), cached, None, cache=False)
                    continue
                read[url] = (sha, kind)
                yield pool.Task(url, sha, {k: v for k, v in page.items() if not isinstance(v, bytes)}, kind)

        tasks = misses()
        first = next(tasks, None)
        if first is None:
            return
        # closing(): workers stop now, not whenever the generator is collected, if this loop is interrupted
        with contextlib.closing(self._outcomes(first, tasks)) as outcomes:
            for outcome in outcomes:
                if outcome.timed_out:
                    self.summary.timeouts += 1
                self.page_done(
                    outcome.url,
                    read.pop(outcome.url, None),
                    outcome.report,
                    outcome.error,
                    cache=True,
                    tb=outcome.traceback,
                )

    def _outcomes(self, first: pool.Task, tasks: Iterator[pool.Task]) -> Generator[pool.Outcome, None, None]:
        """each_page over every task: in a worker pool when the plugin is loadable by name, else serially."""

        def serial(items: Any) -> Iterator[pool.Outcome]:
            return pool.run_serial(
                self.analyzer, self.settings, items, self.reader.html_by_sha256, self.timeout
            )

        info = self.pm.infos.get(self.plugin)
        if info is None or not info.distribution:
            log.info("analyzer %s is not loadable by name; running it in this process", self.name)
            self.summary.mode = "serial"
            yield from serial(_chain(first, tasks))
            return
        spec = pool.WorkerSpec(
            tuple(self.pm.enabled_names()),
            self.name,
            self.plugin,
            dict(self.config.values),
            str(self.writer.stub),
            {k: v for k, v in os.environ.items() if k.startswith("NITPICKER_")},
        )
        if self.cluster is not None:
            self.summary.mode = "dask"
            blob = functools.partial(dask_pool.stored_blob, self.reader)
            yield from self.cluster.run(spec, self.timeout, blob, _chain(first, tasks))
            return
        size = pool.pool_size(self.analyzer, self.total)
        pages_per_worker = getattr(self.analyzer, "pages_per_worker", pool.DEFAULT_PAGES_PER_WORKER)
        workers = pool.WorkerPool(spec, size, self.timeout, pages_per_worker)
        remaining = _chain(first, tasks)
        try:
            self.summary.mode = "pool"
            workers.start()
            yield from workers.run(remaining)
        except pool.PoolUnavailable as exc:
            log.warning(
                "analyzer %s: no worker process could run (%s); running it in this process", self.name, exc
            )
            self.summary.mode = "serial"
            workers.close()
            yield from serial(_chain(exc.task, remaining) if exc.task is not None else remaining)
        finally:
            workers.close()


def _chain(first: pool.Task, rest: Iterator[pool.Task]) -> Iterator[pool.Task]:
    yield first
    yield from rest
