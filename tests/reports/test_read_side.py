"""/read-side/ crawled with --no-fetch-external: what the summary, the queries and the sheets count (issue 12)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support import run_cli


@pytest.fixture(scope="module")
def read_side(site, tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("read-side")
    archive = workdir / "site.nitpicker"
    result = run_cli(
        "crawl",
        "-o",
        str(archive),
        site + "/read-side/",
        site + "/read-side/orphan.html",
        "--no-fetch-external",
        "--parallels",
        "2",
        cwd=workdir,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return archive


def query(archive: Path, name: str, *params: str) -> dict:
    result = run_cli("query", str(archive), name, *params)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def sheets(read_side, tmp_path_factory) -> dict[str, list[dict[str, str]]]:
    out = tmp_path_factory.mktemp("read-side-csv")
    result = run_cli("report", str(read_side), "--csv", str(out), "--all", cwd=out)
    assert result.returncode == 0, result.stderr
    found = {}
    for name in ("page-list", "links", "summary"):
        with (out / f"{name}.csv").open(encoding="utf-8-sig", newline="") as handle:
            found[name] = list(csv.DictReader(handle))
    return found


def test_unfetched_external_urls_are_not_checked_never_failed(read_side, site):
    status = query(read_side, "summary")["status"]
    assert (status["failed"], status["failed_by_kind"], status["not_checked"]) == (0, [], 3)
    assert (
        sum(c["count"] for c in status["by_code"])
        + status["redirect_hops"]
        + status["skipped"]
        + status["failed"]
        + status["not_checked"]
        == status["total"]
        == 9
    )
    assert query(read_side, "error-kinds")["total"] == 0
    external = query(read_side, "external-links")["items"]
    assert len(external) == 3 and {e["outcome"] for e in external} == {"not_checked"}
    unchecked = query(read_side, "pages", "--outcome", "not_checked")
    assert unchecked["total"] == 3 and all(
        p["is_external"] and p["error_kind"] is None for p in unchecked["items"]
    )
    assert query(read_side, "pages", "--outcome", "failed")["total"] == 0


def test_sheets_never_count_unfetched_targets_as_bad(sheets, site):
    pages = {r["URL"]: r for r in sheets["page-list"]}
    home, doc_a = pages[site + "/read-side/"], pages[site + "/read-side/docs/a.html"]
    assert (home["External Links"], home["External Bad Links"]) == ("3", "0")
    assert (doc_a["External Links"], doc_a["External Bad Links"]) == ("1", "0")
    assert all(r["External Bad Links"] == "0" for r in sheets["page-list"])
    # the internal 404s stay bad: /read-side/ → docs/gone.html#section; a.html → gone ×2 and missing
    assert (home["Internal Bad Links"], doc_a["Internal Bad Links"]) == ("1", "3")
    summary = {(r["Section"], r["Item"]): r["Value"] for r in sheets["summary"]}
    assert summary[("Status", "failed")] == "0" and summary[("Status", "not checked")] == "3"


def test_self_links_are_not_referrers(read_side, sheets, site):
    pages = {r["URL"]: r for r in sheets["page-list"]}
    # home: linked from a.html and b.html (../), itself through #top and ./
    assert (pages[site + "/read-side/"]["Internal Referrers"], pages[site + "/read-side/"]["Self Links"]) == (
        "2",
        "2",
    )
    # a.html: from home and b.html; #a1, #a2 and a.html#a3 are its own
    assert (
        pages[site + "/read-side/docs/a.html"]["Internal Referrers"],
        pages[site + "/read-side/docs/a.html"]["Self Links"],
    ) == ("2", "3")
    # the orphan links only to itself: no referrer at all, so the sheet's "< 2" highlight catches it
    assert (
        pages[site + "/read-side/orphan.html"]["Internal Referrers"],
        pages[site + "/read-side/orphan.html"]["Self Links"],
    ) == ("0", "3")
    links = {r["URL"]: r for r in sheets["links"]}
    assert (
        links[site + "/read-side/orphan.html"]["Referrers"],
        links[site + "/read-side/orphan.html"]["Self Links"],
    ) == ("0", "3")
    detail = query(read_side, "page-detail", "--url", site + "/read-side/docs/a.html")["inbound"]
    assert [i["source"] for i in detail["items"]] == [site + "/read-side/", site + "/read-side/docs/b.html"]
    assert (detail["total"], detail["self_links"]) == (2, 3)
    isolated = {i["url"]: i["root"] for i in query(read_side, "isolated-pages")["items"]}
    assert isolated == {site + "/read-side/orphan.html": True}


def test_broken_links_grouped_by_target_source_and_anchor(read_side, site):
    gone, missing = site + "/read-side/docs/gone.html", site + "/read-side/docs/missing.html"
    home, doc_a, doc_b = (
        site + p for p in ("/read-side/", "/read-side/docs/a.html", "/read-side/docs/b.html")
    )
    by_target = query(read_side, "broken-links")
    assert by_target["group"] == "target" and by_target["total"] == 2
    first = by_target["items"][0]
    assert (first["url"], first["status"], first["pages"], first["anchors"]) == (gone, 404, 3, 4)
    assert first["sources"] == [home, doc_a, doc_b]
    # the href exactly as each page wrote it, relative and with its fragment, at its line and column
    assert [(link["source"], link["href"]) for link in first["links"]] == [
        (home, "docs/gone.html#section"),
        (doc_a, "gone.html#intro"),
        (doc_a, "gone.html#other"),
        (doc_b, "gone.html"),
    ]
    assert all(link["line"] >= 1 and link["col"] >= 1 for link in first["links"])
    assert by_target["items"][1]["url"] == missing and by_target["items"][1]["anchors"] == 1
    by_anchors = query(read_side, "broken-links", "--sort", "anchors", "--order", "desc", "--per-group", "1")
    assert [i["url"] for i in by_anchors["items"]] == [gone, missing] and len(
        by_anchors["items"][0]["links"]
    ) == 1

    by_source = query(read_side, "broken-links", "--group", "source")
    assert [(i["source"], i["targets"], i["anchors"], i["urls"]) for i in by_source["items"]] == [
        (home, 1, 1, [gone]),
        (doc_a, 2, 3, [gone, missing]),
        (doc_b, 1, 1, [gone]),
    ]
    by_anchor = query(read_side, "broken-links", "--group", "anchor")
    assert by_anchor["total"] == 5
    assert by_anchor["items"][0] == {
        "source": home,
        "href": "docs/gone.html#section",
        "target": gone,
        "fragment": "section",
        "text": "Gone section",
        "url": gone,
        "status": 404,
        "line": by_anchor["items"][0]["line"],
        "col": by_anchor["items"][0]["col"],
    }
