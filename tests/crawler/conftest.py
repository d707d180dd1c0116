"""A live test_server for the crawler tests: ``site`` is the internal base URL, ``external`` the other host."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

# test_server is a package at the repo root that is never installed; make it importable from here
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from test_server import serve  # noqa: E402


@pytest.fixture(scope="session")
def live_server() -> Iterator[tuple[str, int]]:
    server, base_url = serve()
    yield base_url, server.server_port
    server.shutdown()


@pytest.fixture(scope="session")
def site(live_server: tuple[str, int]) -> str:
    return live_server[0]


@pytest.fixture(scope="session")
def external(live_server: tuple[str, int]) -> str:
    return f"http://127.0.0.1:{live_server[1]}"


@pytest.fixture
def counts(site: str):  # type: ignore[no-untyped-def]
    """Reset the server's request counters and return a reader of them."""
    requests.get(f"{site}/__counts/reset", timeout=5)

    def read(by_method: bool = False) -> dict[str, int]:
        return requests.get(f"{site}/__counts", params={"by": "method"} if by_method else {}, timeout=5).json()

    return read
