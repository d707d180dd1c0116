"""Entry point of the ``nitpicker`` command: builds the click group from plugins and maps errors to exits."""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from nitpicker_core.plugins import NitpickerPluginManager

# The core, the plugins and the exit-code table are imported where used: `nitpicker --version` needs none
# of them (measured: 0.45 s of CPU with them, benchmarks/cli_start.py).

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


class PluginGroup(click.Group):
    """The ``nitpicker`` group: a command missing because its plugin is off says so."""

    why_missing: Callable[[str], str | None] | None = None
    missing_commands: Callable[[], list[tuple[str, str]]] | None = None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None and self.why_missing:
            why = self.why_missing(name)
            if why:
                ctx.fail(f"No such command {name!r}: {why}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_commands(ctx, formatter)
        missing = [
            (name, why)
            for name, why in (self.missing_commands() if self.missing_commands else [])
            if name not in self.commands
        ]
        if missing:
            with formatter.section("Commands not loaded"):
                formatter.write_dl(missing)


def build_cli(pm: NitpickerPluginManager) -> click.Group:
    from nitpicker_cli import exit_codes
    from nitpicker_cli.app import App
    from nitpicker_core import __version__

    @click.group(cls=PluginGroup, context_settings=CONTEXT, epilog=exit_codes.epilog())
    @click.version_option(__version__, "--version", prog_name="nitpicker")
    @click.option("-v", "--verbose", is_flag=True, help="Say more, and show tracebacks on errors.")
    @click.option("-s", "--silent", is_flag=True, help="Print nothing but results and errors.")
    @click.pass_context
    def cli(ctx: click.Context, verbose: bool, silent: bool) -> None:
        """Audit whole websites: crawl into a .nitpicker archive, analyze, query, view, report."""
        app = ctx.ensure_object(App)
        app.verbose, app.silent = verbose, silent
        logging.basicConfig(
            level=logging.DEBUG if verbose else logging.WARNING if not silent else logging.ERROR,
            format="%(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        ctx.call_on_close(app.close)
        ctx.default_map = app.command_defaults(ctx)  # the config file's [crawl], [analyze], … tables

    assert isinstance(cli, PluginGroup)
    cli.why_missing, cli.missing_commands = pm.why_missing, pm.missing_commands
    register_commands(pm, cli)
    return cli


def register_commands(pm: NitpickerPluginManager, cli: click.Group) -> None:
    """Each plugin's ``register_commands`` on its own, through pluggy: built-ins first, and a plugin that
    fails or replaces a command another plugin added is unavailable and leaves no command behind."""
    owners: dict[str, str] = {}
    before: dict[str, click.Command] = {}

    def arguments(plugin: str) -> dict[str, Any]:
        before.clear()
        before.update(cli.commands)
        return {"cli": cli, "pm": pm}

    def settle(plugin: str, ok: bool) -> None:
        taken = [name for name, command in before.items() if cli.commands.get(name) is not command]
        if ok and taken:
            pm.decline(plugin, f"command {taken[0]!r} is taken by {owners.get(taken[0], 'nitpicker')}")
        if not ok or taken:
            cli.commands = dict(before)
            return
        owners.update((name, plugin) for name in cli.commands if name not in before)

    pm.call_each("register_commands", arguments, settle)


def _sigterm_interrupts() -> None:
    """SIGTERM and SIGHUP end any command the way Ctrl-C does (cleanly, exit 130); commands may own them later.

    Their handler (and Ctrl-C's) is ``errors.interrupt``: KeyboardInterrupt, remembered, so a signal that
    aborted an SQLite statement is told from an error. A signal already ignored (SIGHUP under ``nohup``)
    stays ignored."""
    from nitpicker_core.errors import forget_signals, interrupt

    forget_signals()
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, interrupt)


def _version() -> str:
    """nitpicker's version as ``nitpicker_core.__version__`` has it, without importing the core."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nitpicker")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every error becomes one line on stderr and exit 1, unless ``--verbose``."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # what the version option prints, before any plugin is loaded
        click.echo(f"nitpicker, version {_version()}")
        return 0
    from nitpicker_cli.forkserver import start_early

    start_early(args)  # first: its imports run on another core while this process makes its own
    from nitpicker_core.errors import forget_signals

    _sigterm_interrupts()
    try:
        return _main(args)
    finally:
        forget_signals()  # a signal of this command aborts none of the next one's statements (tests run many)


def _main(args: list[str]) -> int:
    from nitpicker_cli.app import App
    from nitpicker_core.errors import NitpickerError, interrupted
    from nitpicker_core.plugins import make_plugin_manager

    verbose = "-v" in args or "--verbose" in args
    if verbose:  # before plugins load, so a failing plugin's traceback is shown (the group keeps this level)
        logging.basicConfig(
            level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
        )
    try:
        pm = make_plugin_manager()
        cli = build_cli(pm)
        if not {"-s", "--silent"} & set(args):
            for warning in pm.warnings:
                click.echo(f"nitpicker: warning: {warning}", err=True)
        result = cli.main(args, prog_name="nitpicker", standalone_mode=False, obj=App(pm))
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("nitpicker: aborted", err=True)
        return 130
    except click.ClickException as exc:
        message = exc.format_message()
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            message += f" (see `{exc.ctx.command_path} --help`)"
        click.echo(f"nitpicker: error: {message}", err=True)
        return 1
    except NitpickerError as exc:
        if interrupted():  # a signal's handler aborted an SQLite statement the error came from
            click.echo("nitpicker: interrupted", err=True)
            return 130
        if exc.exit_code == 0:  # an outcome that ends the command early but is no failure (nothing to resume)
            click.echo(f"nitpicker: {exc}", err=True)
            return 0
        if verbose:
            traceback.print_exc()
        click.echo(f"nitpicker: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("nitpicker: interrupted", err=True)
        return 130
    except Exception as exc:
        if verbose:
            traceback.print_exc()
        from nitpicker_core.errors import no_room

        if interrupted():  # a signal's handler aborted an SQLite statement (errors.let_signals_in)
            click.echo("nitpicker: interrupted", err=True)
            return 130
        why = no_room(exc)  # a full disk outside the archive writer (which names its archive itself)
        if why is not None:
            click.echo(f"nitpicker: error: {why} ({type(exc).__name__}: {exc})", err=True)
            return 1
        click.echo(
            f"nitpicker: internal error: {type(exc).__name__}: {exc} (run with --verbose for details)",
            err=True,
        )
        return 1


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
