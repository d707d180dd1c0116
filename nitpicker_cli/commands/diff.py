"""`nitpicker diff`: what changed between two commits of an archive, or between the HEADs of two archives."""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any

import click

from nitpicker_cli.app import emit_json, get_app
from nitpicker_core import UsageError, hookimpl
from nitpicker_core.archive import open_archive, pagediff

_COMMIT = re.compile(r"(?i)head|\d+")


@hookimpl
def register_commands(cli: click.Group) -> None:
    @cli.command("diff")
    @click.argument("archive", type=click.Path(path_type=str))
    @click.argument("base", required=False)
    @click.argument("commit", required=False)
    @click.option(
        "--url", help="What changed in this page: fields old and new, links, images… added and removed."
    )
    @click.option(
        "--html",
        "html_url",
        metavar="URL",
        help="Print a unified diff of this page's rendered HTML, normalised (see [diff] in the config).",
    )
    @click.option(
        "--explain",
        type=click.IntRange(min=0),
        default=100,
        show_default=True,
        help="How many modified pages get their changes explained.",
    )
    def diff(
        archive: str,
        base: str | None,
        commit: str | None,
        url: str | None,
        html_url: str | None,
        explain: int,
    ) -> None:
        """Pages and resources added, removed and modified from commit BASE (default: COMMIT's parent) to
        COMMIT (default: HEAD) as JSON, with what changed in each modified page.

        With two archives, `nitpicker diff OLD.nitpicker NEW.nitpicker` compares their HEADs by URL.
        """
        if url and html_url:
            raise UsageError("give --url or --html, not both")
        config = get_app().config()
        other = base if base is not None and not _COMMIT.fullmatch(base) else None
        if other is not None and commit is not None:
            raise UsageError("give two commits of one archive, or two archives, not both")
        with contextlib.ExitStack() as stack:
            reader = stack.enter_context(open_archive(archive))
            if other is not None:
                old = pagediff.side(reader)
                new = pagediff.side(stack.enter_context(open_archive(other)))
            else:
                new = pagediff.side(reader, commit)
                found = pagediff.side(reader, base) if base is not None else pagediff.parent_side(new)
                if found is None:
                    raise UsageError(f"commit {new.commit} has no parent; give the commit to compare with")
                old = found
            if html_url:
                table = config.diff
                compiled = pagediff.patterns(table["normalize"], table["builtin_normalize"])
                sys.stdout.write(pagediff.html_diff(old, new, html_url, compiled))
                return
            result: dict[str, Any] = {
                "old": old.label,
                "new": new.label,
                "base": old.commit,
                "commit": new.commit,
            }
            if url:
                result.update(pagediff.page_diff(old, new, url))
            else:
                changes = pagediff.compare(old, new)
                result.update(
                    changes,
                    changes=pagediff.explain(old, new, (changes["gone"] + changes["modified"])[:explain]),
                )
        emit_json(result, pretty=True)
