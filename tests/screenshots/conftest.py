"""One crawl of test_server's /shots/ pages with --screenshots (and one without) for every screenshot test."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, run_cli

# The viewer tests' Chromium, server and axe fixtures, used here as they are (not copied)
_spec = importlib.util.spec_from_file_location(
    "viewer_fixtures_for_screenshots", ROOT / "tests/viewer/conftest.py"
)
assert _spec is not None and _spec.loader is not None
_viewer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_viewer)
browser, axe_serious, serving, viewer_over = (
    _viewer.browser,
    _viewer.axe_serious,
    _viewer.serving,
    _viewer.viewer_over,
)


@pytest.fixture(scope="session")
def shots(site, tmp_path_factory) -> dict[str, Path]:
    """``with``: /shots/ crawled with --screenshots; ``without``: one of its pages crawled without the flag."""
    workdir = tmp_path_factory.mktemp("screenshots")
    archives = {"with": workdir / "with.nitpicker", "without": workdir / "without.nitpicker"}
    # the plain crawl runs meanwhile: two short crawls cost one
    plain = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nitpicker_cli.main",
            "crawl",
            "-o",
            str(archives["without"]),
            "--single",
            "--no-image",
            site + "/shots/twin-a",
        ],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    result = run_cli(
        "crawl", "--screenshots", "-o", str(archives["with"]), site + "/shots/", cwd=workdir, timeout=300
    )
    _, plain_err = plain.communicate(timeout=300)
    assert result.returncode == 0, result.stderr
    assert plain.returncode == 0, plain_err
    return archives
