"""Build throwaway distributions (a dist-info directory plus a module) on a path, for entry-point tests."""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_dist(root: Path, dist: str, entry: str, module: str, source: str, version: str = "1.0") -> Path:
    """Write ``module.py`` and ``<dist>-<version>.dist-info`` with one ``nitpicker`` entry point into root."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[nitpicker]\n{entry} = {module}\n")
    return root
