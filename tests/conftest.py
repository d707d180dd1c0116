"""Shared fixtures. Installed third-party plugins never autoload here: only the built-ins are allowed."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from support import BUILTIN_PLUGINS, run_cli

# Property tests run on loaded machines: a slow example is not a failure, only a wrong one is
settings.register_profile("loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded")

# Set at import time so subprocesses (the CLI, analyzer workers) inherit the same allow list.
os.environ["NITPICKER_LOAD_PLUGINS"] = ",".join(BUILTIN_PLUGINS)
os.environ.pop("NITPICKER_DISABLE_PLUGINS", None)
# Chromium resolves nothing but loopback in tests (recipes §1): no stray DNS traffic from the browser.
os.environ.setdefault(
    "NITPICKER_BROWSER_ARGS", "--host-resolver-rules='MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost'"
)


@pytest.fixture(scope="session")
def site():
    """The test site on 127.0.0.1: ``http://localhost:PORT`` is internal, ``http://127.0.0.1:PORT`` external."""
    from test_server import serve

    server, base = serve()
    yield base
    server.shutdown()


@pytest.fixture
def pm():
    """A fresh plugin manager with the built-in plugins and nothing else."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager()


@pytest.fixture
def bare_pm():
    """A plugin manager with the hookspecs and no plugins at all."""
    from nitpicker_core.plugins import make_plugin_manager

    return make_plugin_manager(load=False)


@pytest.fixture
def cli():
    return run_cli


# The longest modules first (measured: module totals of a whole run's --durations). bin/test runs xdist with
# --dist loadfile --no-loadscope-reorder, so workers take whole modules in this order; a long module taken
# last would keep one worker busy after the others have finished.
LONG_FIRST = (
    "tests/e2e/test_crawl_rules.py",
    "tests/e2e/test_crawl_edges.py",
    "tests/dask/test_dask_analyze.py",
    "tests/dask/test_dask_crawl.py",
    "tests/e2e/test_crawl_control.py",
    "tests/pipeline/test_pipeline_cli.py",
    "tests/e2e/test_crawl_statuses.py",
    "tests/viewer/test_viewer_browser.py",
    "tests/queries/test_pages.py",
    "tests/e2e/test_crawl_stop.py",
    "tests/analyze/test_analyze_engine.py",
    "tests/demo/test_demo_installed.py",
    "tests/cli_ux/test_config_file.py",
    "tests/e2e/test_crawl_limits.py",
    "tests/security/test_security_servers.py",
    "tests/queries/test_findings.py",
    "tests/screenshots/test_screenshots_crawl.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONG_FIRST)))  # stable: order within
