"""`nitpicker dashboard [DIR…]`: watch pipeline runs (their journals) in the browser, live."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nitpicker_cli.app import get_app
from nitpicker_cli.options import FiniteFloatRange
from nitpicker_core import UsageError, hookimpl
from nitpicker_core.pipeline.state import STALE_AFTER, STALL_AFTER

if TYPE_CHECKING:
    from nitpicker_core import NitpickerPluginManager


def start_dashboard(
    directories: list[Path],
    host: str,
    port: int,
    stale_after: float = STALE_AFTER,
    stall_after: float = STALL_AFTER,
) -> tuple[Any, str]:
    """Serve the dashboard over ``directories`` in a daemon thread; returns the server and its URL.

    A host this machine cannot listen on is a UsageError (one line), not a traceback.
    """
    from nitpicker_dashboard import create_app, free_port, serve_in_thread

    app = create_app(directories, stale_after=stale_after, stall_after=stall_after, host=host)
    try:
        bound = free_port(host, port)
        server = serve_in_thread(app, host, bound)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror or exc}") from None
    shown = f"[{host}]" if ":" in host else host
    return server, f"http://{shown}:{server.server_port}/"


@hookimpl
def register_commands(cli: click.Group, pm: NitpickerPluginManager) -> None:
    @cli.command("dashboard")
    @click.argument("directories", nargs=-1, type=click.Path(path_type=Path))
    @click.option(
        "--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default)."
    )
    @click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=8766,
        show_default=True,
        help="Preferred port; the next free one is used when it is taken (0: any).",
    )
    @click.option(
        "--stale-after",
        type=FiniteFloatRange(1),
        default=STALE_AFTER,
        show_default=True,
        help="Seconds without a journal event after which a running run shows as hung.",
    )
    @click.option(
        "--stall-after",
        type=FiniteFloatRange(1),
        default=STALL_AFTER,
        show_default=True,
        help="Seconds a running stage's counts may stand still, heartbeats or not, before the run "
        "shows as hung.",
    )
    @click.option("--no-open", is_flag=True, help="Do not open a browser.")
    def dashboard(
        directories: tuple[Path, ...],
        host: str,
        port: int,
        stale_after: float,
        stall_after: float,
        no_open: bool,
    ) -> None:
        """Show every pipeline run journaled in DIR (default: the working directory), live.

        Journals are found directly in each DIR and in its `*.nitpicker.runs/` directories. The page
        polls one snapshot endpoint, `/api/snapshot`. Ctrl-C stops the server.
        """
        import threading
        import webbrowser

        from nitpicker_viewer.guard import is_loopback

        app = get_app()
        app.config()
        if not is_loopback(host):
            app.warn(f"binding {host}: anyone who can reach this address can watch the pipeline runs")
        dirs = list(directories) or [Path(".")]
        for d in dirs:
            if not d.is_dir():
                raise UsageError(f"not a directory: {d.name or d}")
        server, url = start_dashboard(dirs, host, port, stale_after, stall_after)
        click.echo(f"dashboard: {url} (Ctrl-C to stop)", err=True)
        if not no_open:
            webbrowser.open(url)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
