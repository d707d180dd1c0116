"""Run plugin code the way the commands do: a plugin manager, one analyzer on given HTML, a query, the viewer."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nitpicker_core import UsageError, Violation

if TYPE_CHECKING:
    from nitpicker_core import ArchiveReader, Config, NitpickerPluginManager

DEFAULT_URL = "http://site.test/"


def plugin_manager(plugins: Mapping[str, object] | None = None) -> NitpickerPluginManager:
    """The installed plugins (as ``NITPICKER_LOAD_PLUGINS``/``_DISABLE_PLUGINS`` allow) plus ``plugins``.

    ``plugins`` maps a plugin name (its entry-point name: settings are ``plugins.<name>.<key>``) to the
    plugin object, usually its module. One already loaded from its entry point is replaced, so the source
    under test is what runs; a plugin given here has no distribution, so its analyzers run in this process.
    """
    from nitpicker_core.plugins import make_plugin_manager

    pm = make_plugin_manager()
    for name, plugin in (plugins or {}).items():
        if pm.get_plugin(name) is not None:
            pm.unregister(name=name)
        pm.add_plugin(plugin, name)
    return pm


def configured(pm: NitpickerPluginManager, settings: Mapping[str, Mapping[str, Any]] | None = None) -> Config:
    """Load the configuration the way the CLI does, with ``settings`` as the ``[plugins.<name>]`` tables.

    No config file is read. Returns the ``Config``; ``configure`` has run on every plugin.
    """
    from nitpicker_core.config import load_config

    config = load_config(
        pm, data={"plugins": {name: dict(table) for name, table in (settings or {}).items()}}
    )
    pm.configure_plugins(config)
    return config


def with_settings(config: Config, plugin: str, settings: Mapping[str, Any]) -> Config:
    """``config`` with ``plugin``'s ``settings`` applied as if given as CLI flags (same checks, same errors)."""
    declared = {s.key: s for s in config.settings if s.plugin == plugin}
    unknown = sorted(set(settings) - set(declared))
    if unknown:
        raise UsageError(
            f"plugin {plugin!r} declares no setting {unknown[0]!r} "
            f"(settings: {', '.join(sorted(declared)) or 'none'})"
        )
    return config.override({declared[key].dest: value for key, value in settings.items()})


@dataclass
class AnalyzerResult:
    """What one analyzer stored for one page, read back from the archive.

    ``cells``: column key → value; ``notes``: column key → note, for cells that carry one (``Cell``);
    ``violations``: the stored findings (``skipped`` checks included, as ``info`` findings); ``errors``:
    the stored error messages (an exception, a timeout, a wrong return type); ``tracebacks``: the
    tracebacks stored with them, where there is one (from the ``analyzer-errors`` query); ``summary``: the
    run's figures for the analyzer (pages, cached, errors, mode…); ``archive``: the archive, for more reads.
    """

    url: str
    cells: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    archive: Path | None = None
    tracebacks: list[str] = field(default_factory=list)

    @property
    def rules(self) -> list[str]:
        """The rules of the violations, in the order stored."""
        return [v.rule for v in self.violations]


def analyze_html(
    pm: NitpickerPluginManager,
    config: Config,
    analyzer: str,
    html: str,
    workdir: Path | str,
    *,
    url: str = DEFAULT_URL,
    settings: Mapping[str, Any] | None = None,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> AnalyzerResult:
    """Run ``analyzer`` on one page with ``html`` through the real analyze path, and read back what it stored.

    The page is written into a fresh archive in ``workdir`` (``source`` is the server's HTML, for analyzers
    that read it), then ``nitpicker analyze --plugin ANALYZER`` runs: settings checked, ``check``/``setup``/
    ``each_page``/``each_url``/``teardown`` called, results stored and cached. A plugin registered by object
    (``plugin_manager(plugins)``) has no distribution to load by name, so its ``each_page`` runs in this
    process; an installed one's runs in the worker pool, as in a real run.
    """
    from nitpicker_core.analyze import analyze
    from nitpicker_core.archive import open_archive
    from nitpicker_core.registries import analyzer_registry
    from nitpicker_testing.archives import build_archive, page

    registry = analyzer_registry(pm)
    registry[analyzer]  # an unknown name raises here, naming the analyzers there are
    plugin = registry.plugin_of(analyzer)
    run_config = with_settings(config, plugin, settings or {}) if settings else config
    archive = Path(workdir) / "analyzed.nitpicker"
    archive.unlink(missing_ok=True)
    build_archive(archive, [page(url, html, source=source, metadata=metadata)], pm=pm, roots=[url])
    run = analyze(pm, run_config, archive, [analyzer])
    with open_archive(archive) as reader:
        cells = reader.analysis(analyzer=analyzer)
        result = AnalyzerResult(
            url,
            {c["column"]: c["value"] for c in cells},
            {c["column"]: c["note"] for c in cells if c["note"]},
            [
                Violation(
                    v["rule"],
                    v["message"],
                    v["severity"],
                    v["location"] or "",
                    v["url"],
                    v["analyzer"],
                    v["snippet"] or "",
                    v["help_url"] or "",
                )
                for v in reader.violations(analyzer=analyzer)
            ],
            [e["message"] for e in reader.analyzer_errors(analyzer=analyzer)],
            run.summaries[analyzer].as_dict(),
            archive,
            _tracebacks(pm, reader, analyzer) if run.stats["errors"].get(analyzer) else [],
        )
    return result


def _tracebacks(pm: NitpickerPluginManager, reader: ArchiveReader, analyzer: str) -> list[str]:
    """The stored tracebacks of ``analyzer``'s errors, through the ``analyzer-errors`` query when it is there."""
    from nitpicker_core import query_registry, run_query

    queries = query_registry(pm)
    if "analyzer-errors" not in queries:  # its plugin is disabled: the messages alone must do
        return []
    rows = run_query(queries, reader, "analyzer-errors", {"analyzer": analyzer})["items"]
    return [row["traceback"] for row in rows if row.get("traceback")]


def analyze_archive(
    pm: NitpickerPluginManager,
    config: Config,
    archive: Path | str,
    *analyzers: str,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``nitpicker analyze ARCHIVE --plugin NAME…`` in this process (default: the default analyzers).

    ``settings`` maps a plugin name to its settings for this run. Returns the run's summary (``pages``,
    ``violations``, ``errors`` by analyzer and ``analyzers`` with each one's figures).
    """
    from nitpicker_core.analyze import analyze

    for plugin, values in (settings or {}).items():
        config = with_settings(config, plugin, values)
    return analyze(pm, config, Path(archive), list(analyzers) or None).summary()


def run_named_query(
    pm: NitpickerPluginManager, archive: Path | str, name: str, commit: Any = None, **params: Any
) -> Any:
    """Run the registered query ``name`` on ``archive`` (HEAD by default) as ``nitpicker query`` does.

    ``params`` are checked against the query's schema (strings are converted like CLI arguments);
    a bad one raises ``UsageError`` with the CLI's message.
    """
    from nitpicker_core import query_registry, run_query
    from nitpicker_core.archive import open_archive

    with open_archive(archive) as reader:
        return run_query(query_registry(pm), reader, name, params, commit)


def render_sheet(
    pm: NitpickerPluginManager,
    archive: Path | str,
    name: str,
    commit: Any = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[tuple[str, ...], list[list[Any]]]:
    """The sheet ``name`` of ``archive`` as every report destination gets it: (columns, rows).

    Rows are lists in column order; a value a sheet gave as a ``Cell`` stays one (its note is the report's
    cell note). ``options`` are the report run's options (``ReportContext.options``).
    """
    from nitpicker_core.archive import open_archive
    from nitpicker_core.report import ReportContext, render_sheets, select_sheets

    sheets = select_sheets(pm, [name])
    with open_archive(archive) as reader:
        resolved = reader.resolve(commit)
        report = ReportContext(pm, reader, resolved, dict(options or {}))
        for sheet, rows in render_sheets(sheets, reader, resolved, report):
            return tuple(sheet.columns), [list(row) for row in rows]
    raise AssertionError("select_sheets returned no sheet")  # it raises UsageError for unknown names


@contextlib.contextmanager
def viewer_client(pm: NitpickerPluginManager, archive: Path | str) -> Iterator[Any]:
    """A Flask test client of the viewer over ``archive``, every blueprint of ``pm`` mounted."""
    from nitpicker_viewer.app import create_app

    app = create_app(archive, pm)
    app.config["TESTING"] = True
    try:
        yield app.test_client()
    finally:
        app.config["NITPICKER_CLOSE"]()
