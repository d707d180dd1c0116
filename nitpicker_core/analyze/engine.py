"""Runs selected analyzers over one commit: each_page in worker pools, each_url in this process."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nitpicker_core.analyze import pool
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.errors import UsageError
from nitpicker_core.registry import Registry, collect
from nitpicker_core.types import Analyzer, PageReport

log = logging.getLogger(__name__)


def analyzer_registry(pm: Any) -> Registry[Analyzer]:
    registry: Registry[Analyzer] = collect(pm, "register_analyzers", Registry("analyzer"))
    for analyzer in registry:
        if analyzer.each_page is None and analyzer.each_url is None:
            raise UsageError(f"analyzer {analyzer.name!r} has neither each_page nor each_url")
    return registry


@dataclass
class AnalyzeRun:
    """What the analyze hooks receive as ``run``."""

    archive: Path
    commit: int
    analyzers: list[str]
    stats: dict[str, Any] = field(default_factory=lambda: {"pages": 0, "violations": 0, "errors": {}})


def _analyzable(reader: Any, commit: int, skip: set[str]) -> Iterator[dict[str, Any]]:
    """Internal target pages of type text/html, minus the URLs this analyzer already finished."""
    for page in reader.pages(commit):
        if page["url"] in skip or page.get("is_external") or not page.get("is_target"):
            continue
        if (page.get("content_type") or "") == "text/html":
            yield page


def _page_tasks(reader: Any, commit: int, skip: set[str]) -> Iterator[pool.Task]:
    for page in _analyzable(reader, commit, skip):
        url = page["url"]
        html = reader.html(url, commit)
        if html is None:
            continue
        metadata = {k: v for k, v in page.items() if not isinstance(v, bytes)}
        yield url, html, metadata


def run_analyze(pm: Any, config: Any, archive: Path, names: list[str] | None = None,
                commit: Any = None, progress: Callable[[str, str], None] | None = None) -> dict[str, Any]:
    """Analyze ``commit`` (HEAD by default) of ``archive`` with ``names`` (default: every analyzer)."""
    registry = analyzer_registry(pm)
    selected = names or registry.names()
    for name in selected:
        registry[name]  # unknown names fail before anything is written
    writer = ArchiveWriter.open(Path(archive))
    ok = False
    try:
        with open_archive(writer.stub) as reader:
            resolved = reader.resolve(commit)
            run = AnalyzeRun(Path(archive), resolved, list(selected))
            pm.hook.analyze_started(run=run)
            for name in selected:
                _run_one(pm, config, registry, name, reader, writer, run, progress)
        pm.hook.analyze_finished(run=run, summary=run.stats)
        writer.write()
        ok = True
        return run.stats
    finally:
        writer.close(remove_stub=ok)


def _run_one(pm: Any, config: Any, registry: Registry[Analyzer], name: str, reader: Any, writer: Any,
             run: AnalyzeRun, progress: Callable[[str, str], None] | None) -> None:
    analyzer = registry[name]
    plugin = registry.plugin_of(name)
    settings = config.settings_for(plugin)
    commit = run.commit
    writer.begin_analysis(commit, name, analyzer.version, settings)
    done = writer.done_urls(commit, name)
    errors = 0

    def record(url: str, report: PageReport | None, error: str | None) -> None:
        nonlocal errors
        if error is not None:
            errors += 1
            writer.put_analyzer_error(commit, name, url, error)
            return
        assert report is not None
        for violation in report.violations:
            violation.analyzer, violation.url = name, violation.url or url
        writer.put_analysis(commit, name, url, report.cells, report.violations)
        run.stats["violations"] += len(report.violations)
        pm.hook.analyze_page_reported(url=url, analyzer=name, report=report, run=run)
        if progress:
            progress(name, url)

    def url_report(url: str, is_external: bool) -> tuple[PageReport | None, str | None]:
        report, error = pool.safe_call(analyzer.each_url, url, is_external, settings)
        return (report or PageReport() if error is None else None), error

    handled: set[str] = set()
    if analyzer.each_page is not None:
        for url, report, error in _page_outcomes(pm, config, analyzer, name, plugin, settings, reader, commit, done):
            handled.add(url)
            if report is not None and analyzer.each_url is not None:
                # one row per analyzer and URL: merge each_url's findings into the page's report
                extra, error = url_report(url, False)
                if extra is not None:
                    report.cells.update(extra.cells)
                    report.violations.extend(extra.violations)
            record(url, report, error)
            run.stats["pages"] += 1
    if analyzer.each_url is not None:
        for page in reader.pages(commit):
            url = page["url"]
            if url in done or url in handled or page.get("is_skipped"):
                continue
            record(url, *url_report(url, bool(page.get("is_external"))))
    run.stats["errors"][name] = errors
    writer.finish_analysis(commit, name, "complete" if errors == 0 else "complete-with-errors")


def _page_outcomes(pm: Any, config: Any, analyzer: Analyzer, name: str, plugin: str, settings: dict[str, Any],
                   reader: Any, commit: int, done: set[str]) -> Iterator[pool.Outcome]:
    """each_page over every analyzable page: in a worker pool when the plugin is loadable by name."""
    count = sum(1 for _ in _analyzable(reader, commit, done))
    if count == 0:
        return iter(())
    tasks = _page_tasks(reader, commit, done)
    info = pm.infos.get(plugin)
    if info is not None and info.distribution:
        size = pool.pool_size(analyzer, count)
        return pool.run_in_pool(size, (pm.enabled_names(), name, plugin, dict(config.values)), tasks)
    log.info("analyzer %s is not loadable by name; running it in this process", name)
    return pool.run_serial(analyzer, settings, tasks)
