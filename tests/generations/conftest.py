"""Fixtures of the generation tests: a fresh /generations/<site>/ per test and its request counts."""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

import pytest


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


class GenerationsSite:
    """One independent /generations/<name>/ site: its root URL, page changes and request counts."""

    def __init__(self, base: str, kind: str = "") -> None:
        self.name = (
            kind + uuid.uuid4().hex[:10]
        )  # "ignores-", "lastmod-": see test_server/routes/generations.py
        self.root = f"{base}/generations/{self.name}/"

    def url(self, page: str) -> str:
        return self.root + page

    def change(self, page: str) -> int:
        return int(_get_json(self.root + f"__change/{page}")["version"])

    def hits(self) -> dict[str, dict[str, int]]:
        return _get_json(self.root + "__hits")


@pytest.fixture
def gsite(site: str) -> GenerationsSite:
    return GenerationsSite(site)


@pytest.fixture
def make_gsite(site: str) -> Callable[[str], GenerationsSite]:
    """A fresh site of a kind: "ignores-" (validators never honoured) or "lastmod-" (no ETag)."""
    return lambda kind: GenerationsSite(site, kind)


@pytest.fixture
def recrawl(tmp_path, cli) -> Callable[..., Any]:
    """Crawl a root into tmp_path/gen.nitpicker (first call), then --update it (later calls)."""
    archive = tmp_path / "gen.nitpicker"

    def run(root: str, *flags: str) -> Any:
        where = ["--update", str(archive)] if archive.exists() else ["-o", str(archive), root]
        result = cli("crawl", "--parallels", "2", "--no-image", *flags, *where, cwd=tmp_path, timeout=300)
        assert result.returncode == 0, result.stderr
        run.stderr = result.stderr  # type: ignore[attr-defined]
        return archive

    return run
