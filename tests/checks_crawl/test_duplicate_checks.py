"""Duplicate and thin content: exact findings and similarities on a real crawl of /duplicates-site/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks_crawl.test_crawl_checks import _crawl, _findings
from support import run_cli

from nitpicker_core import CheckContext
from nitpicker_core.archive import findings_store, open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.runs import configured
from test_server.routes.duplicates_site import similarity

D = "/duplicates-site"
NEAR = int(similarity(5) * 100)  # /a-near: 5 of 200 words changed
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "content-exact-duplicate": {(f"{D}/a", f"{D}/a-copy"), (f"{D}/a-copy", f"{D}/a")},
    "content-near-duplicate": {
        (f"{D}/a", f"{D}/a-near"),
        (f"{D}/a-copy", f"{D}/a-near"),
        # as like /a as /a-copy: the first URL is the closest
        (f"{D}/a-near", f"{D}/a"),
    },
    # the details stay put across edits (no similarity, no word count): an unchanged finding is not new
    "content-low": {(f"{D}/", ""), (f"{D}/thin", "")},
}


@pytest.fixture(scope="module")
def archive(site: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("duplicates-crawl")
    _crawl(workdir, "-o", str(workdir / "dupes.nitpicker"), f"{site}/duplicates-site/")
    return workdir / "dupes.nitpicker"


def _with(archive: Path, origin: str, settings: dict[str, object]) -> dict[str, set[tuple[str, str]]]:
    pm = make_plugin_manager()
    registry = check_registry(pm)
    with open_archive(archive) as reader:
        ctx = CheckContext(
            reader, reader.resolve(None), query_registry(pm), configured(pm, {"checks": settings})
        )
        return {
            name: {
                (f.url.replace(origin, ""), f.detail.replace(origin, ""))
                for f in registry[name].findings(ctx)  # type: ignore[misc]
            }
            for name in EXPECTED
        }


def test_the_similarity_of_the_near_copy_is_the_arithmetic_one() -> None:
    assert NEAR == 95 and int(similarity(50) * 100) == 59


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_each_check_finds_exactly_the_duplicates_of_the_site(site: str, archive: Path, check_id: str) -> None:
    assert _findings(archive, site)[check_id] == EXPECTED[check_id]


def test_the_findings_are_stored_with_the_commit(site: str, archive: Path) -> None:
    with open_archive(archive) as reader:
        stored = findings_store.Stored(reader)
        commit = reader.resolve(None)
        for check_id, expected in EXPECTED.items():
            found = {
                (f.url.replace(site, ""), f.detail.replace(site, ""))
                for f in stored.findings(commit, check_id)
            }
            assert found == expected, check_id


def test_the_settings_move_the_lines(site: str, archive: Path) -> None:
    # above the near copy's similarity: none; low enough to take in /a-far (59 %): every /a page is near
    assert _with(archive, site, {"duplicate_similarity": NEAR + 1})["content-near-duplicate"] == set()
    loose = _with(archive, site, {"duplicate_similarity": 55})["content-near-duplicate"]
    assert {url for url, _ in loose} == {f"{D}/a", f"{D}/a-copy", f"{D}/a-near", f"{D}/a-far"}
    assert (f"{D}/a-far", f"{D}/a-near") in loose  # 151 / 245 shingles: 61 %
    # every article has 200 words: at 201 they are low too, at 0 nothing is
    low = _with(archive, site, {"low_content_words": 201})["content-low"]
    assert {url for url, _ in low} == {
        f"{D}/",
        f"{D}/thin",
        *(f"{D}/{p}" for p in ("a", "a-copy", "a-near", "a-far", "b")),
    }
    assert _with(archive, site, {"low_content_words": 0})["content-low"] == set()


def test_the_flags_reach_the_checks_and_a_bad_value_is_the_checks_error(archive: Path) -> None:
    def counts(*flags: str) -> dict[str, int]:
        result = run_cli("issues", "--json", *flags, str(archive), cwd=archive.parent)
        assert result.returncode == 0, result.stderr
        return {item["id"]: item["findings"] for item in json.loads(result.stdout)["items"]}

    assert counts()["content-near-duplicate"] == 3
    assert counts("--checks-duplicate-similarity", "96").get("content-near-duplicate", 0) == 0
    assert counts("--checks-low-content-words", "10")["content-low"] == 1
    # a value out of range is the check's error, in one line, the other checks unharmed (as --checks-max-depth)
    bad = run_cli("issues", "--json", "--checks-duplicate-similarity", "0", str(archive), cwd=archive.parent)
    items = {item["id"]: item for item in json.loads(bad.stdout)["items"]}
    assert items["content-near-duplicate"]["error"] == (
        "UsageError: plugins.checks.duplicate_similarity (--checks-duplicate-similarity) must be 1 to 100, got 0"
    )
    assert (
        items["content-exact-duplicate"]["findings"] == 2
        and items["content-exact-duplicate"]["error"] is None
    )
