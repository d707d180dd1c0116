"""Crawler test fixtures: ``external`` is the test site under its other host name (``site`` is shared)."""

from __future__ import annotations

import pytest
import requests


@pytest.fixture(scope="session")
def external(site: str) -> str:
    return site.replace("localhost", "127.0.0.1")


@pytest.fixture
def counts(site: str):  # type: ignore[no-untyped-def]
    """Reset the server's request counters and return a reader of them."""
    requests.get(f"{site}/__counts/reset", timeout=5)

    def read(by_method: bool = False) -> dict[str, int]:
        return requests.get(
            f"{site}/__counts", params={"by": "method"} if by_method else {}, timeout=5
        ).json()

    return read
