"""pytest fixtures for nitpicker plugin authors (entry point ``pytest11``: active wherever nitpicker is installed).

Only pytest is imported here; nitpicker is imported inside the fixtures, so a test run that uses none of
them (nitpicker's own suite included) pays nothing for this plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from nitpicker_core import Config, NitpickerPluginManager


@pytest.fixture
def nitpicker_plugins() -> Mapping[str, object]:
    """Override: the plugins under test by name, e.g. ``{"word-count": my_plugin_module}``. Default: none."""
    return {}


@pytest.fixture
def nitpicker_settings() -> Mapping[str, Mapping[str, Any]]:
    """Override: ``[plugins.<name>]`` tables as a config file would give them. Default: none."""
    return {}


@pytest.fixture
def _nitpicker_host(
    nitpicker_plugins: Mapping[str, object], nitpicker_settings: Mapping[str, Mapping[str, Any]]
) -> Iterator[tuple[NitpickerPluginManager, Config]]:
    """(plugin manager, config), configured once as the CLI does; unconfigured after the test."""
    from nitpicker_testing.runs import configured, plugin_manager

    pm = plugin_manager(nitpicker_plugins)
    config = configured(pm, nitpicker_settings)
    yield pm, config
    pm.unconfigure_plugins(config)


@pytest.fixture
def nitpicker_pm(_nitpicker_host: tuple[NitpickerPluginManager, Config]) -> NitpickerPluginManager:
    """A configured plugin manager: the installed plugins the environment allows, plus ``nitpicker_plugins``."""
    return _nitpicker_host[0]


@pytest.fixture
def nitpicker_config(_nitpicker_host: tuple[NitpickerPluginManager, Config]) -> Config:
    """The ``Config`` ``nitpicker_pm`` was configured with (``nitpicker_settings`` applied, no file read)."""
    return _nitpicker_host[1]


@pytest.fixture
def nitpicker_archive(nitpicker_pm: NitpickerPluginManager, tmp_path: Path) -> Callable[..., Path]:
    """Build an archive from plain data, without a browser: ``nitpicker_archive(pages=None, name=...)``.

    ``pages`` are ``nitpicker_testing.archives.page(...)`` results, ScrapeResults or keyword mappings for
    ``page`` (``{"url": ..., "html": ..., "title": ..., "links": [...]}``); the default is a small demo site.
    The archive is written through the archive sink ``crawl_open_archive`` gives, as a crawl writes it.
    """
    from nitpicker_testing.archives import build_archive

    def build(pages: Any = None, name: str = "site.nitpicker", roots: list[str] | None = None) -> Path:
        return build_archive(tmp_path / name, pages, pm=nitpicker_pm, roots=roots)

    return build


@pytest.fixture
def nitpicker_analyze(
    nitpicker_pm: NitpickerPluginManager, nitpicker_config: Config, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., Any]:
    """Run one analyzer on given HTML: ``nitpicker_analyze(name, html, url=..., settings={...})``.

    Returns ``nitpicker_testing.runs.AnalyzerResult`` (``cells``, ``notes``, ``violations``, ``errors``,
    ``summary``), read back from the archive the real analyze path wrote. The analyzers of
    ``nitpicker_plugins`` run in this process; installed plugins' in the worker pool, as in a real run.
    """
    from nitpicker_testing.runs import analyze_html

    def run(analyzer: str, html: str, **options: Any) -> Any:
        return analyze_html(
            nitpicker_pm, nitpicker_config, analyzer, html, tmp_path_factory.mktemp("analyze"), **options
        )

    return run


@pytest.fixture
def nitpicker_analyze_archive(
    nitpicker_pm: NitpickerPluginManager, nitpicker_config: Config
) -> Callable[..., Any]:
    """Analyze a whole archive: ``nitpicker_analyze_archive(archive, *names, settings={plugin: {...}})``.

    Returns the run's summary (``pages``, ``violations``, ``errors``, ``analyzers``); read the results with
    ``nitpicker_query`` or ``nitpicker_core.archive.open_archive``.
    """
    from nitpicker_testing.runs import analyze_archive

    def run(archive: Path | str, *analyzers: str, settings: Any = None) -> Any:
        return analyze_archive(nitpicker_pm, nitpicker_config, archive, *analyzers, settings=settings)

    return run


@pytest.fixture
def nitpicker_query(nitpicker_pm: NitpickerPluginManager) -> Callable[..., Any]:
    """Run a registered query: ``nitpicker_query(archive, name, commit=None, **params)`` → its JSON data."""
    from nitpicker_testing.runs import run_named_query

    def run(archive: Path | str, name: str, commit: Any = None, **params: Any) -> Any:
        return run_named_query(nitpicker_pm, archive, name, commit, **params)

    return run


@pytest.fixture
def nitpicker_sheet(nitpicker_pm: NitpickerPluginManager) -> Callable[..., Any]:
    """Render one report sheet: ``nitpicker_sheet(archive, name, commit=None, options=None)`` → (columns, rows)."""
    from nitpicker_testing.runs import render_sheet

    def run(archive: Path | str, name: str, commit: Any = None, options: Any = None) -> Any:
        return render_sheet(nitpicker_pm, archive, name, commit, options)

    return run


@pytest.fixture
def nitpicker_viewer(nitpicker_pm: NitpickerPluginManager) -> Iterator[Callable[[Path | str], Any]]:
    """``nitpicker_viewer(archive)`` → a Flask test client of the viewer with every plugin's pages mounted."""
    import contextlib

    from nitpicker_testing.runs import viewer_client

    with contextlib.ExitStack() as stack:
        yield lambda archive: stack.enter_context(viewer_client(nitpicker_pm, archive))
