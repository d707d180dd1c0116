"""Bad archives through the real CLI: one line naming the problem, exit 1, nothing written or deleted."""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_testdata import snapshot
from support import run_cli
from test_files import _bad_inputs


@pytest.mark.parametrize(
    "command",
    [
        ("query", "{path}", "info"),
        ("log", "{path}"),
        ("analyze", "{path}", "--all", "--search-keywords", "x"),
    ],
)
def test_bad_archives_through_the_cli(tmp_path: Path, command: tuple[str, ...]) -> None:
    cases = _bad_inputs(tmp_path)
    user = tmp_path / "user"
    env = {"NITPICKER_TAR_CACHE_DIR": str(tmp_path / "cache")}
    for label, (path, message) in cases.items():
        before = snapshot(user)
        result = run_cli(*(part.format(path=path) for part in command), cwd=user, env=env)
        assert result.returncode == 1, label
        assert result.stderr.strip().splitlines() == [f"nitpicker: error: {message}"], label
        assert snapshot(user) == before, label
