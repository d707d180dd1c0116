"""`nitpicker gc ARCHIVE`: drop old commits and everything no remaining commit reaches; print what went."""

from __future__ import annotations

from pathlib import Path

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import UsageError, hookimpl
from nitpicker_core.archive import ArchiveWriter, open_archive
from nitpicker_core.archive.prune import Pruned, plan_drop

_LABELS = (
    ("commits", "commits"),
    ("commit_rows", "rows of those commits"),
    ("page_states", "page states"),
    ("resource_states", "resource states"),
    ("blobs", "blobs"),
    ("analysis_cache", "cached analyzer results"),
)


def summary(result: Pruned, size_before: int, size_after: int | None) -> str:
    """One line: the commits dropped, what was removed, the bytes freed."""
    verb = "would remove" if result.dry_run else "removed"
    parts = [f"{result.removed.get(key, 0)} {label}" for key, label in _LABELS]
    dropped = ", ".join(map(str, result.dropped)) or "none"
    if size_after is None:
        freed = f"about {result.bytes_freed} bytes would be freed ({size_before} bytes now)"
    else:
        freed = f"freed {size_before - size_after} bytes ({size_before} → {size_after})"
    moved = "".join(
        f"; commit {c} now follows {p if p is not None else 'nothing'}"
        for c, p in sorted(result.reparented.items())
    )
    return f"dropped commits: {dropped}{moved}; {verb} {', '.join(parts)}; {freed}"


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("gc")
    @click.argument("archive", type=click.Path(path_type=str))
    @click.option(
        "--keep", type=int, metavar="N", help="Keep the N newest complete commits, drop older ones."
    )
    @click.option("--drop", "drop", multiple=True, metavar="COMMIT", help="Drop this commit (repeatable).")
    @click.option("--dry-run", is_flag=True, help="Say what would be removed; change nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON instead of one line.")
    def gc(archive: str, keep: int | None, drop: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
        """Drop commits of ARCHIVE (their children are re-parented), then every page state, resource, blob,
        aggregate and cached analyzer result no remaining commit reaches. Without --keep or --drop, only
        the unreachable content goes. Refuses while a crawl writes the archive.
        """
        get_app().config()
        if keep is not None and drop:
            raise UsageError("give --keep or --drop, not both")
        path = Path(archive)
        with open_archive(path) as reader:  # a missing file or a non-archive fails here, read-only
            name = path.name
            ids = plan_drop(reader.commits(), reader.head(), keep=keep, drop=drop, name=name)
        size_before = path.stat().st_size if path.is_file() else 0
        with ArchiveWriter.open(path) as writer:
            # a writer killed before its file was written (an earlier gc, a crawl) left work: open() wrote it
            recovered = writer.recovered
            result = writer.drop_commits(ids, dry_run=dry_run)
            changed = not dry_run and any(result.removed.values())
            if changed:
                writer.vacuum()
                writer.write()
        size_after = None if dry_run else path.stat().st_size if changed or recovered else size_before
        if as_json:
            emit_json(
                {
                    "dropped": result.dropped,
                    "reparented": {str(c): p for c, p in result.reparented.items()},
                    "removed": result.removed,
                    "dry_run": dry_run,
                    "recovered": recovered,
                    "bytes_before": size_before,
                    "bytes_after": size_after,
                    "bytes_freed": result.bytes_freed if size_after is None else size_before - size_after,
                },
                pretty=True,
            )
            return
        if recovered:
            click.echo("finished writing what an interrupted command had left in the working directory")
        click.echo(summary(result, size_before, size_after))
