"""`nitpicker diff ARCHIVE [A] [B]`: what changed between two commits (default: HEAD's parent and HEAD)."""

from __future__ import annotations

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import UsageError, hookimpl
from nitpicker_core.archive import open_archive


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("diff")
    @click.argument("archive", type=click.Path(path_type=str))
    @click.argument("base", required=False)
    @click.argument("commit", required=False)
    @click.option("--url", help="Show which fields of this page changed, old and new values.")
    def diff(archive: str, base: str | None, commit: str | None, url: str | None) -> None:
        """Pages and resources added, removed and modified from commit BASE to COMMIT, as JSON."""
        get_app().config()
        with open_archive(archive) as reader:
            new = reader.resolve(commit)
            if base is None:
                parent = next((c["parent_id"] for c in reader.commits() if c["id"] == new), None)
                if parent is None:
                    raise UsageError(f"commit {new} has no parent; give the commit to compare with")
                old = parent
            else:
                old = reader.resolve(base)
            result = {"base": old, "commit": new, **reader.diff(old, new)}
            if url:
                result = {"base": old, "commit": new, "url": url, "fields": reader.changed_fields(url, old, new)}
        emit_json(result, pretty=True)
