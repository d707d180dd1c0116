"""Commit indexing runs the checks of the plugin manager the command passes, never one a process kept
(a process with two managers used the one built last before indexing was a service of its own)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nitpicker_core import Check, Finding, hookimpl
from nitpicker_core.archive import open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_testing.archives import build_archive, page

SITE = "https://index.test"


class ExtraChecks:
    @hookimpl
    def register_checks(self, register):
        register(
            Check(
                "extra-every-page",
                "Every page",
                "content",
                "info",
                "Lists every page.",
                "",
                findings=lambda ctx: (Finding(p["url"]) for p in ctx.reader.pages(ctx.commit)),
            )
        )


def _stored(target: Path, commit: int) -> set[str]:
    with open_archive(target) as reader:
        rows = reader.execute(
            "SELECT n.check_id FROM check_result c JOIN finding_name n ON n.id = c.check_no WHERE c.commit_id = ?",
            [commit],
        )
    return {r[0] for r in rows}


def test_a_commit_is_indexed_with_the_plugins_of_the_command_that_made_it(tmp_path: Path) -> None:
    extra = make_plugin_manager()
    extra.register(ExtraChecks(), name="extra-checks")
    make_plugin_manager()  # a second manager, built last: the process-global of old would have used it
    pages = [page(SITE + "/", title="Home", links=["/a"]), page(SITE + "/a", title="A")]
    with_extra = _stored(build_archive(tmp_path / "with.nitpicker", pages, pm=extra), 1)
    plain = _stored(build_archive(tmp_path / "without.nitpicker", pages), 1)  # its own, default manager
    assert plain and "extra-every-page" not in plain  # the built-in checks only
    assert with_extra == plain | {"extra-every-page"}


def test_the_archive_never_loads_the_plugin_system_to_store() -> None:
    code = (
        "import sys, nitpicker_core.archive.reader, nitpicker_core.archive.writer;"
        "print(sorted(m for m in sys.modules if m.startswith('nitpicker_core.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = done.stdout
    for upper in ("nitpicker_core.plugins", "nitpicker_core.indexing", "nitpicker_core.config"):
        assert f"'{upper}'" not in loaded
