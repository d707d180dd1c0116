"""Fixtures for the archive tests: every test gets its own unpack cache."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tar-cache"
    monkeypatch.setenv("NITPICKER_TAR_CACHE_DIR", str(path))
    monkeypatch.delenv("NITPICKER_DISABLE_TAR_CACHE", raising=False)
    return path
