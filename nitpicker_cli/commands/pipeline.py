"""`nitpicker pipeline URL`: crawl → analyze → report as stages of one run."""

from __future__ import annotations

import click

from nitpicker_core import NitpickerError, hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("pipeline")
    @click.argument("url", required=False)
    def pipeline(url: str | None) -> None:
        """Crawl URL (default: the bundled demo site), analyze the archive and report.

        The crawler stage has not landed yet, so this command refuses to run instead of pretending.
        """
        raise NitpickerError("the pipeline needs the crawler, which is not built yet (issue #3); "
                             "`nitpicker analyze` and `nitpicker query` work on existing archives")
