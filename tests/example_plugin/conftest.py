"""Test this directory's source of the plugin (installed or not) with nitpicker's fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def nitpicker_plugins():
    import nitpicker_example

    return {"word-count": nitpicker_example}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # nitpicker's own suite runs this project's tests as a project of their own, in a subprocess
    # (tests/test_example_plugin.py), so they are collected only when pytest runs here
    return True if config.rootpath != HERE else None
