"""One real Dask cluster for the tests of this directory: 2 single-threaded worker processes on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from nitpicker_core.executors import dask_client, parse_executor


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """A connected ``distributed.Client``; ``--executor dask://`` + its address reaches the same cluster."""
    with dask_client(parse_executor("dask-local:2")) as client:
        yield client
