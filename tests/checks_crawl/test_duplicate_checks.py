"""Duplicate and thin content: exact findings and similarities on a real crawl of /duplicates-site/."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from archive.archive_testdata import _rewrite
from checks_crawl.test_crawl_checks import _crawl, _findings
from support import run_cli

from nitpicker_core import CheckContext, read
from nitpicker_core.archive import findings_store, open_archive
from nitpicker_core.plugins import make_plugin_manager
from nitpicker_core.query import run_query
from nitpicker_core.registries import check_registry, query_registry
from nitpicker_testing.runs import configured
from nitpicker_viewer.app import create_app
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
# The pages list's content columns, per page: main-content words, exact duplicates and the group's first URL,
# near duplicates, the closest one and its similarity (193 / 203 shingles = 95.0738... %, rounded down)
FACTS: dict[str, tuple[Any, ...]] = {
    f"{D}/": (9, 0, None, 0, None, None),  # its links' texts: a, a copy, a near, a far, b, thin
    f"{D}/a": (200, 1, f"{D}/a", 1, f"{D}/a-near", 95.07),
    f"{D}/a-copy": (200, 1, f"{D}/a", 1, f"{D}/a-near", 95.07),
    f"{D}/a-near": (200, 0, None, 2, f"{D}/a", 95.07),  # /a and /a-copy, equally close: the first
    f"{D}/a-far": (200, 0, None, 0, None, None),
    f"{D}/b": (200, 0, None, 0, None, None),
    f"{D}/thin": (12, 0, None, 0, None, None),
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


def _pages(archive: Path, origin: str, **params: Any) -> dict[str, dict[str, Any]]:
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        found = run_query(registry, reader, "pages", {"url": f"{origin}{D}/", "limit": 100, **params})
    return {row["url"].replace(origin, ""): row for row in found["items"]}


def _facts(row: dict[str, Any], origin: str) -> tuple[Any, ...]:
    return tuple(
        row[c].replace(origin, "") if isinstance(row[c], str) else row[c] for c in read.PAGE_CONTENT_COLUMNS
    )


def test_the_pages_list_has_each_pages_content_columns(site: str, archive: Path) -> None:
    assert NEAR == 95 and int(similarity(5) * 10_000) / 100 == 95.07
    rows = _pages(archive, site)
    assert {url: _facts(row, site) for url, row in rows.items()} == FACTS
    # bounded and sorted like the other numeric columns
    near = _pages(archive, site, min_near_duplicates=1, sort="near_duplicates", order="desc")
    assert list(near) == [f"{D}/a-near", f"{D}/a", f"{D}/a-copy"]
    assert list(_pages(archive, site, max_main_words=12)) == [f"{D}/", f"{D}/thin"]
    assert list(_pages(archive, site, min_exact_duplicates=1, min_near_similarity=95.07)) == [
        f"{D}/a",
        f"{D}/a-copy",
    ]


def test_the_columns_say_what_the_findings_say(site: str, archive: Path) -> None:
    rows = _pages(archive, site)
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:

        def urls(check: str) -> set[tuple[str, str]]:
            found = run_query(registry, reader, "issue-urls", {"check": check, "limit": 100})["items"]
            return {(i["url"].replace(site, ""), i["detail"].replace(site, "")) for i in found}

        exact, near, low = (
            urls(c) for c in ("content-exact-duplicate", "content-near-duplicate", "content-low")
        )
    assert near == {
        (u, r["closest_near_duplicate"].replace(site, "")) for u, r in rows.items() if r["near_duplicates"]
    }
    assert {u for u, _ in exact} == {u for u, r in rows.items() if r["exact_duplicates"]}
    assert low == {(u, "") for u, r in rows.items() if r["main_words"] < 200}  # the default low_content_words


def test_the_sheets_and_the_viewer_read_the_same_columns(site: str, archive: Path) -> None:
    registry = query_registry(make_plugin_manager())
    with open_archive(archive) as reader:
        sheet = run_query(registry, reader, "report-pages", {"scope": "targets", "limit": 100})["items"]
    assert {r["url"].replace(site, ""): _facts(r, site) for r in sheet if D in r["url"]} == FACTS
    app = create_app(archive, make_plugin_manager())
    try:
        html = app.test_client().get("/pages?set=content&min_near_duplicates=1").get_data(as_text=True)
        every = app.test_client().get("/pages?set=content").get_data(as_text=True)
    finally:
        app.config["NITPICKER_CLOSE"]()
    assert 'aria-current="page">Content</a>' in html and "Closest near duplicate" in html
    assert html.count('<td class="k-num">95.07</td>') == 3 and f"{site}{D}/a-far" not in html
    assert f"{site}{D}/a-far" in every


def test_an_archive_or_commit_without_the_facts_shows_empty_columns(
    site: str, archive: Path, tmp_path: Path
) -> None:
    def emptied(change: str) -> dict[str, tuple[Any, ...]]:
        copy = tmp_path / f"{len(list(tmp_path.iterdir()))}.nitpicker"
        shutil.copy(archive, copy)

        def run(conn: sqlite3.Connection) -> None:
            conn.executescript(change)

        _rewrite(copy, run)
        return {url: _facts(row, site) for url, row in _pages(copy, site).items()}

    empty = dict.fromkeys(FACTS, (None,) * len(read.PAGE_CONTENT_COLUMNS))
    # an archive written before the facts were stored; a commit without its row; a commit finished again
    assert emptied("DROP TABLE fact_commit; DROP TABLE fact_set; DROP TABLE set_page_fact;") == empty
    assert emptied("DELETE FROM fact_commit;") == empty
    assert emptied("UPDATE commits SET finished_at = finished_at || 'later';") == empty
    assert emptied("SELECT 1;") == FACTS  # the copy itself still has them
