"""One crawl pair of /change-named/ (version 1, then `crawl --update` of version 2), shared by the tests that
check an update names what changed."""

from __future__ import annotations

import urllib.request
import uuid
from pathlib import Path

import pytest
from support import run_cli


@pytest.fixture(scope="session")
def change_pair(site: str, tmp_path_factory) -> dict:
    """``archive`` (commit 1: version 1, commit 2: version 2 by --update), ``root``, ``workdir`` and the
    update's stdout (its summary as JSON)."""
    workdir = Path(tmp_path_factory.mktemp("change-named"))
    root = f"{site}/change-named/{uuid.uuid4().hex[:10]}/"
    archive = workdir / "change.nitpicker"
    first = run_cli(
        "crawl", "--parallels", "2", "--no-image", "-o", str(archive), root, cwd=workdir, timeout=300
    )
    assert first.returncode in (0, 1), first.stderr  # 1: the broken links are internal errors
    with urllib.request.urlopen(root + "__next", timeout=30) as response:
        assert response.status == 200
    second = run_cli(
        "crawl", "--parallels", "2", "--no-image", "--update", str(archive), cwd=workdir, timeout=300
    )
    assert second.returncode in (0, 1), second.stderr
    return {"archive": archive, "root": root, "workdir": workdir, "update": second.stdout}
