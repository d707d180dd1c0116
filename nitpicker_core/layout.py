"""Where an archive lives on disk: the ``.nitpicker`` file and the working directory (stub) beside it.

A leaf module (no imports of nitpicker's own): the crawler, the viewer and the MCP tools find a live
crawl's stub through it without loading the storage engine.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STUB_SUFFIX", "stub_path"]

#: the working directory of ``site.nitpicker`` is ``site.nitpicker.stub``: the writer's database and lock
STUB_SUFFIX = ".stub"


def stub_path(target: Path) -> Path:
    """The working directory (stub) of the archive file ``target``."""
    return target.with_name(target.name + STUB_SUFFIX)
