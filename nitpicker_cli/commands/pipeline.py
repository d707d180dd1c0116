"""`nitpicker pipeline [URL]`: crawl → analyze (→ report) as stages of one run; no URL crawls the demo site."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_cli.commands.crawl import build_options, crawl_options, exit_code
from nitpicker_cli.options import plugin_setting_options, setting_flags
from nitpicker_core import NitpickerError, hookimpl


@contextlib.contextmanager
def demo_site() -> Iterator[str]:
    """Serve the bundled demo site (the test site) on 127.0.0.1 for the length of the run."""
    try:
        from test_server import serve
    except ImportError:
        raise NitpickerError("the demo site lives in the source tree: run `bin/nitpicker-run` from a checkout, "
                             "or give a URL") from None
    server, base = serve()
    try:
        yield f"{base}/recursive/"
    finally:
        server.shutdown()


@hookimpl
def register_commands(cli: click.Group, pm: Any) -> None:
    @cli.command("pipeline")
    @click.argument("url", required=False)
    @crawl_options
    @click.option("--plugin", "plugins", multiple=True, metavar="NAME", help="Analyzer to run (default: all).")
    @click.option("--no-analyze", is_flag=True, help="Stop after the crawl.")
    @plugin_setting_options(pm)
    def pipeline(url: str | None, plugins: tuple[str, ...], no_analyze: bool, **kw: Any) -> None:
        """Crawl URL (default: the bundled demo site), then run the analyzers over the new commit.

        Prints a JSON summary of both stages. The exit code is the crawl's (0, 1, or 2 when only
        external links failed).
        """
        from nitpicker_cli.progress import Progress
        from nitpicker_core.analyze import analyzer_registry, run_analyze
        from nitpicker_core.crawler.engine import Crawler
        from nitpicker_core.crawler.options import default_output

        app = get_app()
        app.adopt_verbosity(kw.pop("verbose_here"), kw.pop("silent_here"))
        config = app.config(setting_flags(kw, app.pm))
        with contextlib.ExitStack() as stack:
            target = url or stack.enter_context(demo_site())
            options, list_urls = build_options((target,), {**kw, "list_urls": (), "list_file": None})
            output = kw["output"] or default_output(target)
            app.info(f"pipeline: crawl {target} → {output}")
            progress = stack.enter_context(Progress(options.parallels, silent=app.silent))
            stats = asyncio.run(Crawler(app.pm, options, output, list_urls=list_urls, progress=progress.update).run())
        summary: dict[str, Any] = {"archive": str(output), "crawl": stats.as_dict(), "analyze": None}
        names = list(plugins) or analyzer_registry(app.pm).names()
        if no_analyze or stats.status != "complete":
            summary["analyze"] = {"skipped": "--no-analyze" if no_analyze else f"crawl {stats.status}"}
        elif not names:
            summary["analyze"] = {"skipped": "no analyzer is enabled (see `nitpicker plugins`)"}
        else:
            app.info(f"pipeline: analyze with {', '.join(names)}")
            summary["analyze"] = run_analyze(app.pm, config, output, names)
        emit_json(summary, pretty=True)
        sys.exit(exit_code(stats, options.strict))
